// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import { AttackReplay, describeReplay, expectEffect } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import { ROUND_34_ALLOW, ROUND_34_ATTACKS } from "./shell-red-team-34.js";

const describeReal = describeReplay(["/usr/bin/git", "/usr/bin/bash"], "the stop-34 replay");

describeReal("outside attack on the hook (stop 34), replayed for real: every form is refused", () => {
  const replay = new AttackReplay("capgate-red-team-34-");
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ROUND_34_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j",
    async (i, command, attack) => {
      expectEffect(replay, i, attack);
      const configured = await checkShellCommand(command, RULES_CONFIG);
      expect(configured.decision, JSON.stringify(configured)).toBe(attack.verdict);
      // Without configured rules an opener is still denied, and so is what cannot be read.
      if (attack.effect === "opener") {
        const plain = await checkShellCommand(command);
        expect(plain.decision, JSON.stringify(plain)).toBe("deny");
      }
    },
    // Real git repositories and processes: generous on a loaded machine (no timing is asserted).
    120_000,
  );
});

describe("outside attack on the hook (stop 34): verdicts", () => {
  it.each(ROUND_34_ALLOW)("still allowed: %j", async (command) => {
    expect(await checkShellCommand(command, RULES_CONFIG)).toEqual({ decision: "allow" });
  });

  it("the reasons name the variable a builtin sets and the program that reads it", async () => {
    const read = await checkShellCommand("read -r GIT_SSH_COMMAND < x");
    expect(read).toMatchObject({ decision: "deny", rule: "unresolvable" });
    expect(read.reason).toContain("GIT_SSH_COMMAND");
    const nameref = await checkShellCommand("declare -n r=EDITOR");
    expect(nameref.reason).toContain("EDITOR");
    const expansion = await checkShellCommand(": ${PROMPT_COMMAND:=x}");
    expect(expansion).toMatchObject({ decision: "deny", rule: "unresolvable" });
    expect(expansion.reason).toContain("PROMPT_COMMAND");
  });
});
