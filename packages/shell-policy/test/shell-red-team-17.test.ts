import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import { AttackReplay, SYSTEM_DIRS } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import { EFFECT_NAMES } from "./shell-red-team-3.js";
import { ROUND_17_ALLOW, ROUND_17_ATTACKS, ROUND_17_CONFIGURED_DENY } from "./shell-red-team-17.js";

const REQUIRED = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
const TOOLS = ["/usr/bin/git", "/usr/bin/bash", "/usr/bin/tar"];
const installed = (program: string) => SYSTEM_DIRS.some((d) => existsSync(join(d, program)));
const have = TOOLS.every((p) => existsSync(p)) && existsSync("/usr/lib/git-core/git-push");
if (REQUIRED && !have) throw new Error(`the issue-17 replay needs ${TOOLS.join(", ")} and git-core`);
const describeReal = have ? describe : describe.skip;

describeReal("outside attack on the issue 17 fixes, replayed for real: every form is denied", () => {
  const replay = new AttackReplay("capgate-red-team-17-");
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ROUND_17_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j",
    async (i, command, attack) => {
      // The attack must really work here (or the test proves nothing), unless it needs a
      // program this machine does not have: then only the verdict is checked.
      if (attack.needs === undefined || installed(attack.needs))
        expect(
          replay.hadEffect(i, attack),
          `${command} must have its effect (${EFFECT_NAMES[attack.effect]})`,
        ).toBe(true);
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
