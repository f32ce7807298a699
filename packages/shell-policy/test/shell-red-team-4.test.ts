import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShellCommand, createShellPolicy } from "../src/policy/shell-policy.js";
import { BROWSER_PANEL_HINT } from "../src/policy/shell-rules.js";
import { WRAPPERS } from "../src/programs/shell-wrappers.js";
import { AttackReplay, describeReplay, expectEffect, SYSTEM_DIRS } from "./replay-support.js";
import { RULES_CONFIG } from "./shell-corpus.js";
import {
  ROUND_FOUR_ALLOW,
  ROUND_FOUR_ATTACKS,
  ROUND_FOUR_CONFIGURED_ASK,
  ROUND_FOUR_CONFIGURED_DENY,
  ROUND_FOUR_DENY_OPENER,
  ROUND_FOUR_DENY_OTHER,
} from "./shell-red-team-4.js";

const describeReal = describeReplay(
  ["/usr/bin/git", "/usr/bin/bash", "/usr/bin/dash"],
  "the round-four replay",
);

describeReal("red-team round four, replayed for real: every form that has its effect is refused", () => {
  const replay = new AttackReplay("capgate-red-team-4-", { homeApart: true });
  beforeAll(() => replay.open());
  afterAll(() => replay.close());

  it.each(ROUND_FOUR_ATTACKS.map((a, i) => [i, a.effect, a.command, a] as const))(
    "%i (%s) %j",
    async (i, _effect, command, attack) => {
      expectEffect(replay, i, attack);
      const d = await checkShellCommand(command, RULES_CONFIG);
      if (attack.effect === "delete") expect(d, command).toMatchObject({ decision: "ask", rule: "ask[0]" });
      else expect(d.decision, JSON.stringify(d)).toBe("deny");
      if (attack.effect === "push") expect(["deny[0]", "unresolvable"]).toContain(d.rule);
    },
    // Real git repositories and processes: generous on a loaded machine (no timing is asserted).
    120_000,
  );
});

describe("red-team round four: verdicts without a configuration", () => {
  it.each(ROUND_FOUR_ATTACKS.filter((a) => a.effect === "opener").map((a) => a.command))(
    "%j is denied",
    async (command) => {
      const d = await checkShellCommand(command);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
      expect(d.reason?.length ?? 0).toBeGreaterThan(20);
    },
  );

  it.each(ROUND_FOUR_DENY_OPENER)("%j is an opener, with the browser_panel hint", async (command) => {
    const d = await checkShellCommand(command);
    expect(d.decision, JSON.stringify(d)).toBe("deny");
    expect(d.rule ?? "", JSON.stringify(d)).toMatch(/^gui\./);
    expect(d.reason).toContain(BROWSER_PANEL_HINT);
  });

  it.each(ROUND_FOUR_DENY_OTHER)("%j is unresolvable", async (command) => {
    const d = await checkShellCommand(command);
    expect(d, command).toMatchObject({ decision: "deny", rule: "unresolvable" });
  });

  it("jobs -x and the rc-file forms name what they run", async () => {
    const jobs = await checkShellCommand("jobs -x xdg-open http://x");
    expect(jobs).toMatchObject({ decision: "deny", rule: "gui.xdg-open" });
    expect(jobs.reason).toContain(BROWSER_PANEL_HINT);
    const rcfile = await checkShellCommand("bash --rcfile <(echo x) -ic :");
    expect(rcfile.reason).toMatch(/startup file/);
    const home = await checkShellCommand("HOME=. bash -i -c 'echo hi'");
    expect(home.reason).toMatch(/startup files/);
  });
});

describe("red-team round four: configured rules", () => {
  it.each(ROUND_FOUR_CONFIGURED_DENY)("deny git push: %j", async (command) => {
    const d = await checkShellCommand(command, RULES_CONFIG);
    expect(d, command).toMatchObject({ decision: "deny" });
    expect(["deny[0]", "unresolvable"]).toContain(d.rule);
  });

  it.each(ROUND_FOUR_CONFIGURED_ASK)("ask rm -rf: %j", async (command) => {
    expect(await checkShellCommand(command, RULES_CONFIG)).toMatchObject({ decision: "ask", rule: "ask[0]" });
  });

  it("the anywhere match reads separate words only, the program by basename", async () => {
    const policy = await createShellPolicy({ deny: [{ prefix: ["git", "push"] }] });
    for (const command of [
      "someunknownwrapper --flag git push origin",
      "someunknownwrapper --flag /usr/bin/git push origin",
      "someunknownwrapper git -c user.name=x push",
      "tldr git push",
    ])
      expect(policy.check(command).rule, command).toBe("deny[0]");
    for (const command of [
      'git commit -m "git push later"',
      'grep -r "git push" docs',
      "echo 'git push'",
      "echo git pull push",
      "echo git",
      'echo git "$x"',
      "echo legit push",
    ])
      expect(policy.check(command), command).toEqual({ decision: "allow" });
  });

  it("a one-word rule and an option rule hold anywhere too", async () => {
    const policy = await createShellPolicy({
      deny: [{ prefix: ["curl"] }],
      ask: [{ prefix: ["rm", "-rf"] }],
    });
    expect(policy.check("someunknownwrapper -q curl https://example.com").rule).toBe("deny[0]");
    expect(policy.check("someunknownwrapper rm -r -f build").rule).toBe("ask[0]");
    // A wrapper capgate does not know is asked about (§12), but it is no match for the rule.
    expect(policy.check("someunknownwrapper rm -r build")).toMatchObject({
      decision: "ask",
      rule: "unreadable",
    });
    expect(policy.check("rm -r build")).toEqual({ decision: "allow" });
    expect(policy.check("echo 'curl https://example.com'")).toEqual({ decision: "allow" });
  });
});

