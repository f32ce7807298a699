import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RULES_CONFIG } from "./shell-corpus.js";
import { checkShellCommand } from "./shell-policy.js";
import {
  EFFECT_NAMES,
  RED_TEAM_ALLOW,
  RED_TEAM_ATTACKS,
  RED_TEAM_DENY_OPENER,
  RED_TEAM_DENY_OTHER,
  type RedTeamAttack,
} from "./shell-red-team-3.js";

const REQUIRED = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
const TOOLS = ["/usr/bin/git", "/usr/bin/python3", "/usr/bin/node", "/usr/bin/perl", "/usr/bin/socat"];
/** Programs some attacks use that CI need not have: where one is missing, only the verdict is checked. */
const OPTIONAL = ["make", "sqlite3", "python3.11", "perl5.36.0", "setpriv", "capsh", "cmake"];
const missingOptional = (command: string) =>
  OPTIONAL.some(
    (p) =>
      new RegExp(`(^|[\\s;])${p.replace(/\./g, "\\.")}\\s`).test(command) &&
      !existsSync(`/usr/bin/${p}`) &&
      !existsSync(`/usr/sbin/${p}`),
  );
const have = TOOLS.every((p) => existsSync(p)) && existsSync("/usr/lib/git-core/git-push");
if (REQUIRED && !have) throw new Error(`the red-team replay needs ${TOOLS.join(", ")} and git-core`);
const describeReal = have ? describe : describe.skip;

describeReal("red-team round three, replayed for real: every form that has its effect is refused", () => {
  let root: string;
  let bin: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "capgate-red-team-3-"));
    bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "xdg-open"), '#!/bin/sh\necho ran >> "$MARKER"\ncat > /dev/null\n');
    chmodSync(join(bin, "xdg-open"), 0o755);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function hadEffect(i: number, attack: RedTeamAttack): boolean {
    const dir = join(root, `case-${i}`);
    mkdirSync(dir);
    const marker = join(dir, "..", `ran-${i}`);
    const env = {
      // git-core on PATH as on the red team's machine, so `git-push` resolves.
      PATH: `${bin}:/usr/bin:/bin:/usr/sbin:/sbin:/usr/lib/git-core`,
      HOME: dir,
      MARKER: marker,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      BROWSER: "xdg-open",
    };
    const run = (script: string) =>
      spawnSync("bash", ["--noprofile", "--norc", "-c", script], {
        cwd: dir,
        env,
        timeout: 20_000,
        stdio: ["ignore", "ignore", "pipe"],
        encoding: "utf8",
      });
    if (attack.setup !== "") {
      const s = run(attack.setup);
      expect(s.status, `setup of ${attack.command}: ${s.stderr}`).toBe(0);
    }
    run(attack.command);
    if (attack.effect === "opener") return existsSync(marker);
    if (attack.effect === "delete") return !existsSync(join(dir, "victim"));
    const ref = spawnSync(
      "git",
      ["--git-dir", join(dir, "remote.git"), "rev-parse", "--verify", "-q", "main"],
      {
        env,
        encoding: "utf8",
      },
    );
    return ref.status === 0;
  }

  it.each(RED_TEAM_ATTACKS.map((a, i) => [i, a.effect, a.command, a] as const))(
    "%i (%s) %j",
    async (i, _effect, command, attack) => {
      // Every attack must really work on this machine, or the test proves nothing.
      if (!missingOptional(command))
        expect(hadEffect(i, attack), `${command} must have its effect (${EFFECT_NAMES[attack.effect]})`).toBe(
          true,
        );
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

describe("red-team round three: ordinary braces and globs stay allowed", () => {
  it.each(RED_TEAM_ALLOW)("%j", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
    expect(await checkShellCommand(command, RULES_CONFIG)).toEqual({ decision: "allow" });
  });

  it("a glob that cannot become the rule's word leaves the rule alone", async () => {
    for (const command of ["git log -- src/*.ts", "git show HEAD:{a,b}", "rm -r *.tmp", "git pu[l]l"]) {
      const d = await checkShellCommand(command, RULES_CONFIG);
      expect(d.rule ?? "", command).not.toMatch(/^(deny|ask)\[/);
    }
  });
});
