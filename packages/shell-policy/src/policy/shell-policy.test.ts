import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BackgroundProcesses,
  type RunShellOptions,
  runProcess,
  runShell as runShellWith,
  shellCommandPolicy,
  shellPolicyCheck,
} from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import { shellForTests } from "@capgate/test-system-parts";
import { minimalEnv } from "@capgate/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MUST_ALLOW, MUST_DENY, MUST_DENY_UNPARSEABLE } from "../../test/shell-bypass-cases.js";
import { shellQuote } from "../parse/shell-quote.js";
import { checkBuiltinExamples, checkShellCommand, createShellPolicy } from "./shell-policy.js";
import { BUILTIN_SHELL_RULES } from "./shell-rules.js";

/**
 * The tools runner with this package's policy as its check — how every capgate host runs a
 * shell string; without bubblewrap (and not required) the commands run with the sandbox off.
 */
const runShell = (options: Omit<RunShellOptions, "check">) =>
  runShellWith({ ...options, policy: { ...shellForTests(), ...options.policy }, check: checkShellCommand });

/** Fake GUI openers first on PATH: each appends its name to a marker file if it ever runs. */
const FAKES = [
  "xdg-open",
  "XDG-OPEN",
  "open",
  "gio",
  "osascript",
  "sensible-browser",
  "x-www-browser",
  "www-browser",
  "google-chrome",
  "chromium",
  "chromium-browser",
  "firefox",
  "safari",
  "microsoft-edge",
  "brave-browser",
  "wslview",
  "cmd",
  "cmd.exe",
  "powershell",
  "python",
  "python3",
  "o",
];

let dir: string;
let marker: string;
let env: Record<string, string | undefined>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "capgate-shell-"));
  const bin = join(dir, "fake-bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "ws"));
  marker = join(dir, "opened.log");
  for (const name of FAKES) {
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${marker}'\n`);
    chmodSync(file, 0o755);
  }
  // Copies under ./ and ../bin so relative-path forms would hit a fake too.
  writeFileSync(join(dir, "ws", "xdg-open"), `#!/bin/sh\necho "./xdg-open" >> '${marker}'\n`);
  chmodSync(join(dir, "ws", "xdg-open"), 0o755);
  env = { ...minimalEnv(), PATH: `${bin}:${process.env.PATH}` };
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the fake openers", () => {
  it("really write the marker when run without the policy (so the tests below can fail)", async () => {
    await runProcess({
      file: "/bin/sh",
      args: ["-c", "xdg-open https://example.com"],
      cwd: join(dir, "ws"),
      env,
    });
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
  });
});

describe("checkShellCommand: GUI openers are denied in every position", () => {
  it.each(MUST_DENY.map((c) => [c.group, c.command]))("%s: %j", async (_group, command) => {
    const d = await checkShellCommand(command);
    expect(d.decision).toBe("deny");
    expect(d.rule === "unresolvable" || d.rule?.startsWith("gui.")).toBe(true);
    if (d.rule?.startsWith("gui."))
      expect(d.reason).toContain("Use browser_panel.open to open web pages (never the shell)");
  });

  it("names the deciding rule", async () => {
    expect((await checkShellCommand("true && /usr/bin/xdg-open x")).rule).toBe("gui.xdg-open");
    expect((await checkShellCommand("open -a Safari https://example.com")).rule).toBe("gui.open");
    expect((await checkShellCommand("python3 -m webbrowser x")).rule).toBe("gui.python-webbrowser");
    expect((await checkShellCommand("c=xdg-open; $c x")).rule).toBe("unresolvable");
  });

  it("denies unparseable input with the parser's message", async () => {
    for (const command of MUST_DENY_UNPARSEABLE) {
      const d = await checkShellCommand(command);
      expect(d).toMatchObject({ decision: "deny", rule: "parse-error" });
      expect(d.reason).toMatch(/cannot be parsed .*tree-sitter-bash: (syntax error|nested)/);
    }
  });

  it("always decides, whatever the input", async () => {
    const odd = [
      "",
      "   ",
      "#",
      ";;",
      "&",
      "|",
      "a=b",
      "$((",
      "${",
      "}",
      "fi",
      "esac",
      "a\\",
      "\\",
      "\n\n",
      "((((",
      "<<",
      "`",
      "'\"",
      "\u00e9\u{1F600}",
      "x\u0000dg-open",
    ];
    for (const command of odd) {
      const d = await checkShellCommand(command);
      expect(["allow", "deny"]).toContain(d.decision);
    }
    expect((await checkShellCommand("xdg-open\u0000 x")).decision).toBe("deny");
  });

  it("denies over-long command lines without parsing them", async () => {
    const d = await checkShellCommand(`echo ${"x".repeat(70_000)}`);
    expect(d).toMatchObject({ decision: "deny", rule: "unresolvable" });
  });
});

