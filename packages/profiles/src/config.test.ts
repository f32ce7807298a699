import { CapgateError, validate } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import {
  getProfile,
  InvalidProfileError,
  type ProfileOverride,
  profileNames,
  profilesConfigSchema,
  resolveProfiles,
  validateProfile,
} from "./config.js";
import { profiles } from "./policy.js";

function problemsOf(fn: () => unknown): { property: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidProfileError);
    const e = error as InvalidProfileError;
    expect(e.code).toBe("invalid_profile");
    expect(CapgateError.isInstance(e)).toBe(true);
    expect(e.property).toBe(e.problems[0]?.property);
    return [...e.problems];
  }
  throw new Error("expected InvalidProfileError");
}

const resolveAny = (v: unknown) => () => resolveProfiles(v as Record<string, ProfileOverride>);

describe("resolveProfiles", () => {
  it("returns the built-ins unchanged without overrides", () => {
    const set = resolveProfiles();
    expect(set).toEqual(profiles);
    expect(resolveProfiles({})).toEqual(profiles);
    expect(set.Coder).toBe(profiles.Coder);
  });

  it("overrides only the settings given, leaving the built-ins themselves untouched", () => {
    const set = resolveProfiles({ Coder: { charBudget: 64000 }, Researcher: { preload: ["web"] } });
    expect(set.Coder).toEqual({ ...profiles.Coder, charBudget: 64000 });
    expect(set.Researcher?.preload).toEqual(["web"]);
    expect(profiles.Coder.charBudget).toBe(48000);
    expect(Object.isFrozen(set)).toBe(true);
    expect(Object.isFrozen(set.Coder)).toBe(true);
  });

  it("adds new profiles after the built-ins, with defaults for preload and maySpawnWorkers", () => {
    const set = resolveProfiles({
      Reviewer: { promptDelta: "Read the diff and report problems with evidence.", charBudget: 40000 },
    });
    expect(profileNames(set)).toEqual([
      "Orchestrator",
      "Coder",
      "Researcher",
      "ComputerOperator",
      "Verifier",
      "Reviewer",
    ]);
    expect(set.Reviewer).toEqual({
      name: "Reviewer",
      promptDelta: "Read the diff and report problems with evidence.",
      preload: [],
      charBudget: 40000,
      maySpawnWorkers: false,
    });
  });

  it("names the bad property: profiles.Coder.charBudget must be a positive integer", () => {
    for (const bad of [0, -5, 1.5, "48000", null, Number.NaN]) {
      const [p, ...rest] = problemsOf(resolveAny({ Coder: { charBudget: bad } }));
      expect(rest).toEqual([]);
      expect(p?.property).toBe("profiles.Coder.charBudget");
      expect(p?.message).toMatch(/^profiles\.Coder\.charBudget must be a positive integer/);
    }
    const [big] = problemsOf(resolveAny({ Coder: { charBudget: 1e12 } }));
    expect(big?.message).toMatch(/must be at most 10000000/);
  });

  it("reports every problem at once, each by path", () => {
    const problems = problemsOf(
      resolveAny({
        Coder: { charbudget: 1, preload: ["fs", "fs", "Shell", 3], maySpawnWorkers: "no" },
        Researcher: { promptDelta: "  " },
        "bad name": {},
        Verifier: [],
      }),
    );
    expect(problems.map((p) => p.property)).toEqual([
      "profiles.Coder.charbudget",
      "profiles.Coder.preload[1]",
      "profiles.Coder.preload[2]",
      "profiles.Coder.preload[3]",
      "profiles.Coder.maySpawnWorkers",
      "profiles.Researcher.promptDelta",
      "profiles.bad name",
      "profiles.Verifier",
    ]);
    expect(problems[0]?.message).toContain("did you mean charBudget?");
    expect(problems[1]?.message).toContain('repeats "fs"');
  });

  it("requires promptDelta and charBudget for a new profile", () => {
    const problems = problemsOf(resolveAny({ Reviewer: { preload: ["git"] } }));
    expect(problems.map((p) => p.property)).toEqual([
      "profiles.Reviewer.promptDelta",
      "profiles.Reviewer.charBudget",
    ]);
    expect(problems[0]?.message).toContain("required for the new profile");
  });

  it("refuses a name that differs from its key, reserved names and a non-object section", () => {
    expect(problemsOf(resolveAny({ Coder: { name: "Hacker" } }))[0]?.property).toBe("profiles.Coder.name");
    expect(problemsOf(resolveAny({ constructor: { promptDelta: "x", charBudget: 1 } }))[0]?.property).toBe(
      "profiles.constructor",
    );
    expect(problemsOf(resolveAny([]))[0]?.property).toBe("profiles");
    expect(problemsOf(resolveAny("Coder"))[0]?.message).toMatch(/must be an object keyed by profile name/);
  });

  it("checks preload names against the registered capabilities when told them", () => {
    const capabilities = ["fs", "shell", "git", "web", "mcp:github"];
    expect(
      resolveProfiles({ Coder: { preload: ["fs", "mcp:github"] } }, { capabilities }).Coder?.preload,
    ).toEqual(["fs", "mcp:github"]);
    const [p] = problemsOf(() => resolveProfiles({ Coder: { preload: ["fs", "shel"] } }, { capabilities }));
    expect(p).toEqual({
      property: "profiles.Coder.preload[1]",
      message: 'profiles.Coder.preload[1] names unknown capability "shel"; did you mean "shell"?',
    });
  });

  it("uses the caller's path prefix", () => {
    const [p] = problemsOf(() => resolveProfiles({ Coder: { charBudget: 0 } }, { at: "config.profiles" }));
    expect(p?.property).toBe("config.profiles.Coder.charBudget");
  });
});

