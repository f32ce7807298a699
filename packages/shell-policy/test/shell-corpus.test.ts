import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getopt } from "../src/parse/shell-getopt.js";
import { literalWord } from "../src/parse/shell-words.js";
import { checkShellCommand, createShellPolicy } from "../src/policy/shell-policy.js";
import { BROWSER_PANEL_HINT } from "../src/policy/shell-rules.js";
import { WRAPPERS } from "../src/programs/shell-wrappers.js";
import {
  BASH_ORACLE_FORMS,
  CONFIGURED_ASK,
  CONFIGURED_DENY,
  CORPUS_ALLOW,
  CORPUS_DENY,
  INTERPRETER_ORACLE_FORMS,
  RULES_CONFIG,
} from "./shell-corpus.js";

describe("corpus: every form meant to be denied is denied", () => {
  it.each(CORPUS_DENY.map((c) => [c.group, c.expect, c.command]))(
    "%s (%s): %j",
    async (_g, expected, command) => {
      const d = await checkShellCommand(command);
      expect(d.decision, JSON.stringify(d)).toBe("deny");
      expect(d.reason?.length ?? 0).toBeGreaterThan(20);
      if (expected === "opener") {
        expect(d.rule?.startsWith("gui."), JSON.stringify(d)).toBe(true);
        expect(d.reason).toContain(BROWSER_PANEL_HINT);
      } else {
        expect(["unresolvable", "parse-error"]).toContain(d.rule);
        expect(d.reason).toMatch(/cannot|only known at run time|would|not one capgate models/);
      }
    },
  );
});

describe("corpus: configured rules hold under every form", () => {
  it.each(CONFIGURED_DENY)("deny git push: %j", async (command) => {
    const d = await checkShellCommand(command, RULES_CONFIG);
    expect(d, command).toMatchObject({ decision: "deny" });
    // The configured rule is named unless a structural denial came first.
    expect(["deny[0]", "unresolvable"]).toContain(d.rule);
  });

  it.each(CONFIGURED_ASK)("ask rm -rf: %j", async (command) => {
    const d = await checkShellCommand(command, RULES_CONFIG);
    expect(d, command).toMatchObject({ decision: "ask", rule: "ask[0]" });
  });

  it("leaves other subcommands and options alone", async () => {
    for (const command of [
      "git status",
      "git log --grep push",
      "git pull",
      "rm -r x",
      "rm -f x",
      "git remote -v",
    ]) {
      expect((await checkShellCommand(command, RULES_CONFIG)).decision, command).toBe("allow");
    }
  });
});

describe("corpus: harmless look-alikes stay allowed", () => {
  it("has at least 40 of them", () => expect(CORPUS_ALLOW.length).toBeGreaterThanOrEqual(40));
  it.each(CORPUS_ALLOW)("%j", async (command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
  });
});

describe("wrapper option tables", () => {
  it("every entry carries examples both ways, and they were checked at load", async () => {
    await createShellPolicy();
    for (const [name, spec] of Object.entries(WRAPPERS)) {
      expect(spec.mustMatch.length, name).toBeGreaterThan(0);
      expect(spec.mustNotMatch.length, name).toBeGreaterThan(0);
    }
  });

  it("getopt: unique prefixes, ambiguity, optional and attached values, permutation", () => {
    const words = (line: string) => line.split(" ").map(literalWord);
    const env = WRAPPERS.env!.options;
    const r1 = getopt(words("env --chd /tmp ls -l"), 1, env, "env");
    expect(r1.ok && r1.operands).toEqual([3, 4]);
    const r2 = getopt(words("env --i ls"), 1, env, "env");
    expect(r2.ok === false && r2.reason).toMatch(/ambiguous \(--ignore-environment, --ignore-signal\)/);
    const r3 = getopt(words("env --block-signal ls"), 1, env, "env");
    expect(r3.ok && r3.operands).toEqual([2]); // optional value: only attached
    const su = WRAPPERS.su!.options;
    const r4 = getopt(words("su alice -c x --pty"), 1, su, "su");
    expect(r4.ok && r4.operands).toEqual([1]);
    expect(r4.ok && r4.options.map((o) => o.written)).toEqual(["-c", "--pty"]);
    const r5 = getopt(words("su alice -c x"), 1, su, "su", true);
    expect(r5.ok && r5.operands).toEqual([1, 2, 3]); // POSIXLY_CORRECT: no permutation
    const r6 = getopt(
      [literalWord("timeout"), { raw: "$t", value: undefined, splits: false, glob: false }],
      1,
      WRAPPERS.timeout!.options,
      "timeout",
    );
    expect(r6.ok).toBe(false);
  });
});

