import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createShellPolicy } from "../src/shell-policy.js";
import { REVIEW_RULES } from "./issue-17-forms.js";

/**
 * The price of asking whatever capgate cannot read completely: on an everyday corpus (every
 * example of the tldr pages' pages/common, test/corpus/tldr-common.txt — source, commit and
 * licence in its header), how many commands that no rule matches are asked about anyway?
 * Commands the built-in rules deny, and those a configured rule matches, are left out: the
 * question is only about commands that would have run before.
 */
const corpus = readFileSync(new URL("./corpus/tldr-common.txt", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => {
    const tab = line.indexOf("\t");
    return { page: line.slice(0, tab), command: line.slice(tab + 1) };
  });

/** The measured figures (docs/shell-policy.md §12): a change that asks much more should be a decision, not a surprise. */
const MAX_FALSE_ASK_RATE = 0.85;
const MAX_FALSE_ASK_RATE_GIT = 0.45;

interface Tally {
  considered: number;
  asked: number;
}

describe("false asks on an everyday corpus (tldr pages/common)", () => {
  it("measures how many commands no rule matches are asked about as unreadable", async () => {
    const plain = await createShellPolicy();
    const ruled = await createShellPolicy(REVIEW_RULES);
    const all: Tally = { considered: 0, asked: 0 };
    const git: Tally = { considered: 0, asked: 0 };
    const reasons = new Map<string, number>();
    for (const { page, command } of corpus) {
      if (plain.check(command).decision !== "allow") continue;
      const matched = ruled.matches(command);
      if (matched.some((id) => /^(deny|ask)\[/.test(id))) continue;
      const d = ruled.check(command);
      const tallies = page === "git" || page.startsWith("git-") ? [all, git] : [all];
      for (const t of tallies) t.considered++;
      if (d.decision === "allow") continue;
      expect(d.rule, `${command}: ${JSON.stringify(d)}`).toBe("unreadable");
      for (const t of tallies) t.asked++;
      const why = /cannot be read completely: (.*?)\. With deny/s.exec(d.reason ?? "")?.[1] ?? "";
      const kind = /is not a program capgate knows/.test(why)
        ? "unknown program"
        : /is not a (git|npm|docker|kubectl|cargo|go|gh) command/.test(why)
          ? "unknown subcommand"
          : /general-purpose language|read its program/.test(why)
            ? "interpreter code"
            : /is set to|only known at run time, and a program/.test(why)
              ? "environment value"
              : "a reader's reason";
      reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
    }
    const rate = (t: Tally) => t.asked / t.considered;
    const pct = (t: Tally) => `${(100 * rate(t)).toFixed(1)}% (${t.asked} of ${t.considered})`;
    // The figures, for docs/shell-policy.md and the report (no timing is involved).
    console.log(`false-ask rate, all of pages/common: ${pct(all)}`);
    console.log(`false-ask rate, git pages: ${pct(git)}`);
    console.log(`asked because: ${JSON.stringify(Object.fromEntries(reasons))}`);
    expect(all.considered).toBeGreaterThan(15_000);
    expect(rate(all)).toBeLessThanOrEqual(MAX_FALSE_ASK_RATE);
    expect(rate(git)).toBeLessThanOrEqual(MAX_FALSE_ASK_RATE_GIT);
  }, 600_000);
});
