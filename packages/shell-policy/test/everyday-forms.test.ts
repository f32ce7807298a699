import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand } from "../src/policy/shell-policy.js";
import {
  BARE_INTERPRETERS,
  DATA_READABLE,
  DATA_READER_ASKS,
  GIT_RUNTIME_ATTACKS,
  GIT_RUNTIME_READABLE,
  PYTHON_STILL_REFUSED,
  PYTHON_VERSION_FORMS,
  STDIN_ATTACKS,
} from "./everyday-forms.js";
import { REVIEW_RULES } from "./issue-17-forms.js";
import { AttackReplay, SYSTEM_DIRS } from "./replay-support.js";
import { GIT_SETUP } from "./shell-red-team-3.js";

const REQUIRED = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
const TOOLS = ["/usr/bin/git", "/usr/bin/bash", "/usr/bin/node", "/usr/bin/python3"];
const have = TOOLS.every((p) => existsSync(p)) && existsSync("/usr/lib/git-core/git-push");
if (REQUIRED && !have) throw new Error(`the everyday-forms replay needs ${TOOLS.join(", ")} and git-core`);
const describeReal = have ? describe : describe.skip;

describeReal("standard input handed to an interpreter or shell around the command, replayed for real", () => {
  const replay = new AttackReplay("capgate-everyday-stdin-", { homeApart: true });
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(STDIN_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j",
    async (i, command, attack) => {
      expect(replay.hadEffect(i, attack), `${command} must really push`).toBe(true);
      // Code on standard input is refused with or without configured rules.
      for (const rules of [undefined, REVIEW_RULES]) {
        const d = await checkShellCommand(command, rules);
        expect(d, command).toMatchObject({ decision: "deny", rule: "unresolvable" });
      }
    },
    120_000,
  );
});

describeReal("a configured `git push` rule and words only known at run time, replayed for real", () => {
  const replay = new AttackReplay("capgate-everyday-git-", { homeApart: true });
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(GIT_RUNTIME_ATTACKS.map((a, i) => [i, a.command, a] as const))(
    "%i %j is still git push",
    async (i, command, attack) => {
      expect(replay.hadEffect(i, attack), `${command} must really push`).toBe(true);
      const d = await checkShellCommand(command, REVIEW_RULES);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
    },
    120_000,
  );

  it("the commit message Claude Code writes through a here-document really commits, and is allowed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-everyday-commit-"));
    try {
      const command = GIT_RUNTIME_READABLE[0]!;
      const env = { PATH: SYSTEM_DIRS.join(":"), HOME: dir, GIT_CONFIG_NOSYSTEM: "1" };
      const run = (script: string) =>
        spawnSync("bash", ["--noprofile", "--norc", "-c", script], { cwd: dir, env, encoding: "utf8" });
      expect(
        run(`${GIT_SETUP} && git config user.name t && git config user.email t@t && echo x > f && git add f`)
          .status,
      ).toBe(0);
      expect(run(command).status, command).toBe(0);
      expect(run("git log -1 --format=%s").stdout.trim()).toBe("fix: keep the cache warm");
      expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("run-time words in an argument of another subcommand are not `git push`", () => {
  it.each(GIT_RUNTIME_READABLE)("%j", async (command) => {
    expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
  });

  it.each(['git "$x"', "git $(echo push)", 'git -C "$d" "$sub"', 'rm "$flags" build', 'rm -r "$x"'])(
    "%j still matches the rule where the rule's word may stand",
    async (command) => {
      const d = await checkShellCommand(command, REVIEW_RULES);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
      expect(d.rule).toMatch(/^deny\[/);
    },
  );
});

describeReal("python3 printing its version or help runs no code", () => {
  const replay = new AttackReplay("capgate-everyday-python-", { homeApart: true });
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(PYTHON_VERSION_FORMS.map((c, i) => [i, c] as const))(
    "%i %j is allowed, and pushes nothing",
    async (i, command) => {
      expect(replay.hadEffect(i, { setup: GIT_SETUP, command, effect: "push" }), command).toBe(false);
      expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
      expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
    },
    120_000,
  );
});

describe("interpreters with the input they inherited, and with input the line gives them", () => {
  it.each(BARE_INTERPRETERS)("%j is allowed (it reads what the operator types)", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
    expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
  });

  it.each(PYTHON_STILL_REFUSED)("%j is still refused", async (command) => {
    expect((await checkShellCommand(command, REVIEW_RULES)).decision).not.toBe("allow");
  });
});

describe("the new data programs", () => {
  it.each(DATA_READER_ASKS)("%j is asked about, naming the part", async (command, why) => {
    const d = await checkShellCommand(command, REVIEW_RULES);
    expect(d, command).toMatchObject({ decision: "ask", rule: "unreadable" });
    expect(d.reason).toMatch(why);
  });

  it.each(DATA_READABLE)("%j is read completely", async (command) => {
    expect(await checkShellCommand(command, REVIEW_RULES)).toEqual({ decision: "allow" });
  });
});
