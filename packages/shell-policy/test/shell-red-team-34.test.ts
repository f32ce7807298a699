// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import { AttackReplay, SYSTEM_DIRS } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import { EFFECT_NAMES } from "./shell-red-team-3.js";
import { ROUND_34_ALLOW, ROUND_34_ATTACKS } from "./shell-red-team-34.js";

const REQUIRED = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
const TOOLS = ["/usr/bin/git", "/usr/bin/bash"];
const installed = (program: string) => SYSTEM_DIRS.some((d) => existsSync(join(d, program)));
const have = TOOLS.every((p) => existsSync(p)) && existsSync("/usr/lib/git-core/git-push");
if (REQUIRED && !have) throw new Error(`the stop-34 replay needs ${TOOLS.join(", ")} and git-core`);
const describeReal = have ? describe : describe.skip;

describeReal("outside attack on the hook (stop 34), replayed for real: every form is refused", () => {
  const replay = new AttackReplay("capgate-red-team-34-");
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ROUND_34_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j",
    async (i, command, attack) => {
      // The attack must really work here (or the test proves nothing), unless it needs a
      // program this machine does not have: then only the verdict is checked.
      if (attack.needs === undefined || installed(attack.needs))
        expect(
          replay.hadEffect(i, attack),
          `${command} must have its effect (${EFFECT_NAMES[attack.effect]})`,
        ).toBe(true);
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