describe("checkShellCommand: ordinary commands stay allowed", () => {
  it.each(MUST_ALLOW.map((c) => [c.group, c.command]))("%s: %j", async (_group, command) => {
    expect(await checkShellCommand(command)).toEqual({ decision: "allow" });
  });
});

describe("runShell", () => {
  it.each(MUST_DENY.map((c) => [c.group, c.command]))(
    "refuses and runs nothing — %s: %j",
    async (_group, command) => {
      const e = await runShell({ command, cwd: join(dir, "ws"), env, timeoutMs: 5000 }).catch(
        (x: unknown) => x,
      );
      expect(CapgateError.isInstance(e) && e.code).toBe("policy_denied");
      expect((e as CapgateError).property).toBe("command");
      expect(existsSync(marker)).toBe(false);
    },
  );

  it("runs ordinary commands that mention open", async () => {
    const ws = join(dir, "ws");
    writeFileSync(join(ws, "open.txt"), "the open file\n");
    const cat = await runShell({ command: "cat open.txt", cwd: ws, env });
    expect(cat.stdout).toBe("the open file\n");
    const echo = await runShell({ command: "echo open; echo xdg-open", cwd: ws, env });
    expect(echo.stdout).toBe("open\nxdg-open\n");
    const grep = await runShell({ command: "grep -c open open.txt", cwd: ws, env });
    expect(grep.stdout).toBe("1\n");
    const ssl = await runShell({ command: 'printf "%s\\n" "open the door"', cwd: ws, env });
    expect(ssl.stdout).toBe("open the door\n");
    expect(existsSync(marker)).toBe(false);
  });
});

