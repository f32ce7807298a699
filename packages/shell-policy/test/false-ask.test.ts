import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createShellPolicy, type ShellPolicy } from "../src/policy/shell-policy.js";
import { REVIEW_RULES } from "./issue-17-forms.js";

/**
 * The price of asking whatever capgate cannot read completely: on everyday corpora, how many
 * commands that no rule matches are asked about anyway? Commands the built-in rules deny, and
 * those a configured rule matches, are left out: the question is only about commands that
 * would have run before.
 *
 * - tldr: every example of the tldr pages' pages/common (test/corpus/tldr-common.txt — source,
 *   commit and licence in its header): each program documented once, so it measures breadth;
 *   counted per command line and per page (a page is asked about when any of its examples is).
 * - histories: public shell histories (test/corpus/history-sources.tsv), every typed command
 *   as often as it was typed, so it measures what a user meets. Their lines are not
 *   redistributable: scripts/extract-history-corpus.mjs builds test/corpus/local/histories.txt
 *   from git copies of the listed repositories, and that part runs where the file exists.
 */
function readCorpus(url: URL): { page: string; command: string }[] {
  return readFileSync(url, "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const tab = line.indexOf("\t");
      return { page: line.slice(0, tab), command: line.slice(tab + 1) };
    });
}

const TLDR = new URL("./corpus/tldr-common.txt", import.meta.url);
const HISTORIES = new URL("./corpus/local/histories.txt", import.meta.url);

/** The measured figures (docs/shell-policy.md §12): a change that asks much more should be a decision, not a surprise. */
const MAX_FALSE_ASK_RATE = 0.8;
const MAX_FALSE_ASK_RATE_GIT = 0.4;
const MAX_FALSE_ASK_RATE_HISTORIES = 0.33;

interface Tally {
  considered: number;
  asked: number;
}

interface Measured {
  all: Tally;
  git: Tally;
  pages: Tally;
  reasons: Record<string, number>;
  programs: [string, number][];
}

async function measure(corpus: { page: string; command: string }[]): Promise<Measured> {
  const plain: ShellPolicy = await createShellPolicy();
  const ruled: ShellPolicy = await createShellPolicy(REVIEW_RULES);
  const all: Tally = { considered: 0, asked: 0 };
  const git: Tally = { considered: 0, asked: 0 };
  const pages = new Map<string, boolean>();
  const reasons = new Map<string, number>();
  const programs = new Map<string, number>();
  for (const { page, command } of corpus) {
    if (plain.check(command).decision !== "allow") continue;
    const matched = ruled.matches(command);
    if (matched.some((id) => /^(deny|ask)\[/.test(id))) continue;
    const d = ruled.check(command);
    const tallies = page === "git" || page.startsWith("git-") ? [all, git] : [all];
    for (const t of tallies) t.considered++;
    pages.set(page, pages.get(page) === true || d.decision !== "allow");
    if (d.decision === "allow") continue;
    expect(d.rule, `${command}: ${JSON.stringify(d)}`).toBe("unreadable");
    for (const t of tallies) t.asked++;
    const why = /cannot be read completely: (.*?)\. With deny/s.exec(d.reason ?? "")?.[1] ?? "";
    const unknown = /^`([^`]+)` is not a program capgate knows/.exec(why);
    const kind = unknown
      ? "unknown program"
      : /is not a (git|npm|docker|kubectl|cargo|go|gh) command/.test(why)
        ? "unknown subcommand"
        : /general-purpose language|read its program/.test(why)
          ? "interpreter code"
          : /is set to|only known at run time, and a program/.test(why)
            ? "environment value"
            : "a reader's reason";
    reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
    if (unknown) programs.set(unknown[1]!, (programs.get(unknown[1]!) ?? 0) + 1);
  }
  const asked = [...pages.values()].filter(Boolean).length;
  return {
    all,
    git,
    pages: { considered: pages.size, asked },
    reasons: Object.fromEntries(reasons),
    programs: [...programs.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15),
  };
}

const rate = (t: Tally) => t.asked / t.considered;
const pct = (t: Tally) => `${(100 * rate(t)).toFixed(1)}% (${t.asked} of ${t.considered})`;

describe("false asks on everyday corpora", () => {
  it("tldr pages/common: commands no rule matches that are asked about as unreadable", async () => {
    const m = await measure(readCorpus(TLDR));
    // The figures, for docs/shell-policy.md and the report (no timing is involved).
    console.log(`false-ask rate, all of pages/common: ${pct(m.all)}`);
    console.log(`false-ask rate, pages/common per page: ${pct(m.pages)}`);
    console.log(`false-ask rate, git pages: ${pct(m.git)}`);
    console.log(`asked because: ${JSON.stringify(m.reasons)}`);
    expect(m.all.considered).toBeGreaterThan(15_000);
    expect(rate(m.all)).toBeLessThanOrEqual(MAX_FALSE_ASK_RATE);
    expect(rate(m.git)).toBeLessThanOrEqual(MAX_FALSE_ASK_RATE_GIT);
  }, 600_000);

  it.skipIf(!existsSync(HISTORIES))(
    "public shell histories (built locally): commands as often as they were typed",
    async () => {
      const m = await measure(readCorpus(HISTORIES));
      console.log(`false-ask rate, shell histories: ${pct(m.all)}`);
      console.log(`asked because: ${JSON.stringify(m.reasons)}`);
      console.log(`most asked unknown programs: ${JSON.stringify(m.programs)}`);
      expect(m.all.considered).toBeGreaterThan(50_000);
      expect(rate(m.all)).toBeLessThanOrEqual(MAX_FALSE_ASK_RATE_HISTORIES);
    },
    600_000,
  );
});