/**
 * The real tools as the oracle: each form runs for real (no policy) with a fake xdg-open first
 * on PATH that records that it ran. Whenever the real wrapper did run it, the policy must deny
 * the form as an opener. So the option tables cannot drift from the tools installed here
 * without this failing.
 */
describe("wrapper tables agree with the real tools", () => {
  let dir: string;
  let marker: string;
  let env: NodeJS.ProcessEnv;
  const FORMS = [
    "env xdg-open x",
    "env --chd=/tmp xdg-open x",
    "env --ch /tmp xdg-open x",
    'env -iC/tmp PATH="$PATH" xdg-open x',
    "env -S'xdg-open x'",
    "env -S'-i PATH=\"$PATH\" xdg-open x'",
    'env - PATH="$PATH" xdg-open x',
    "env -u HOME -- xdg-open x",
    "env --default-signal xdg-open x",
    "env --default-signal=INT xdg-open x",
    "timeout 5 xdg-open x",
    "timeout --sig=KILL 5 xdg-open x",
    "timeout --k=1 --s KILL 5 xdg-open x",
    "timeout -sKILL -- 5 xdg-open x",
    "timeout --fore 5 xdg-open x",
    "nice xdg-open x",
    "nice --adj=5 xdg-open x",
    "nice --adj 5 xdg-open x",
    "nice -5 xdg-open x",
    "nice -n5 -- xdg-open x",
    "nohup xdg-open x",
    "nohup -- xdg-open x",
    "stdbuf -oL xdg-open x",
    "stdbuf --outp=L --err 0 xdg-open x",
    "setsid -w xdg-open x",
    "setsid --wa xdg-open x",
    "flock /tmp/capgate-oracle.lock xdg-open x",
    "flock -n /tmp/capgate-oracle.lock -c 'xdg-open x'",
    "flock --time 3 /tmp/capgate-oracle.lock --command 'xdg-open x'",
    "taskset 1 xdg-open x",
    "taskset -c 0 xdg-open x",
    "taskset --cpu 0 xdg-open x",
    "ionice -c3 xdg-open x",
    "ionice --class=3 xdg-open x",
    "ionice --cla 3 xdg-open x",
    "chrt -o 0 xdg-open x",
    "chrt --oth 0 xdg-open x",
    "prlimit --nofile=1024 xdg-open x",
    "prlimit --nof=1024 -- xdg-open x",
    "setarch x86_64 xdg-open x",
    "setarch x86_64 -R xdg-open x",
    "setarch -R xdg-open x",
    "setarch x86_64 --addr-no xdg-open x",
    "linux64 xdg-open x",
    "script -q -c 'xdg-open x' /dev/null",
    "script -q /dev/null -c 'xdg-open x'",
    "script /dev/null -q --comm 'xdg-open x'",
    "xargs xdg-open <<< x",
    "xargs -I{} xdg-open {} <<< x",
    "xargs --max-a=1 xdg-open <<< x",
    "find . -maxdepth 0 -exec xdg-open {} \\;",
    "exec xdg-open x",
    "exec -a name xdg-open x",
    "command xdg-open x",
    "command -p -- xdg-open x",
    "builtin eval 'xdg-open x'",
    "eval -- xdg-open x",
    "time -p xdg-open x",
    "trap 'xdg-open x' EXIT",
    "bash -c 'xdg-open x'",
    "bash --norc -c -- 'xdg-open x'",
    "bash <<< 'xdg-open x'",
    "sh -s <<< 'xdg-open x'",
    "su root -c 'xdg-open x'",
    "su -c 'xdg-open x' root",
    "su root -- -c 'xdg-open x'",
    "su - root --comm='xdg-open x'",
    "runuser -u root -- xdg-open x",
    "runuser root -c 'xdg-open x'",
    "sg root 'xdg-open x'",
    "sg root -c 'xdg-open x'",
    "unshare -r xdg-open x",
  ];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "capgate-oracle-"));
    const bin = join(dir, "bin");
    mkdirSync(bin);
    marker = join(dir, "ran.log");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho ran >> '${marker}'\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`, HOME: dir, LANG: "C" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function runsOpener(line: string): boolean {
    rmSync(marker, { force: true });
    // su/runuser reset PATH for the target user; give root's login the fake too.
    const withPath = line.replace(/xdg-open/g, `${join(dir, "bin")}/xdg-open`);
    const command = /^(su|runuser|sg) /.test(line) ? withPath : line;
    spawnSync("bash", ["--noprofile", "--norc", "-c", command], {
      cwd: dir,
      env,
      timeout: 10_000,
      stdio: ["ignore", "ignore", "ignore"],
    });
    return existsSync(marker) && readFileSync(marker, "utf8").includes("ran");
  }

  const ran: string[] = [];
  it.each(FORMS)("%s: if the real tool runs the opener, the policy denies it as one", async (line) => {
    if (!runsOpener(line)) return;
    ran.push(line);
    const d = await checkShellCommand(line);
    expect(d.decision === "deny" && d.rule?.startsWith("gui."), JSON.stringify(d)).toBe(true);
  });

  it("really ran most forms (or the oracle proves nothing)", () => {
    expect(ran.length).toBeGreaterThan(FORMS.length * 0.75);
  });
});

describe("bash as the oracle", () => {
  let dir: string;
  let bin: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "capgate-bash-oracle-"));
    bin = join(dir, "bin");
    mkdirSync(bin);
    // Each run gets its own marker, so a background child of one form cannot mark another.
    writeFileSync(join(bin, "xdg-open"), '#!/bin/sh\necho ran >> "$MARKER"\n');
    chmodSync(join(bin, "xdg-open"), 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let ran = 0;
  it.each(BASH_ORACLE_FORMS.map((f, i) => [i, f] as const))(
    "%i %j: denied whenever bash runs the opener",
    async (i, form) => {
      const marker = join(dir, `ran-${i}`);
      spawnSync("bash", ["--noprofile", "--norc", "-c", form], {
        cwd: dir,
        env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, MARKER: marker },
        timeout: 3_000,
        stdio: ["ignore", "ignore", "ignore"],
      });
      const d = await checkShellCommand(form);
      if (existsSync(marker)) {
        ran++;
        expect(d.decision, JSON.stringify(d)).toBe("deny");
      }
    },
  );

  it("bash really ran the opener in most forms", () => {
    expect(ran).toBeGreaterThan(BASH_ORACLE_FORMS.length * 0.6);
  });
});

describe("the interpreters as the oracle", () => {
  const REQUIRED = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
  const have = ["/usr/bin/python3", "/usr/bin/node", "/usr/bin/perl"].every((p) => existsSync(p));
  const describeReal = have || REQUIRED ? describe : describe.skip;
  describeReal("python3, node and perl", () => {
    let dir: string;
    let bin: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "capgate-interp-oracle-"));
      bin = join(dir, "bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "xdg-open"), '#!/bin/sh\necho ran >> "$MARKER"\n');
      chmodSync(join(bin, "xdg-open"), 0o755);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it.each(INTERPRETER_ORACLE_FORMS.map((f, i) => [i, f] as const))(
      "%i %j: really runs the opener, and is denied",
      async (i, form) => {
        const marker = join(dir, `ran-${i}`);
        spawnSync("bash", ["--noprofile", "--norc", "-c", form], {
          cwd: dir,
          env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, MARKER: marker },
          timeout: 20_000,
          stdio: ["ignore", "ignore", "ignore"],
        });
        expect(existsSync(marker), "the form must really run the opener").toBe(true);
        const d = await checkShellCommand(form);
        expect(d.decision, JSON.stringify(d)).toBe("deny");
      },
    );
  });
});
