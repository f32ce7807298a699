import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import { AttackReplay, describeReplay } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import {
  EFFECT_NAMES,
  RED_TEAM_ALLOW,
  RED_TEAM_ATTACKS,
  RED_TEAM_DENY_OPENER,
  RED_TEAM_DENY_OTHER,
} from "./shell-red-team-3.js";

/** Programs some attacks use that CI need not have: where one is missing, only the verdict is checked. */
const OPTIONAL = ["make", "sqlite3", "python3.11", "perl5.36.0", "setpriv", "capsh", "cmake"];
const missingOptional = (command: string) =>
  OPTIONAL.some(
    (p) =>
      new RegExp(`(^|[\\s;])${p.replace(/\./g, "\\.")}\\s`).test(command) &&
      !existsSync(`/usr/bin/${p}`) &&
      !existsSync(`/usr/sbin/${p}`),
  );
const describeReal = describeReplay(
  ["/usr/bin/git", "/usr/bin/python3", "/usr/bin/node", "/usr/bin/perl", "/usr/bin/socat"],
  "the red-team replay",
);

describeReal("red-team round three, replayed for real: every form that has its effect is refused", () => {
  const replay = new AttackReplay("capgate-red-team-3-");
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(RED_TEAM_ATTACKS.map((a, i) => [i, a.effect, a.command, a] as const))(
    "%i (%s) %j",
    async (i, _effect, command, attack) => {
      // Every attack must really work on this machine, or the test proves nothing.
      if (!missingOptional(command))
        expect(
          replay.hadEffect(i, attack),
          `${command} must have its effect (${EFFECT_NAMES[attack.effect]})`,
        ).toBe(true);
      const d = await checkShellCommand(command, RULES_CONFIG);
      if (attack.effect === "delete") expect(d, command).toMatchObject({ decision: "ask", rule: "ask[0]" });
      else expect(d.decision, JSON.stringify(d)).toBe("deny");
      if (attack.effect === "push") expect(["deny[0]", "unresolvable", "parse-error"]).toContain(d.rule);
    },
    // Real git repositories and processes: generous on a loaded machine (no timing is asserted).
    120_000,
  );
});

describe("red-team round three: openers are named as openers without a configuration", () => {
  it.each(RED_TEAM_ATTACKS.filter((a) => a.effect === "opener").map((a) => a.command))(
    "%j",
    async (command) => {
      const d = await checkShellCommand(command);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
      expect(d.reason?.length ?? 0).toBeGreaterThan(20);
    },
  );

  it.each(RED_TEAM_DENY_OPENER)("%j is an opener", async (command) => {
    const d = await checkShellCommand(command);
    expect(d.decision, JSON.stringify(d)).toBe("deny");
    expect(d.rule ?? "", JSON.stringify(d)).toMatch(/^gui\./);
  });

  it.each(RED_TEAM_DENY_OTHER)("%j is unresolvable", async (command) => {
    const d = await checkShellCommand(command);
    expect(d, command).toMatchObject({ decision: "deny", rule: "unresolvable" });
  });
});

/**
 * Look-alikes that run code or programs capgate cannot read completely (interpreter code, a
 * database shell, socat): under configured rules they are asked about as unreadable
 * (docs/shell-policy.md §12) — never denied, never matched by a rule.
 */
const UNREADABLE_UNDER_RULES = new Set([
  `node -e 'console.log("\\u00e9")'`,
  `python3 -c 'print("a\\tb\\n")'`,
  "socat - TCP:127.0.0.1:8080",
  "sqlite3 db 'select 1;'",
  "sqlite3 db .tables",
]);

describe("red-team round three: ordinary braces and globs stay allowed", () => {
  it.each(RED_TEAM_ALLOW)("%j", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
    const ruled = await checkShellCommand(command, RULES_CONFIG);
    if (UNREADABLE_UNDER_RULES.has(command))
      expect(ruled).toMatchObject({ decision: "ask", rule: "unreadable" });
    else expect(ruled).toEqual({ decision: "allow" });
  });

  it("every look-alike expected to be asked about is in the list", () => {
    for (const command of UNREADABLE_UNDER_RULES) expect(RED_TEAM_ALLOW, command).toContain(command);
  });

  it("a glob that cannot become the rule's word leaves the rule alone", async () => {
    for (const command of ["git log -- src/*.ts", "git show HEAD:{a,b}", "rm -r *.tmp", "git pu[l]l"]) {
      const d = await checkShellCommand(command, RULES_CONFIG);
      expect(d.rule ?? "", command).not.toMatch(/^(deny|ask)\[/);
    }
  });
});
