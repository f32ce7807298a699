import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
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

/** The review's rule set (issue 17): deny git push, rm -rf and curl. */
const REVIEW_RULES = {
  shell: { deny: [{ prefix: ["git", "push"] }, { prefix: ["rm", "-rf"] }, { prefix: ["curl"] }] },
};

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

describe("capgate hook claude-code under configured rules (issue 17)", () => {
  it("asks, with the part it could not read, about commands it cannot read completely", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify(REVIEW_RULES));
    const cases: Array<[string, "deny" | "ask"]> = [
      ["git submodule foreach 'git push origin HEAD:main'", "deny"],
      ["git filter-branch -f --tree-filter 'git push origin main; true' HEAD", "deny"],
      ["git -c trailer.x.command='git push origin main' interpret-trailers --trailer x=y", "deny"],
      ["cmake -E chdir . sh -c 'git push origin main'", "deny"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
      ['node -e \'`${require("child_process").execSync("git push origin main")}`\'', "ask"],
      ["ed -s f <<< '!git push origin main'", "ask"],
      ["psql -h 127.0.0.1 -c '\\! git push origin main'", "ask"],
      ["python3 -c 'print(1)'", "ask"],
    ];
    for (const [command, expected] of cases) {
      const r = await hook(payload("bash-npm-test", box, { tool_input: { command } }), box);
      const out = decision(r.stdout);
      expect(out.permissionDecision, `${command}: ${r.stdout}`).toBe(expected);
      if (expected === "ask")
        expect(out.permissionDecisionReason).toMatch(/cannot be read completely: .{20,}/);
    }
    // What it reads completely still passes silently.
    const plain = await hook(
      payload("bash-npm-test", box, { tool_input: { command: "git status && ls" } }),
      box,
    );
    expect(plain).toEqual({ code: 0, stdout: "", stderr: "" });
    // Nine hook processes, each loading the grammar: generous on a loaded machine (no timing is asserted).
  }, 300_000);

  it("shell.allow lifts the question for what the operator accepts", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { ...REVIEW_RULES.shell, allow: [{ prefix: ["python3", "-c"] }] } }),
    );
    const r = await hook(
      payload("bash-npm-test", box, { tool_input: { command: "python3 -c 'print(1)'" } }),
      box,
    );
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
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
    const r = await hook(
      payload("bash-npm-test", box, { tool_input: { command, description: "d" } }),
      box,
      [],
      {
        CLAUDE_PROJECT_DIR: box.workspace,
      },
    );
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
    const allowed = await hook(
      payload("bash-npm-test", box, { tool_input: { command: "echo out; echo err >&2; exit 3" } }),
      box,
    );
    const run = runAsClaudeCode(JSON.parse(allowed.stdout).hookSpecificOutput.updatedInput.command, box);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe("out\n");
    expect(run.stderr).toContain("err");
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ hook: { sandbox: true }, shell: { network: "none", ask: [{ prefix: ["touch"] }] } }),
    );
    const asked = await hook(
      payload("bash-npm-test", box, { tool_input: { command: "touch asked.txt" } }),
      box,
    );
    const out = JSON.parse(asked.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("ask");
    expect(out.updatedInput.command).toContain("sandbox-exec");
    // Denied calls are not rewritten.
    const denied = await hook(payload("bash-xdg-open", box), box);
    expect(JSON.parse(denied.stdout).hookSpecificOutput.updatedInput).toBeUndefined();
  }, 240_000);

  it("hides the config's stateDir (traces, memory, logins), as shell.run does", async () => {
    // Found in the outside attack: sandbox-exec chose the state dir from $CAPGATE_HOME alone,
    // so a config's `"stateDir": "state"` (its OAuth tokens included) stayed readable and,
    // inside the project, writable. It now asks the one function the harness asks.
    const box = sandboxedBox();
    mkdirSync(join(box.workspace, "state", "mcp-auth"), { recursive: true });
    writeFileSync(join(box.workspace, "state", "mcp-auth", "srv.json"), '{"access_token":"OAUTH-SECRET"}\n');
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ stateDir: "state", hook: { sandbox: true }, shell: { network: "none" } }),
    );
    const r = await hook(
      payload("bash-npm-test", box, {
        tool_input: {
          command:
            "cat state/mcp-auth/srv.json || echo hidden; echo x >> state/mcp-auth/srv.json || echo refused",
        },
      }),
      box,
    );
    const run = runAsClaudeCode(JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command, box);
    expect(run.stdout).not.toContain("OAUTH-SECRET");
    expect(run.stdout).toContain("hidden");
    expect(readFileSync(join(box.workspace, "state", "mcp-auth", "srv.json"), "utf8")).toBe(
      '{"access_token":"OAUTH-SECRET"}\n',
    );
  }, 180_000);

  it("fails closed on a hook section it cannot read", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ hook: { sandbox: "yes" } }));
    const r = await hook(payload("bash-npm-test", box), box);
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(r.stdout).permissionDecisionReason).toContain("hook must be an object");
  });
});
