import { describe, expect, it } from "vitest";
import { BUILTIN_PROFILE_NAMES, profiles } from "./policy.js";

describe("built-in profiles", () => {
  it("are exactly the five of SPEC §5, keyed by name", () => {
    expect(Object.keys(profiles)).toEqual([...BUILTIN_PROFILE_NAMES]);
    expect(BUILTIN_PROFILE_NAMES).toEqual([
      "Orchestrator",
      "Coder",
      "Researcher",
      "ComputerOperator",
      "Verifier",
    ]);
    for (const [key, p] of Object.entries(profiles)) expect(p.name).toBe(key);
  });

  it("preload, budget and worker rights follow the table", () => {
    const table = Object.fromEntries(
      Object.values(profiles).map((p) => [p.name, [p.preload, p.charBudget, p.maySpawnWorkers]]),
    );
    expect(table).toEqual({
      Orchestrator: [[], 24000, true],
      Coder: [["fs", "shell", "git"], 48000, false],
      Researcher: [["web", "browser_panel", "memory"], 48000, false],
      ComputerOperator: [["cua", "browser_panel"], 32000, false],
      Verifier: [["fs", "shell", "git"], 32000, false],
    });
  });

  it("lets only the Orchestrator spawn workers, and it preloads nothing", () => {
    const spawners = Object.values(profiles).filter((p) => p.maySpawnWorkers);
    expect(spawners.map((p) => p.name)).toEqual(["Orchestrator"]);
    expect(profiles.Orchestrator.preload).toEqual([]);
  });

  it("quotes the SPEC's prompt deltas verbatim", () => {
    expect(profiles.Coder.promptDelta).toBe(
      "Inspect code, patch narrowly, run verification, and avoid broad rewrites.",
    );
    expect(profiles.ComputerOperator.promptDelta).toBe(
      "Use CUA only when files, shell, browser, or APIs cannot solve the task directly.",
    );
    expect(profiles.Verifier.promptDelta).toBe(
      "Challenge completion claims and require authoritative acceptance evidence.",
    );
  });

  it("keeps every delta to one sentence of operating instructions, no persona", () => {
    for (const p of Object.values(profiles)) {
      expect(p.promptDelta, p.name).toMatch(/^[A-Z][^.!?]*[.]$/);
      expect(p.promptDelta, p.name).not.toMatch(/\b(you are|act as|persona|role|I am)\b/i);
      expect(p.promptDelta.length, p.name).toBeLessThanOrEqual(200);
    }
    expect(profiles.Orchestrator.promptDelta).toMatch(/\bdelegate\b/);
    expect(profiles.Researcher.promptDelta).toMatch(/\bcite\b/);
  });

  it("are frozen, so no code can widen a policy at run time", () => {
    expect(Object.isFrozen(profiles)).toBe(true);
    expect(Object.isFrozen(profiles.Coder)).toBe(true);
    expect(() => (profiles.Researcher.preload as string[]).push("shell")).toThrow(TypeError);
    expect(() => {
      (profiles.Coder as { maySpawnWorkers: boolean }).maySpawnWorkers = true;
    }).toThrow(TypeError);
    expect(profiles.Researcher.preload).not.toContain("shell");
  });
});
