import { describe, expect, it } from "vitest";
import { CapgateError } from "./capgate-error.js";

describe("CapgateError", () => {
  it("carries code, property and cause", () => {
    const cause = new Error("root");
    const e = new CapgateError("invalid_arguments", "bad", { property: "path", cause });
    expect(e.code).toBe("invalid_arguments");
    expect(e.property).toBe("path");
    expect(e.cause).toBe(cause);
    expect(e.toJSON()).toEqual({ code: "invalid_arguments", message: "bad", property: "path" });
  });
  it("isInstance recognises subclasses and copies from other package instances", () => {
    class PolicyError extends CapgateError {}
    expect(CapgateError.isInstance(new PolicyError("policy_denied", "no"))).toBe(true);
    const foreign = { code: "x", message: "y", [Symbol.for("capgate.error")]: true };
    expect(CapgateError.isInstance(foreign)).toBe(true);
    expect(CapgateError.isInstance(new Error("plain"))).toBe(false);
    expect(CapgateError.isInstance({ code: "x" })).toBe(false);
    expect(CapgateError.isInstance(null)).toBe(false);
  });
});
