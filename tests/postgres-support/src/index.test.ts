import { describe, expect, it } from "vitest";
import * as entry from "./index.js";
import * as vitestEntry from "./vitest.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(entry).sort()).toEqual(["findPostgresBin", "startTestCluster"]);
    expect(Object.keys(vitestEntry).sort()).toEqual(["describePg", "useCluster"]);
  });
});