describe("validateProfile", () => {
  it("accepts a complete policy and returns a frozen copy", () => {
    const input = { ...profiles.Verifier, preload: ["fs"] };
    const p = validateProfile(input);
    expect(p).toEqual(input);
    expect(p).not.toBe(input);
    expect(Object.isFrozen(p.preload)).toBe(true);
  });

  it("requires every setting", () => {
    const problems = problemsOf(() => validateProfile({ name: "X" }));
    expect(problems.map((p) => p.property)).toEqual([
      "profiles.X.promptDelta",
      "profiles.X.preload",
      "profiles.X.charBudget",
      "profiles.X.maySpawnWorkers",
    ]);
    expect(problemsOf(() => validateProfile(null))[0]?.property).toBe("profiles.?");
  });
});

describe("getProfile and profileNames", () => {
  it("lists the built-in names in SPEC order", () => {
    expect(profileNames()).toEqual(["Orchestrator", "Coder", "Researcher", "ComputerOperator", "Verifier"]);
  });

  it("finds a profile by exact name, or case-insensitively", () => {
    expect(getProfile("Coder")).toBe(profiles.Coder);
    expect(getProfile("computeroperator")).toBe(profiles.ComputerOperator);
  });

  it("suggests the closest name for an unknown one", () => {
    let caught: unknown;
    try {
      getProfile("Codr");
    } catch (error) {
      caught = error;
    }
    const e = caught as CapgateError;
    expect(e.code).toBe("unknown_profile");
    expect(e.property).toBe("profile");
    expect(e.message).toContain("Did you mean 'Coder'?");
    expect(e.message).toContain(
      "Known profiles: Orchestrator, Coder, Researcher, ComputerOperator, Verifier.",
    );
  });

  it("never returns prototype members", () => {
    expect(() => getProfile("constructor")).toThrow(/Unknown profile/);
    expect(() => getProfile("__proto__")).toThrow(/Unknown profile/);
    expect(() => getProfile("toString")).toThrow(/Unknown profile/);
  });

  it("looks names up in a resolved set", () => {
    const set = resolveProfiles({ Reviewer: { promptDelta: "Review.", charBudget: 1000 } });
    expect(getProfile("Reviewer", set).charBudget).toBe(1000);
    expect(() => getProfile("Reviewer")).toThrow(/Unknown profile "Reviewer"/);
  });
});

describe("profilesConfigSchema", () => {
  // The published schema and resolveProfiles must agree on what a config may say.
  const samples: [unknown, boolean][] = [
    [{}, true],
    [{ Coder: { charBudget: 64000 } }, true],
    [{ Reviewer: { promptDelta: "Review.", charBudget: 1000, preload: ["git", "mcp:github"] } }, true],
    [{ Coder: { charBudget: 0 } }, false],
    [{ Coder: { charbudget: 1 } }, false],
    [{ Coder: { preload: ["fs", "fs"] } }, false],
    [{ Coder: { preload: ["Bad Name"] } }, false],
    [{ Reviewer: { preload: ["git"] } }, false],
    [{ "bad name": { promptDelta: "x", charBudget: 1 } }, false],
    [{ constructor: { promptDelta: "x", charBudget: 1 } }, false],
    [{ Coder: { maySpawnWorkers: "yes" } }, false],
  ];
  it.each(samples)("agrees with resolveProfiles on %j", (sample, ok) => {
    expect(validate(profilesConfigSchema, sample).ok).toBe(ok);
    let resolved = true;
    try {
      resolveProfiles(sample as Record<string, ProfileOverride>);
    } catch {
      resolved = false;
    }
    expect(resolved).toBe(ok);
  });
});
