import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { minimalEnv } from "@capgate/tools";
import { afterAll, describe, expect, it } from "vitest";
import { runShell } from "./run-shell.js";
import { assertShellAllowed, type ShellCheck, shellCommandPolicy, shellPolicyCheck } from "./shell-check.js";

// The runner's side of the injected shell policy: whatever the check answers is obeyed, and
// without a check nothing runs. (The real policy behind it is tested in @capgate/shell-policy.)
const dir = mkdtempSync(join(tmpdir(), "capgate-shell-check-"));
const env = minimalEnv();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Denies any command line with `deny` in it, asks for `ask`, allows the rest; records what it saw. */
function recordingCheck(): ShellCheck & { seen: { command: string; rules: unknown }[] } {
  const seen: { command: string; rules: unknown }[] = [];
  const check = async (command: string, rules?: unknown) => {
    seen.push({ command, rules });
    if (command.includes("deny")) return { decision: "deny" as const, reason: "test says no", rule: "t" };
    if (command.includes("ask")) return { decision: "ask" as const, reason: "test asks" };
    return { decision: "allow" as const };
  };
  return Object.assign(check, { seen });
}

describe("runShell obeys the injected check", () => {
  it("runs nothing without a check, naming the fix", async () => {
    const marker = join(dir, "unchecked");
    const e = await runShell({ command: `touch ${marker}`, cwd: dir, env } as never).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "policy_denied", property: "command" });
    expect((e as Error).message).toMatch(
      /no shell policy check was given.*checkShellCommand.*@capgate\/shell-policy/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("a check that is not a function is no check", async () => {
    const marker = join(dir, "not-a-function");
    await expect(
      runShell({ command: `touch ${marker}`, check: "allow" as never, cwd: dir, env }),
    ).rejects.toMatchObject({ code: "policy_denied" });
    expect(existsSync(marker)).toBe(false);
  });

  it("deny refuses before anything runs; the rules reach the check", async () => {
    const check = recordingCheck();
    const marker = join(dir, "denied");
    const policy = { sandbox: "off" as const, deny: [{ prefix: ["touch"] }] };
    await expect(
      runShell({ command: `touch ${marker} # deny`, check, policy, cwd: dir, env }),
    ).rejects.toMatchObject({ code: "policy_denied", message: "test says no" });
    expect(existsSync(marker)).toBe(false);
    expect(check.seen).toEqual([{ command: `touch ${marker} # deny`, rules: policy }]);
  });

  it("ask: refused by default, run when approved", async () => {
    const check = recordingCheck();
    const policy = { sandbox: "off" as const };
    await expect(runShell({ command: "echo ask", check, policy, cwd: dir, env })).rejects.toThrow(
      /test asks — this needs approval/,
    );
    const reasons: string[] = [];
    const r = await runShell({
      command: "echo ask",
      check,
      policy,
      cwd: dir,
      env,
      onAsk: async (reason) => {
        reasons.push(reason);
        return true;
      },
    });
    expect(r.stdout).toBe("ask\n");
    expect(reasons).toEqual(["test asks"]);
    await expect(
      assertShellAllowed({ command: "echo ask", check, onAsk: async () => false }),
    ).rejects.toMatchObject({ code: "policy_denied" });
  });
});

describe("shellPolicyCheck and shellCommandPolicy", () => {
  const ctx = { policy: { shell: { ask: [{ prefix: ["x"] }] } } };

  it("map deny to a refusal, ask to { ask }, allow to nothing", async () => {
    const check = recordingCheck();
    await expect(shellPolicyCheck("deny", ctx, { check })).rejects.toMatchObject({
      code: "policy_denied",
      property: "command",
    });
    expect(await shellPolicyCheck("ask", ctx, { check })).toEqual({ ask: "test asks" });
    expect(await shellPolicyCheck("ls", ctx, { check })).toBeUndefined();
    expect(check.seen.map((s) => s.rules)).toEqual([ctx.policy.shell, ctx.policy.shell, ctx.policy.shell]);
    const policy = shellCommandPolicy(check, "cmd");
    await expect(Promise.resolve(policy({ cmd: "deny" }, ctx as never))).rejects.toMatchObject({
      property: "cmd",
    });
    expect(() => policy({ cmd: 3 }, ctx as never)).toThrow(/cmd must be a shell command string/);
  });

  it("refuse without a check", async () => {
    await expect(shellPolicyCheck("ls", ctx, {} as never)).rejects.toMatchObject({ code: "policy_denied" });
    await expect(shellPolicyCheck("ls", ctx, undefined as never)).rejects.toMatchObject({
      code: "policy_denied",
    });
  });
});
