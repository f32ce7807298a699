import { describe, expect, it } from "vitest";
import { decide, needs, partStatus, shellForTests, systemTestsRequired } from "./system-parts.js";

const here = { part: "git", available: true } as const;
const gone = {
  part: "bwrap",
  available: false,
  missing: "bubblewrap (/usr/bin/bwrap) is not installed",
} as const;

describe("system parts", () => {
  it("runs when every part is here, skips with the reason when one is missing, and fails when they are required", () => {
    expect(decide([here], false)).toEqual({ skip: false, note: "", missing: [] });
    expect(decide([here], true)).toEqual({ skip: false, note: "", missing: [] });
    const skipped = decide([here, gone], false);
    expect(skipped.skip).toBe(true);
    expect(skipped.note).toBe(" (skipped: bubblewrap (/usr/bin/bwrap) is not installed)");
    expect(() => decide([here, gone], true)).toThrow(
      /CAPGATE_REQUIRE_SYSTEM_TESTS is set, so these tests must run, but bubblewrap \(\/usr\/bin\/bwrap\) is not installed/,
    );
  });

  it("reads CAPGATE_REQUIRE_SYSTEM_TESTS: set and not empty or 0", () => {
    expect(systemTestsRequired({})).toBe(false);
    expect(systemTestsRequired({ CAPGATE_REQUIRE_SYSTEM_TESTS: "" })).toBe(false);
    expect(systemTestsRequired({ CAPGATE_REQUIRE_SYSTEM_TESTS: "0" })).toBe(false);
    expect(systemTestsRequired({ CAPGATE_REQUIRE_SYSTEM_TESTS: "1" })).toBe(true);
  });

  it("answers for this machine consistently: a part needs and shellForTests agree with its status", () => {
    // Node runs these tests, so the answer about a part this machine lacks must be a skip, not a crash.
    const bwrap = partStatus("bwrap");
    expect(needs(["bwrap"], {}).skip).toBe(!bwrap.available);
    expect(shellForTests({})).toEqual(bwrap.available ? {} : { sandbox: "off" });
    // Required: the sandbox stays on (and the tests that use it fail if it cannot start).
    expect(shellForTests({ CAPGATE_REQUIRE_SYSTEM_TESTS: "1" })).toEqual({});
    if (!bwrap.available) expect(bwrap.missing).toMatch(/bwrap/);
  });
});
