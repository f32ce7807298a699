import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import { BIN, cli, type Sandbox, sandbox } from "../test-support/cli.js";

// `capgate hook claude-code` as Claude Code runs it: the built CLI, the payload on stdin.
// The hook's decisions are @capgate/shell-policy/claude-code's and tested there
// (packages/shell-policy/src/claude-code.test.ts); here, that the command hands them stdin,
// the environment and --config, and that the `capgate sandbox-exec` it rewrites a call to
// really runs it in the sandbox.

/** A Bash call in the shape Claude Code sends a PreToolUse command hook on stdin. */
const bashPayload = (box: Sandbox, command: string, patch: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: "abc123",
    transcript_path: "/home/user/.claude/projects/demo/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
    cwd: box.workspace,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "d" },
    tool_use_id: "toolu_01DEF456",
    ...patch,
  });

// Run from elsewhere: the payload's cwd, not the process's, picks the config.
const hook = (input: string, box: Sandbox, args: string[] = [], env: Record<string, string> = {}) =>
  cli(["hook", "claude-code", ...args], box, { input, cwd: box.root, env });

const decision = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: Record<string, string> }).hookSpecificOutput;

describe("capgate hook claude-code", () => {
  it("answers on stdout from the payload on stdin, with --config and $CLAUDE_PROJECT_DIR", async () => {
    const box = sandbox();
    const opener = await hook(bashPayload(box, "npm run build && xdg-open dist/index.html"), box);
    expect(opener.code).toBe(0);
    expect(decision(opener.stdout)).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(decision(opener.stdout).permissionDecisionReason).toContain("xdg-open");
    expect(await hook(bashPayload(box, "npm test"), box)).toEqual({ code: 0, stdout: "", stderr: "" });

    const rules = join(box.root, "rules.json");
    writeFileSync(
      rules,
      JSON.stringify({ shell: { deny: [{ prefix: ["git", "push"], reason: "no pushing" }] } }),
    );
    for (const args of [["--config", rules], [`--config=${rules}`]]) {
      const viaFlag = await hook(bashPayload(box, "git push origin main"), box, args);
      expect(decision(viaFlag.stdout).permissionDecisionReason, args.join(" ")).toContain("no pushing");
    }
    writeFileSync(join(box.workspace, "capgate.config.json"), readFileSync(rules, "utf8"));
    const project = await hook(bashPayload(box, "git push origin main", { cwd: box.root }), box, [], {
      CLAUDE_PROJECT_DIR: box.workspace,
    });
    expect(decision(project.stdout)).toMatchObject({ permissionDecision: "deny" });

    const garbage = await hook("not json", box);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toContain("not the hook's JSON payload");
  });

  // stdin is read synchronously while that works (the stream costs start time); a stdin a
  // parent left non-blocking answers EAGAIN, and the part read before it must not be lost.
  it.each([
    ["blocking", false],
    ["non-blocking", true],
  ])("reads a payload that arrives in pieces on a %s stdin", (_kind, nonBlocking) => {
    const box = sandbox();
    const payload = bashPayload(box, "npm run build && xdg-open dist/index.html");
    const writer = [
      "import os, subprocess, sys, time",
      "r, w = os.pipe()",
      `os.set_blocking(r, ${nonBlocking ? "False" : "True"})`,
      "p = subprocess.Popen(sys.argv[1:], stdin=r, stdout=subprocess.PIPE, stderr=subprocess.PIPE)",
      "os.close(r)",
      "data = os.environ['PAYLOAD'].encode()",
      "for i in range(0, len(data), 97):",
      "    os.write(w, data[i:i + 97]); time.sleep(0.05)",
      "os.close(w)",
      "out, err = p.communicate()",
      "sys.stdout.write(out.decode()); sys.stderr.write(err.decode()); sys.exit(p.returncode)",
    ].join("\n");
    const run = spawnSync("python3", ["-c", writer, process.execPath, BIN, "hook", "claude-code"], {
      cwd: box.root,
      env: { ...box.env, PAYLOAD: payload },
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(decision(run.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(run.stdout).permissionDecisionReason).toContain("xdg-open");
  });
});

const bwrap = needs(["bwrap", "socat"]);

describe.skipIf(bwrap.skip)(`capgate hook claude-code with "hook": { "sandbox": true }${bwrap.note}`, () => {
  /** A workspace with the opt-in, and a HOME holding a secret the sandbox must hide. */
  function sandboxedBox(): Sandbox & { secret: string } {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ hook: { sandbox: true }, shell: { network: "none" } }),
    );
    const home = join(box.root, "user-home");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    const secret = join(home, ".ssh", "id_ed25519");
    writeFileSync(secret, "PRIVATE KEY\n");
    return { ...box, env: { ...box.env, HOME: home, DISPLAY: ":0" }, secret };
  }

  /** Run the rewritten command the way Claude Code's Bash tool would: bash, in the call's cwd. */
  const runAsClaudeCode = (command: string, box: Sandbox) =>
    spawnSync("bash", ["-c", command], {
      cwd: box.workspace,
      env: box.env,
      encoding: "utf8",
      timeout: 120_000,
    });

  it("answers an allowed call with updatedInput that runs it inside the sandbox", async () => {
    const box = sandboxedBox();
    const command = `echo made > inside.txt; echo "display=\${DISPLAY:-none}"; cat "$HOME/.ssh/id_ed25519" || echo hidden; echo x > ${join(box.root, "outside.txt")} || echo read-only`;
    const r = await hook(bashPayload(box, command), box, [], {
      CLAUDE_PROJECT_DIR: box.workspace,
    });
    const out = JSON.parse(r.stdout).hookSpecificOutput as {
      permissionDecision: string;
      updatedInput: { command: string; description: string };
    };
    expect(out.permissionDecision).toBe("allow");
    expect(out.updatedInput.description).toBe("d");
    expect(out.updatedInput.command).toContain("sandbox-exec");
    const run = runAsClaudeCode(out.updatedInput.command, box);
    expect(run.status, run.stderr).toBe(0);
    // The workspace is writable; the secret is hidden; no display; nothing written outside.
    expect(readFileSync(join(box.workspace, "inside.txt"), "utf8")).toBe("made\n");
    expect(run.stdout).toContain("display=none");
    expect(run.stdout).toContain("hidden");
    expect(run.stdout).not.toContain("PRIVATE KEY");
    expect(existsSync(join(box.root, "outside.txt"))).toBe(false);
  }, 180_000);

  it("keeps the command's exit status and output, and sandboxes an asked call too", async () => {
    const box = sandboxedBox();
    const allowed = await hook(bashPayload(box, "echo out; echo err >&2; exit 3"), box);
    const run = runAsClaudeCode(JSON.parse(allowed.stdout).hookSpecificOutput.updatedInput.command, box);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe("out\n");
    expect(run.stderr).toContain("err");
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ hook: { sandbox: true }, shell: { network: "none", ask: [{ prefix: ["touch"] }] } }),
    );
    const asked = await hook(bashPayload(box, "touch asked.txt"), box);
    const out = JSON.parse(asked.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("ask");
    expect(out.updatedInput.command).toContain("sandbox-exec");
    // Denied calls are not rewritten.
    const denied = await hook(bashPayload(box, "npm run build && xdg-open dist/index.html"), box);
    expect(JSON.parse(denied.stdout).hookSpecificOutput.updatedInput).toBeUndefined();
  }, 240_000);

  it("hides the config's stateDir (traces, memory, logins), as shell.run does", async () => {
    // sandbox-exec once chose the state dir from $CAPGATE_HOME alone, so a config's
    // `"stateDir": "state"` (its OAuth tokens included) stayed readable and, inside the
    // project, writable. It asks the one function the harness asks (stateDirFor).
    const box = sandboxedBox();
    mkdirSync(join(box.workspace, "state", "mcp-auth"), { recursive: true });
    writeFileSync(join(box.workspace, "state", "mcp-auth", "srv.json"), '{"access_token":"OAUTH-SECRET"}\n');
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ stateDir: "state", hook: { sandbox: true }, shell: { network: "none" } }),
    );
    const r = await hook(
      bashPayload(
        box,
        "cat state/mcp-auth/srv.json || echo hidden; echo x >> state/mcp-auth/srv.json || echo refused",
      ),
      box,
    );
    const run = runAsClaudeCode(JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command, box);
    expect(run.stdout).not.toContain("OAUTH-SECRET");
    expect(run.stdout).toContain("hidden");
    expect(readFileSync(join(box.workspace, "state", "mcp-auth", "srv.json"), "utf8")).toBe(
      '{"access_token":"OAUTH-SECRET"}\n',
    );
  }, 180_000);
});
