import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, type Sandbox, sandbox } from "../test-support/cli.js";

// Payloads recorded in the shape Claude Code sends a PreToolUse command hook on stdin
// (session_id, transcript_path, cwd, permission_mode, hook_event_name, tool_name,
// tool_input, tool_use_id); `cwd` is rewritten to the test's workspace.
const payload = (name: string, box: Sandbox, patch: Record<string, unknown> = {}) => {
  const value = JSON.parse(
    readFileSync(new URL(`./payloads/${name}.json`, import.meta.url), "utf8"),
  ) as Record<string, unknown>;
  return JSON.stringify({ ...value, cwd: box.workspace, ...patch });
};

function hook(input: string, box: Sandbox, args: string[] = [], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    // Run from elsewhere: the payload's cwd, not the process's, picks the config.
    const child = spawn(process.execPath, [BIN, "hook", "claude-code", ...args], {
      cwd: box.root,
      env: { ...box.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

const decision = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: Record<string, string> }).hookSpecificOutput;

describe("capgate hook claude-code", () => {
  it("denies a GUI opener anywhere in a Bash command, with the reason", async () => {
    const box = sandbox();
    const r = await hook(payload("bash-xdg-open", box), box);
    expect(r.code).toBe(0);
    const out = decision(r.stdout);
    expect(out.hookEventName).toBe("PreToolUse");
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("xdg-open");
  });

  it("stays silent for an allowed command and for tools other than Bash", async () => {
    const box = sandbox();
    for (const name of ["bash-npm-test", "write-file"]) {
      const r = await hook(payload(name, box), box);
      expect(r, name).toEqual({ code: 0, stdout: "", stderr: "" });
    }
  });

  it("applies the config's deny and ask rules from the session's cwd (or --config)", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({
        shell: {
          deny: [{ prefix: ["npm", "publish"], reason: "publishing is done by CI" }],
          ask: [{ prefix: ["npm", "test"], reason: "the suite is slow" }],
        },
      }),
    );
    const ask = await hook(payload("bash-npm-test", box), box);
    expect(decision(ask.stdout)).toMatchObject({ permissionDecision: "ask" });
    expect(decision(ask.stdout).permissionDecisionReason).toContain("the suite is slow");
    const deny = await hook(
      payload("bash-npm-test", box, { tool_input: { command: "cd pkg && npm publish --access public" } }),
      box,
    );
    expect(decision(deny.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(deny.stdout).permissionDecisionReason).toContain("publishing is done by CI");
    // --config wins over the cwd's file.
    const other = join(box.root, "other.json");
    writeFileSync(other, JSON.stringify({}));
    const viaFlag = await hook(payload("bash-npm-test", box), box, ["--config", other]);
    expect(viaFlag.stdout).toBe("");
  });

  it("finds the rules after `cd sub`: the project's config ($CLAUDE_PROJECT_DIR), else the nearest one above the cwd", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { deny: [{ prefix: ["git", "push"], reason: "no pushing" }] } }),
    );
    const sub = join(box.workspace, "sub", "deeper");
    mkdirSync(sub, { recursive: true });
    const push = { tool_input: { command: "git push origin main" } };
    // Claude Code keeps the shell's directory between calls: the next payload says cwd=sub/deeper.
    const nearest = await hook(payload("bash-npm-test", box, { ...push, cwd: sub }), box);
    expect(decision(nearest.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(nearest.stdout).permissionDecisionReason).toContain("no pushing");
    // A config the model wrote nearer the cwd does not replace the project's.
    writeFileSync(join(box.workspace, "sub", "capgate.config.json"), JSON.stringify({}));
    const project = await hook(payload("bash-npm-test", box, { ...push, cwd: sub }), box, [], {
      CLAUDE_PROJECT_DIR: box.workspace,
    });
    expect(decision(project.stdout)).toMatchObject({ permissionDecision: "deny" });
    // Outside the project entirely (cd /tmp), the project's rules still hold.
    const outside = await hook(payload("bash-npm-test", box, { ...push, cwd: box.root }), box, [], {
      CLAUDE_PROJECT_DIR: box.workspace,
    });
    expect(decision(outside.stdout)).toMatchObject({ permissionDecision: "deny" });
  });

  it("fails closed: a Bash call it cannot check is denied, a payload that is not JSON is an error", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { deny: [{ prefix: [] }] } }),
    );
    const badRules = await hook(payload("bash-npm-test", box), box);
    expect(decision(badRules.stdout).permissionDecision).toBe("deny");
    expect(decision(badRules.stdout).permissionDecisionReason).toContain("cannot check");
    const noCommand = await hook(payload("bash-npm-test", sandbox(), { tool_input: {} }), box);
    expect(decision(noCommand.stdout).permissionDecision).toBe("deny");
    const unparsable = await hook(
      payload("bash-npm-test", sandbox(), { tool_input: { command: "echo $(" } }),
      box,
    );
    expect(decision(unparsable.stdout).permissionDecision).toBe("deny");
    const garbage = await hook("not json", box);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toContain("not the hook's JSON payload");
    const unknown = await hook("{}", box, []);
    expect(unknown.code).toBe(0);
  });
});
