import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import { AttackReplay, describeReplay, expectEffect } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import { ROUND_17_ALLOW, ROUND_17_ATTACKS, ROUND_17_CONFIGURED_DENY } from "./shell-red-team-17.js";

const describeReal = describeReplay(["/usr/bin/git", "/usr/bin/bash", "/usr/bin/tar"], "the issue-17 replay");

describeReal("outside attack on the issue 17 fixes, replayed for real: every form is denied", () => {
  const replay = new AttackReplay("capgate-red-team-17-");
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ROUND_17_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j",
    async (i, command, attack) => {
      expectEffect(replay, i, attack);
      const d = await checkShellCommand(command, RULES_CONFIG);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
      expect(["deny[0]", "unresolvable"]).toContain(d.rule);
    },
    // Real git repositories and processes: generous on a loaded machine (no timing is asserted).
    120_000,
  );
});

describe("outside attack on the issue 17 fixes: verdicts", () => {
  it.each(ROUND_17_CONFIGURED_DENY)("deny git push: %j", async (command) => {
    const d = await checkShellCommand(command, RULES_CONFIG);
    expect(d.decision, JSON.stringify(d)).toBe("deny");
    expect(["deny[0]", "unresolvable"]).toContain(d.rule);
  });

  it.each(ROUND_17_ALLOW)("still allowed: %j", async (command) => {
    expect(await checkShellCommand(command, RULES_CONFIG)).toEqual({ decision: "allow" });
  });

  it("the reason names what bash reads again or which option runs a command", async () => {
    const declared = await checkShellCommand("declare -a 'a=($(git push))'", RULES_CONFIG);
    expect(declared.reason).toContain("git push");
    const emacs = await checkShellCommand("emacs -execute '(kill-emacs)'", RULES_CONFIG);
    expect(emacs).toMatchObject({ decision: "deny", rule: "unresolvable" });
    expect(emacs.reason).toMatch(/Emacs Lisp/);
  });
});