describe("BackgroundProcesses.startShell with this policy", () => {
  it("refuses an opener behind nohup and starts nothing; ordinary commands start", async () => {
    const bg = new BackgroundProcesses();
    const ws = join(dir, "ws");
    try {
      await expect(
        bg.startShell({
          command: "nohup xdg-open https://example.com",
          check: checkShellCommand,
          cwd: ws,
          env,
        }),
      ).rejects.toMatchObject({ code: "policy_denied", property: "command" });
      expect(bg.list()).toEqual([]);
      const ok = await bg.startShell({
        command: "echo served",
        check: checkShellCommand,
        cwd: ws,
        env,
        policy: shellForTests(),
      });
      for (let i = 0; i < 400 && bg.output(ok.id).text !== "served\n"; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(bg.output(ok.id).text).toBe("served\n");
      expect(existsSync(marker)).toBe(false);
    } finally {
      await bg.stopAll();
    }
  });
});

describe("shellQuote", () => {
  it("round-trips argv through a real shell and keeps openers visible to the policy", async () => {
    const words = ["printf", "%s\\n", "plain", "two words", "it's", "$HOME", "`x`", "", "a\nb", "*"];
    const r = await runShell({ command: shellQuote(words), cwd: join(dir, "ws"), env });
    expect(r.stdout).toBe(`${words.slice(2).join("\n")}\n`);
    expect(
      (await checkShellCommand(shellQuote(["npx", "-y", "xdg-open", "https://example.com"]))).decision,
    ).toBe("deny");
    expect((await checkShellCommand(shellQuote(["node", "server.js", "--open"]))).decision).toBe("allow");
  });
});

describe("rules and configuration", () => {
  it("every built-in rule carries examples both ways", () => {
    for (const rule of BUILTIN_SHELL_RULES) {
      expect(rule.mustMatch.length, rule.id).toBeGreaterThan(0);
      expect(rule.mustNotMatch.length, rule.id).toBeGreaterThan(0);
    }
  });

  it("every built-in rule's, structural rule's and wrapper table's example decides as it says", async () => {
    // Checked here, against the pinned parser, rather than at every start of a policy.
    await expect(checkBuiltinExamples()).resolves.toBeUndefined();
    // The check can fail: a built-in table with a wrong example is named.
    const rule = BUILTIN_SHELL_RULES[0]!;
    const saved = rule.mustMatch;
    (rule as { mustMatch: readonly string[] }).mustMatch = ["echo harmless"];
    try {
      await expect(checkBuiltinExamples()).rejects.toThrow(`shell policy rule '${rule.id}'`);
    } finally {
      (rule as { mustMatch: readonly string[] }).mustMatch = saved;
    }
  }, 60_000);

  it("configured deny and ask prefixes apply to every segment", async () => {
    const config = {
      deny: [{ prefix: ["rm", "-rf"], reason: "no recursive deletes" }],
      ask: [{ prefix: ["git", "push"] }],
    };
    expect(await checkShellCommand("true && git push origin main", config)).toMatchObject({
      decision: "ask",
      rule: "ask[0]",
    });
    expect((await checkShellCommand("sudo -u me git push", config)).decision).toBe("ask");
    expect((await checkShellCommand("bash -c 'cd x && git push'", config)).decision).toBe("ask");
    expect((await checkShellCommand("echo $(/usr/bin/git push)", config)).decision).toBe("ask");
    expect((await checkShellCommand("git status", config)).decision).toBe("allow");
    const d = await checkShellCommand("ls; timeout 5 rm -rf build", config);
    expect(d).toMatchObject({ decision: "deny", rule: "deny[0]" });
    expect(d.reason).toContain("no recursive deletes");
    // deny wins over ask; a word only known at run time counts as matching.
    expect((await checkShellCommand("git push; rm -rf x", config)).decision).toBe("deny");
    expect((await checkShellCommand('git "$verb"', config)).decision).toBe("ask");
    // Wildcards inside a word.
    expect(
      (await checkShellCommand("npm publish --tag next", { deny: [{ prefix: ["npm", "pub*"] }] })).decision,
    ).toBe("deny");
  });

  it("checks a configured rule's own examples when it loads", async () => {
    await expect(
      createShellPolicy({
        deny: [{ prefix: ["git", "push"], mustMatch: ["git push"], mustNotMatch: ["git pull"] }],
      }),
    ).resolves.toBeDefined();
    await expect(
      createShellPolicy({ deny: [{ prefix: ["git", "push"], mustMatch: ["git pull"] }] }),
    ).rejects.toThrow(/deny\[0\].*"git pull" must match/);
    await expect(
      createShellPolicy({ ask: [{ prefix: ["git"], mustNotMatch: ["sudo git log"] }] }),
    ).rejects.toThrow(/ask\[0\].*must not match/);
  });

  it("rejects malformed config naming the property", async () => {
    const e = await createShellPolicy({ deny: [{ prefix: [] }] }).catch((x: unknown) => x);
    expect(CapgateError.isInstance(e) && e.code).toBe("invalid_config");
    expect((e as CapgateError).property).toBe("policy.shell.deny[0].prefix");
    const f = await createShellPolicy({ ask: "git push" as never }).catch((x: unknown) => x);
    expect((f as CapgateError).property).toBe("policy.shell.ask");
  });

  it("shellPolicyCheck throws on deny and returns { ask } on ask", async () => {
    const ctx = { policy: { shell: { ask: [{ prefix: ["git", "push"] }] } } };
    const check = checkShellCommand;
    await expect(shellPolicyCheck("xdg-open x", ctx, { check })).rejects.toMatchObject({
      code: "policy_denied",
      property: "command",
    });
    expect(await shellPolicyCheck("git push", ctx, { check })).toEqual({
      ask: expect.stringContaining("git push"),
    });
    expect(await shellPolicyCheck("ls", ctx, { check })).toBeUndefined();
    const policy = shellCommandPolicy(check, "cmd");
    await expect(Promise.resolve(policy({ cmd: "open ." }, ctx as never))).rejects.toMatchObject({
      property: "cmd",
    });
  });

  it("runShell honours ask: denied by default, run when approved", async () => {
    const ws = join(dir, "ws");
    const policy = { ask: [{ prefix: ["echo", "careful"] }] };
    await expect(runShell({ command: "echo careful", cwd: ws, env, policy })).rejects.toThrow(
      /needs approval/,
    );
    const asked: string[] = [];
    const r = await runShell({
      command: "echo careful",
      cwd: ws,
      env,
      policy,
      onAsk: async (reason) => {
        asked.push(reason);
        return true;
      },
    });
    expect(r.stdout).toBe("careful\n");
    expect(asked).toHaveLength(1);
    expect((await runShell({ command: "echo careful", cwd: ws, env, policy, onAsk: "allow" })).exitCode).toBe(
      0,
    );
  });
});
