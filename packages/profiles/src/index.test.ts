import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// The public surface, pinned: a change here is an API decision and shows up in review.
describe("@capgate/profiles exports", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "BUILTIN_PROFILE_NAMES",
      "InvalidProfileError",
      "applyProfile",
      "explainProfileInference",
      "getProfile",
      "inferProfileFromGoal",
      "profileNames",
      "profiles",
      "profilesConfigSchema",
      "resolveProfiles",
      "validateProfile",
    ]);
  });
});