/**
 * Look-alikes that run code or programs capgate cannot read completely (interpreter code, a
 * database shell, a program it does not know): under configured rules they are asked about
 * as unreadable (docs/shell-policy.md §12) — never denied, never matched by a rule.
 */
const UNREADABLE_UNDER_RULES = new Set(["gdb -batch -ex 'info registers' prog"]);

describe("red-team round four: harmless look-alikes stay allowed", () => {
  it.each(ROUND_FOUR_ALLOW)("%j", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
    const ruled = await checkShellCommand(command, RULES_CONFIG);
    if (UNREADABLE_UNDER_RULES.has(command))
      expect(ruled).toMatchObject({ decision: "ask", rule: "unreadable" });
    else expect(ruled).toEqual({ decision: "allow" });
  });

  it("every look-alike expected to be asked about is in the list", () => {
    for (const command of UNREADABLE_UNDER_RULES) expect(ROUND_FOUR_ALLOW, command).toContain(command);
  });
});

/**
 * The round-four table entries against the tools installed here, as shell-corpus.test.ts
 * does for the older ones: whenever the real tool ran the opener, the policy must have
 * denied the form as an opener. Tools this machine lacks are skipped.
 */
describe("round-four wrapper tables agree with the real tools", () => {
  const FORMS = [
    "eatmydata xdg-open x",
    "eatmydata -- xdg-open x",
    "faketime '2020-01-01' xdg-open x",
    "faketime -m -f '+1d' xdg-open x",
    "faketime --exclude-monotonic '2020-01-01' xdg-open x",
    "torsocks xdg-open x",
    "torsocks -q -P 9050 xdg-open x",
    "proxychains4 xdg-open x",
    "proxychains4 -q xdg-open x",
    "numactl -a xdg-open x",
    "numactl --all -- xdg-open x",
    "nocache xdg-open x",
    "nocache -n 2 xdg-open x",
    "chpst xdg-open x",
    "chpst -v -n 1 xdg-open x",
    "cpulimit -f -l 50 xdg-open x",
    "cpulimit -f -l 50 -- xdg-open x",
    "echo f | entr -zn xdg-open x",
    "echo f | entr -zns 'xdg-open x'",
    "setuidgid root xdg-open x",
    "envuidgid root xdg-open x",
    "pgrphack xdg-open x",
    "setlock -n lock xdg-open x",
    "softlimit -m 100000000 xdg-open x",
    "bwrap --dev-bind / / xdg-open x",
    "bwrap --dev-bind / / --chdir / -- xdg-open x",
    "jobs -x xdg-open x",
    "jobs -rx -- xdg-open x",
  ];
  let dir: string;
  let marker: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "capgate-oracle-4-"));
    const bin = join(dir, "bin");
    mkdirSync(bin);
    marker = join(dir, "ran.log");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho ran >> '${marker}'\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    writeFileSync(join(dir, "f"), "f\n");
    env = { PATH: `${bin}:${SYSTEM_DIRS.join(":")}`, HOME: dir, LANG: "C" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(FORMS)("%s: if the real tool runs the opener, the policy denies it as one", async (line) => {
    rmSync(marker, { force: true });
    spawnSync("bash", ["--noprofile", "--norc", "-c", line], {
      cwd: dir,
      env,
      timeout: 10_000,
      stdio: ["ignore", "ignore", "ignore"],
    });
    if (!existsSync(marker)) return;
    const d = await checkShellCommand(line);
    expect(d.decision === "deny" && d.rule?.startsWith("gui."), JSON.stringify(d)).toBe(true);
  });

  it("every new table entry carries examples both ways", async () => {
    await createShellPolicy();
    for (const name of [
      "eatmydata",
      "proot",
      "faketime",
      "torsocks",
      "proxychains4",
      "numactl",
      "rlwrap",
      "nocache",
      "chpst",
      "cpulimit",
      "catchsegv",
      "entr",
      "setuidgid",
      "envuidgid",
      "pgrphack",
      "setlock",
      "softlimit",
    ]) {
      expect(WRAPPERS[name]?.mustMatch.length ?? 0, name).toBeGreaterThan(0);
      expect(WRAPPERS[name]?.mustNotMatch.length ?? 0, name).toBeGreaterThan(0);
    }
  });
});
