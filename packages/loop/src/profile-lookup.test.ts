import { profiles } from "@capgate/profiles";
import { describe, expect, it } from "vitest";
import { resolveProfile } from "./profile-lookup.js";

describe("resolveProfile", () => {
  it("finds a profile by name and passes a policy through", () => {
    expect(resolveProfile(profiles, "Coder")).toBe(profiles.Coder);
    expect(resolveProfile(profiles, profiles.Verifier)).toBe(profiles.Verifier);
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf"])(
    "%s is an unknown profile, never an Object.prototype member",
    (name) => {
      expect(() => resolveProfile(profiles, name)).toThrow(
        expect.objectContaining({ code: "unknown_profile", property: "profile" }),
      );
    },
  );

  it("suggests the closest name", () => {
    expect(() => resolveProfile(profiles, "Codr")).toThrow(/Did you mean 'Coder'\?/);
  });
});
