/**
 * A profile is a runtime policy, not a personality: an operating instruction for the
 * prompt, the capabilities to preload, the context budget and whether workers may be
 * spawned. Nothing else.
 */
export interface ProfilePolicy {
  readonly name: string;
  /** One sentence appended to the system prompt: how to work, not who to be. */
  readonly promptDelta: string;
  /** Capabilities loaded when the profile is applied (after the router is cleared). */
  readonly preload: readonly string[];
  /** Most characters a context packet may have under this profile. */
  readonly charBudget: number;
  /** Whether workers.spawn is allowed. */
  readonly maySpawnWorkers: boolean;
}

export type BuiltinProfileName = "Orchestrator" | "Coder" | "Researcher" | "ComputerOperator" | "Verifier";

/** The built-in names, in the order of SPEC §5. */
export const BUILTIN_PROFILE_NAMES: readonly BuiltinProfileName[] = Object.freeze([
  "Orchestrator",
  "Coder",
  "Researcher",
  "ComputerOperator",
  "Verifier",
]);

/** A set of profiles keyed by name: the built-ins, or the result of resolveProfiles. */
export type ProfileSet = Readonly<Record<string, ProfilePolicy>>;

function policy(p: ProfilePolicy): ProfilePolicy {
  return Object.freeze({ ...p, preload: Object.freeze([...p.preload]) });
}

/**
 * The five built-in profiles, frozen: a policy must not change because some code mutated
 * a shared object. Only the Orchestrator may spawn workers, and it preloads nothing — the
 * profile that delegates does not also get a preloaded blast radius.
 */
export const profiles: Readonly<Record<BuiltinProfileName, ProfilePolicy>> = Object.freeze({
  Orchestrator: policy({
    name: "Orchestrator",
    promptDelta:
      "Plan the work, search and load only the capabilities a step needs, and delegate self-contained sub-goals to workers with their acceptance checks.",
    preload: [],
    charBudget: 24000,
    maySpawnWorkers: true,
  }),
  Coder: policy({
    name: "Coder",
    promptDelta: "Inspect code, patch narrowly, run verification, and avoid broad rewrites.",
    preload: ["fs", "shell", "git"],
    charBudget: 48000,
    maySpawnWorkers: false,
  }),
  Researcher: policy({
    name: "Researcher",
    promptDelta:
      "Gather evidence from primary sources, cite the URL of every source you rely on, and mark what you could not confirm.",
    preload: ["web", "browser_panel", "memory"],
    charBudget: 48000,
    maySpawnWorkers: false,
  }),
  ComputerOperator: policy({
    name: "ComputerOperator",
    promptDelta: "Use CUA only when files, shell, browser, or APIs cannot solve the task directly.",
    preload: ["cua", "browser_panel"],
    charBudget: 32000,
    maySpawnWorkers: false,
  }),
  Verifier: policy({
    name: "Verifier",
    promptDelta: "Challenge completion claims and require authoritative acceptance evidence.",
    preload: ["fs", "shell", "git"],
    charBudget: 32000,
    maySpawnWorkers: false,
  }),
});
