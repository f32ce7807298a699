import { CapgateError } from "@capgate/schema";
import type { BuiltinProfileName } from "./policy.js";

interface Family {
  profile: Exclude<BuiltinProfileName, "Orchestrator">;
  /** Base words; regular inflections are generated (test → tests, tested, testing). */
  words: string[];
  /** Matched exactly as written (irregular forms, agent nouns, names). */
  exact: string[];
  /** Word sequences, each word inflected ("checked that", "pull requests"). */
  phrases: string[][];
}

/**
 * Keyword families, checked in this order: verification before coding (a goal to "test
 * the fix" is a Verifier's job), coding before research, research before GUI work.
 * Words are chosen for precision: "branch", "rust" or "building" would pull research
 * goals ("bank branches", "rust removal", "tallest buildings") into Coder.
 */
const FAMILIES: readonly Family[] = [
  {
    profile: "Verifier",
    words: ["verify", "verification", "validate", "validation", "test", "retest", "unittest", "testcase"],
    exact: [
      "verifier",
      "validator",
      "tester",
      "testers",
      "qa",
      "e2e",
      "assert",
      "asserts",
      "assertion",
      "assertions",
      "acceptance",
      "typecheck",
      "pytest",
      "vitest",
      "jest",
      "mocha",
    ],
    phrases: [
      ["check", "that"],
      ["check", "whether"],
      ["check", "if"],
      ["double", "check"],
      ["make", "sure"],
      ["confirm", "that"],
      ["confirm", "whether"],
    ],
  },
  {
    profile: "Coder",
    words: [
      "code",
      "codebase",
      "implement",
      "implementation",
      "refactor",
      "fix",
      "bug",
      "bugfix",
      "hotfix",
      "debug",
      "build",
      "rebuild",
      "function",
      "module",
      "repository",
      "repo",
      "commit",
      "merge",
      "rebase",
      "patch",
      "program",
      "script",
      "dependency",
      "lint",
      "endpoint",
      "migration",
    ],
    exact: [
      "coder",
      "coders",
      "debugger",
      "compiler",
      "programmer",
      "programmers",
      "built",
      "buggy",
      "git",
      "typescript",
      "javascript",
      "python",
      "golang",
      "java",
      "nodejs",
      "npm",
      "pnpm",
      "linter",
      "src",
      "cli",
      "regex",
      "sql",
      "html",
      "css",
      "readme",
      "changelog",
      "dockerfile",
      "makefile",
      "stacktrace",
      "segfault",
    ],
    phrases: [
      ["pull", "request"],
      ["source", "code"],
      ["stack", "trace"],
      ["node", "js"],
      ["type", "error"],
    ],
  },
  {
    profile: "Researcher",
    words: ["research", "investigate", "lookup", "search", "browse", "cite", "citation", "article", "paper"],
    exact: [
      "researcher",
      "researchers",
      "web",
      "website",
      "websites",
      "webpage",
      "webpages",
      "browser",
      "internet",
      "online",
      "sources",
      "news",
      "latest",
      "wikipedia",
      "google",
      "arxiv",
      "literature",
      "survey",
      "information",
      "facts",
      "url",
      "urls",
      "http",
      "https",
    ],
    phrases: [
      ["find", "out"],
      ["found", "out"],
      ["look", "up"],
      ["look", "into"],
      ["learn", "about"],
    ],
  },
  {
    profile: "ComputerOperator",
    words: ["click", "screen", "screenshot", "window", "drag", "button", "menu", "dialog", "icon", "scroll"],
    exact: [
      "gui",
      "desktop",
      "mouse",
      "keyboard",
      "x11",
      "xorg",
      "xdotool",
      "cua",
      "taskbar",
      "toolbar",
      "checkbox",
      "libreoffice",
      "gimp",
      "vnc",
    ],
    phrases: [["computer", "use"]],
  },
];

/** Inflections that are other words in their own right and must not count. */
const NOT_INFLECTIONS = new Set(["building", "screening", "codes", "testes"]);

/** Regular inflections of an English base word: -s, -es, -ed, -ing, with e-dropping, y→ie and doubling. */
export function inflections(base: string): string[] {
  const out = new Set([base, `${base}s`, `${base}es`, `${base}ed`, `${base}ing`]);
  if (base.endsWith("e")) {
    out.add(`${base}d`);
    out.add(`${base.slice(0, -1)}ing`);
  }
  if (/[^aeiou]y$/.test(base)) {
    out.add(`${base.slice(0, -1)}ies`);
    out.add(`${base.slice(0, -1)}ied`);
  }
  // Short stressed final syllable doubles its consonant: debug → debugged, commit → committing.
  if (/[^aeiou][aeiou][bdgmnprt]$/.test(base)) {
    const last = base.at(-1);
    out.add(`${base}${last}ed`);
    out.add(`${base}${last}ing`);
  }
  for (const w of NOT_INFLECTIONS) if (w !== base) out.delete(w);
  return [...out];
}

interface Compiled {
  profile: Family["profile"];
  words: Map<string, string>;
  phrases: { words: Set<string>[]; text: string }[];
}

const COMPILED: readonly Compiled[] = FAMILIES.map((f) => {
  const words = new Map<string, string>();
  for (const base of f.words) for (const form of inflections(base)) words.set(form, base);
  for (const w of f.exact) words.set(w, w);
  const phrases = f.phrases.map((p) => ({ words: p.map((w) => new Set(inflections(w))), text: p.join(" ") }));
  return { profile: f.profile, words, phrases };
});

/** The goal's words: lowercased letters and digits; everything else separates words. */
function tokenize(goal: string): string[] {
  return (
    goal
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

export interface ProfileInference {
  profile: BuiltinProfileName;
  /** The word or phrase that decided it (its base form), absent for the Orchestrator fallback. */
  matched?: string;
}

/** Which profile a goal suggests and the word that decided it — for traces and `capgate profiles infer`. */
export function explainProfileInference(goal: string): ProfileInference {
  if (typeof goal !== "string") {
    throw new CapgateError("invalid_arguments", `The goal must be a string, got ${typeof goal}.`, {
      property: "goal",
    });
  }
  const tokens = tokenize(goal);
  for (const family of COMPILED) {
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      const word = family.words.get(token);
      if (word !== undefined) return { profile: family.profile, matched: word };
      for (const phrase of family.phrases) {
        if (phrase.words.every((forms, j) => forms.has(tokens[i + j] ?? ""))) {
          return { profile: family.profile, matched: phrase.text };
        }
      }
    }
  }
  return { profile: "Orchestrator" };
}

/**
 * The profile a run starts in when the caller names none. Whole words only, case-insensitive,
 * with regular inflections: "tests", "tested" and "testing" are test; "latest", "contest" and
 * "attestation" are not. Verifier is checked first, then Coder, Researcher and
 * ComputerOperator; anything else is Orchestrator.
 */
export function inferProfileFromGoal(goal: string): BuiltinProfileName {
  return explainProfileInference(goal).profile;
}
