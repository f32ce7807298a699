import { CapgateError, closestMatch, type JsonSchema } from "@capgate/schema";
import { BUILTIN_PROFILE_NAMES, type ProfilePolicy, type ProfileSet, profiles } from "./policy.js";

/** What a config file may say about one profile: any subset for a built-in, more for a new one. */
export interface ProfileOverride {
  name?: string;
  promptDelta?: string;
  preload?: readonly string[];
  charBudget?: number;
  maySpawnWorkers?: boolean;
}

export interface ProfileCheckOptions {
  /** Prefix of the property paths in errors (default `profiles`), e.g. `config.profiles`. */
  at?: string;
  /** Registered capability names; when given, every preload entry must be one of them. */
  capabilities?: readonly string[];
}

export interface ProfileProblem {
  /** Path of the bad value, e.g. `profiles.Coder.charBudget`. */
  property: string;
  message: string;
}

/** One or more profile settings are invalid. Code `invalid_profile`; `problems` lists them all. */
export class InvalidProfileError extends CapgateError {
  readonly problems: readonly ProfileProblem[];
  constructor(problems: readonly ProfileProblem[]) {
    const first = problems[0];
    super("invalid_profile", problems.map((p) => p.message).join("; "), { property: first?.property });
    this.name = "InvalidProfileError";
    this.problems = problems;
  }
}

const KEYS = ["name", "promptDelta", "preload", "charBudget", "maySpawnWorkers"] as const;
const NAME_RE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
// Reserved so a profile set can be a plain object safely.
const RESERVED_NAMES = new Set(["constructor", "prototype", "toString", "valueOf", "hasOwnProperty"]);
const CAPABILITY_RE = /^(?:[a-z][a-z0-9_]*|mcp:[^\s/]+)$/;
export const MAX_CHAR_BUDGET = 10_000_000;
const MAX_PROMPT_DELTA = 2000;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const show = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

function checkName(name: unknown, path: string, problems: ProfileProblem[]): void {
  if (typeof name !== "string" || !NAME_RE.test(name) || RESERVED_NAMES.has(name)) {
    problems.push({
      property: path,
      message: `${path} must be a profile name (a letter, then letters, digits, '_' or '-'; at most 64), got ${show(name)}`,
    });
  }
}

/** Every problem with a complete policy `value`, with paths under `path`. */
function policyProblems(value: unknown, path: string, options: ProfileCheckOptions): ProfileProblem[] {
  const problems: ProfileProblem[] = [];
  if (!isPlainObject(value)) {
    return [
      {
        property: path,
        message: `${path} must be an object with ${KEYS.join(", ")}; got ${show(value)}`,
      },
    ];
  }
  for (const key of Object.keys(value)) {
    if ((KEYS as readonly string[]).includes(key)) continue;
    const guess = closestMatch(key, KEYS);
    problems.push({
      property: `${path}.${key}`,
      message: `${path}.${key} is not a profile setting${guess ? `; did you mean ${guess}?` : ""} (allowed: ${KEYS.join(", ")})`,
    });
  }
  checkName(value.name, `${path}.name`, problems);
  const { promptDelta, preload, charBudget, maySpawnWorkers } = value;
  if (typeof promptDelta !== "string" || promptDelta.trim() === "" || promptDelta.length > MAX_PROMPT_DELTA) {
    problems.push({
      property: `${path}.promptDelta`,
      message: `${path}.promptDelta must be a non-empty string of at most ${MAX_PROMPT_DELTA} characters (one operating instruction), got ${show(promptDelta)}`,
    });
  }
  if (!Array.isArray(preload)) {
    problems.push({
      property: `${path}.preload`,
      message: `${path}.preload must be an array of capability names, e.g. ["fs", "shell"], got ${show(preload)}`,
    });
  } else {
    const seen = new Set<string>();
    preload.forEach((cap: unknown, i) => {
      const at = `${path}.preload[${i}]`;
      if (typeof cap !== "string" || !CAPABILITY_RE.test(cap)) {
        problems.push({
          property: at,
          message: `${at} must be a capability name like "fs" or "mcp:github", got ${show(cap)}`,
        });
        return;
      }
      if (seen.has(cap)) problems.push({ property: at, message: `${at} repeats "${cap}"` });
      seen.add(cap);
      if (options.capabilities && !options.capabilities.includes(cap)) {
        const guess = closestMatch(cap, options.capabilities);
        problems.push({
          property: at,
          message: `${at} names unknown capability "${cap}"${guess ? `; did you mean "${guess}"?` : ""}`,
        });
      }
    });
  }
  if (typeof charBudget !== "number" || !Number.isSafeInteger(charBudget) || charBudget <= 0) {
    problems.push({
      property: `${path}.charBudget`,
      message: `${path}.charBudget must be a positive integer (characters), got ${show(charBudget)}`,
    });
  } else if (charBudget > MAX_CHAR_BUDGET) {
    problems.push({
      property: `${path}.charBudget`,
      message: `${path}.charBudget must be at most ${MAX_CHAR_BUDGET}, got ${charBudget}`,
    });
  }
  if (typeof maySpawnWorkers !== "boolean") {
    problems.push({
      property: `${path}.maySpawnWorkers`,
      message: `${path}.maySpawnWorkers must be true or false, got ${show(maySpawnWorkers)}`,
    });
  }
  return problems;
}

function freezePolicy(v: Record<string, unknown>): ProfilePolicy {
  return Object.freeze({
    name: v.name as string,
    promptDelta: v.promptDelta as string,
    preload: Object.freeze([...(v.preload as string[])]),
    charBudget: v.charBudget as number,
    maySpawnWorkers: v.maySpawnWorkers as boolean,
  });
}

/**
 * Check a complete profile policy (all five settings) and return a frozen copy. Throws an
 * InvalidProfileError naming every bad property: `profiles.Coder.charBudget must be a
 * positive integer (characters), got -5`.
 */
export function validateProfile(value: unknown, options: ProfileCheckOptions = {}): ProfilePolicy {
  const name = isPlainObject(value) && typeof value.name === "string" ? value.name : "?";
  const problems = policyProblems(value, `${options.at ?? "profiles"}.${name}`, options);
  if (problems.length > 0) throw new InvalidProfileError(problems);
  return freezePolicy(value as Record<string, unknown>);
}

/**
 * The built-in profiles with a config file's `profiles` section applied: an entry for a
 * built-in name overrides just the settings it gives; an entry for a new name adds a
 * profile and must give at least `promptDelta` and `charBudget` (`preload` defaults to
 * [], `maySpawnWorkers` to false). Every problem is reported at once, by property path.
 */
export function resolveProfiles(
  overrides: Readonly<Record<string, ProfileOverride>> | undefined = {},
  options: ProfileCheckOptions = {},
): ProfileSet {
  const at = options.at ?? "profiles";
  if (!isPlainObject(overrides)) {
    throw new InvalidProfileError([
      {
        property: at,
        message: `${at} must be an object keyed by profile name, e.g. {"Coder": {"charBudget": 64000}}, got ${show(overrides)}`,
      },
    ]);
  }
  const problems: ProfileProblem[] = [];
  const out: Record<string, ProfilePolicy> = {};
  for (const name of BUILTIN_PROFILE_NAMES) out[name] = profiles[name];
  for (const [name, override] of Object.entries(overrides)) {
    const path = `${at}.${name}`;
    const before = problems.length;
    checkName(name, path, problems);
    if (!isPlainObject(override)) {
      problems.push({
        property: path,
        message: `${path} must be an object of profile settings (${KEYS.join(", ")}), got ${show(override)}`,
      });
    }
    if (problems.length > before) continue;
    const o = override as Record<string, unknown>;
    if (o.name !== undefined && o.name !== name) {
      problems.push({
        property: `${path}.name`,
        message: `${path}.name must match its key "${name}" (or be left out), got ${show(o.name)}`,
      });
      continue;
    }
    const base = Object.hasOwn(out, name) ? out[name] : undefined;
    if (!base) {
      for (const required of ["promptDelta", "charBudget"] as const) {
        if (o[required] === undefined)
          problems.push({
            property: `${path}.${required}`,
            message: `${path}.${required} is required for the new profile "${name}"`,
          });
      }
      if (problems.length > before) continue;
    }
    const merged = { preload: [], maySpawnWorkers: false, ...base, ...o, name };
    const found = policyProblems(merged, path, options);
    if (found.length > 0) problems.push(...found);
    else out[name] = freezePolicy(merged);
  }
  if (problems.length > 0) throw new InvalidProfileError(problems);
  return Object.freeze(out);
}

/** Profile names of a set (default: the built-ins), built-ins first in SPEC order, then additions. */
export function profileNames(set: ProfileSet = profiles): string[] {
  return Object.keys(set);
}

/**
 * The profile called `name` (default set: the built-ins). Names match exactly, or
 * case-insensitively when that is unambiguous (`--profile coder`); otherwise an
 * `unknown_profile` error suggests the closest name.
 */
export function getProfile(name: string, set: ProfileSet = profiles): ProfilePolicy {
  if (typeof name === "string" && Object.hasOwn(set, name)) return set[name]!;
  const names = Object.keys(set);
  if (typeof name === "string") {
    const folded = names.filter((n) => n.toLowerCase() === name.toLowerCase());
    if (folded.length === 1) return set[folded[0]!]!;
  }
  const guess = typeof name === "string" ? closestMatch(name, names) : undefined;
  throw new CapgateError(
    "unknown_profile",
    `Unknown profile ${show(name)}.${guess ? ` Did you mean '${guess}'?` : ""} Known profiles: ${names.join(", ")}.`,
    { property: "profile" },
  );
}

const settingSchemas = {
  name: { type: "string", pattern: NAME_RE.source, description: "Must equal the key when given." },
  promptDelta: {
    type: "string",
    minLength: 1,
    maxLength: MAX_PROMPT_DELTA,
    description: "One operating instruction added to the system prompt.",
  },
  preload: {
    type: "array",
    uniqueItems: true,
    items: { type: "string", pattern: CAPABILITY_RE.source },
    description: "Capabilities loaded (after clearing) when the profile is applied.",
  },
  charBudget: {
    type: "integer",
    minimum: 1,
    maximum: MAX_CHAR_BUDGET,
    description: "Most characters of a context packet.",
  },
  maySpawnWorkers: { type: "boolean", description: "Whether workers.spawn is allowed." },
} satisfies Record<(typeof KEYS)[number], JsonSchema>;

/**
 * JSON Schema of a config file's `profiles` section, for the published config schema:
 * built-in names take any subset of settings, new names need promptDelta and charBudget.
 * resolveProfiles applies the same rules (and a few a schema cannot express).
 */
export const profilesConfigSchema: JsonSchema = {
  type: "object",
  description: "Overrides of the built-in profiles and additional profiles, keyed by profile name.",
  propertyNames: { pattern: NAME_RE.source, not: { enum: [...RESERVED_NAMES] } },
  properties: Object.fromEntries(
    BUILTIN_PROFILE_NAMES.map((n) => [
      n,
      { type: "object", additionalProperties: false, properties: settingSchemas },
    ]),
  ),
  additionalProperties: {
    type: "object",
    additionalProperties: false,
    properties: settingSchemas,
    required: ["promptDelta", "charBudget"],
  },
};
