import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ClaudeCodeHookOptions, decideHook, runClaudeCodeHook } from "./claude-code.js";
import { splitCommandLine } from "./index.js";

// The hook's decisions, in process. That `capgate hook claude-code` wires stdin, stdout and
// the exit code to them, and that a rewritten call really runs in the sandbox, is tested
// on the built CLI (apps/cli/src/hook/entry.test.ts).

interface Box {
  root: string;
  workspace: string;
}

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function box(): Box {
  const root = mkdtempSync(join(tmpdir(), "capgate-hook-"));
  roots.push(root);
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  return { root, workspace };
}

// Payloads recorded in the shape Claude Code sends a PreToolUse command hook on stdin
// (session_id, transcript_path, cwd, permission_mode, hook_event_name, tool_name,
// tool_input, tool_use_id); `cwd` is rewritten to the test's workspace.
const payload = (name: string, box: Box, patch: Record<string, unknown> = {}) => {
  const value = JSON.parse(
    readFileSync(new URL(`../test/claude-code/payloads/${name}.json`, import.meta.url), "utf8"),
  ) as Record<string, unknown>;
  return JSON.stringify({ ...value, cwd: box.workspace, ...patch });
};

/** Run the hook on one stdin, as Claude Code would: what it wrote, and its exit code. */
async function hook(
  input: string,
  box: Box,
  options: ClaudeCodeHookOptions = {},
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runClaudeCodeHook(options, {
    stdin: async () => input,
    out: (text) => {
      stdout += `${text}\n`;
    },
    err: (text) => {
      stderr += `${text}\n`;
    },
    // Run from elsewhere: the payload's cwd, not the hook's, picks the config.
    cwd: box.root,
    env,
  });
  return { code, stdout, stderr };
}

const decision = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: Record<string, string> }).hookSpecificOutput;

/** The review's rule set (issue 17): deny git push, rm -rf and curl. */
const REVIEW_RULES = {
  shell: { deny: [{ prefix: ["git", "push"] }, { prefix: ["rm", "-rf"] }, { prefix: ["curl"] }] },
};

describe("the Claude Code hook", () => {
  it("denies a GUI opener anywhere in a Bash command, with the reason", async () => {
    const b = box();
    const r = await hook(payload("bash-xdg-open", b), b);
    expect(r.code).toBe(0);
    const out = decision(r.stdout);
    expect(out.hookEventName).toBe("PreToolUse");
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("xdg-open");
  });

  it("stays silent for an allowed command and for tools other than Bash", async () => {
    const b = box();
    for (const name of ["bash-npm-test", "write-file"]) {
      const r = await hook(payload(name, b), b);
      expect(r, name).toEqual({ code: 0, stdout: "", stderr: "" });
    }
  });

  it("applies the config's deny and ask rules from the session's cwd (or the config option)", async () => {
    const b = box();
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({
        shell: {
          deny: [{ prefix: ["npm", "publish"], reason: "publishing is done by CI" }],
          ask: [{ prefix: ["npm", "test"], reason: "the suite is slow" }],
        },
      }),
    );
    const ask = await hook(payload("bash-npm-test", b), b);
    expect(decision(ask.stdout)).toMatchObject({ permissionDecision: "ask" });
    expect(decision(ask.stdout).permissionDecisionReason).toContain("the suite is slow");
    const deny = await hook(
      payload("bash-npm-test", b, { tool_input: { command: "cd pkg && npm publish --access public" } }),
      b,
    );
    expect(decision(deny.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(deny.stdout).permissionDecisionReason).toContain("publishing is done by CI");
    // The config option (`--config`) wins over the cwd's file.
    const other = join(b.root, "other.json");
    writeFileSync(other, JSON.stringify({}));
    const viaFlag = await hook(payload("bash-npm-test", b), b, { config: other });
    expect(viaFlag.stdout).toBe("");
  });

  it("finds the rules after `cd sub`: the project's config ($CLAUDE_PROJECT_DIR), else the nearest one above the cwd", async () => {
    const b = box();
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { deny: [{ prefix: ["git", "push"], reason: "no pushing" }] } }),
    );
    const sub = join(b.workspace, "sub", "deeper");
    mkdirSync(sub, { recursive: true });
    const push = { tool_input: { command: "git push origin main" } };
    // Claude Code keeps the shell's directory between calls: the next payload says cwd=sub/deeper.
    const nearest = await hook(payload("bash-npm-test", b, { ...push, cwd: sub }), b);
    expect(decision(nearest.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(nearest.stdout).permissionDecisionReason).toContain("no pushing");
    // A config the model wrote nearer the cwd does not replace the project's.
    writeFileSync(join(b.workspace, "sub", "capgate.config.json"), JSON.stringify({}));
    const project = await hook(
      payload("bash-npm-test", b, { ...push, cwd: sub }),
      b,
      {},
      {
        CLAUDE_PROJECT_DIR: b.workspace,
      },
    );
    expect(decision(project.stdout)).toMatchObject({ permissionDecision: "deny" });
    // Outside the project entirely (cd /tmp), the project's rules still hold.
    const outside = await hook(
      payload("bash-npm-test", b, { ...push, cwd: b.root }),
      b,
      {},
      {
        CLAUDE_PROJECT_DIR: b.workspace,
      },
    );
    expect(decision(outside.stdout)).toMatchObject({ permissionDecision: "deny" });
  });

  it("fails closed: a Bash call it cannot check is denied, a payload that is not JSON is an error", async () => {
    const b = box();
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { deny: [{ prefix: [] }] } }),
    );
    const badRules = await hook(payload("bash-npm-test", b), b);
    expect(decision(badRules.stdout).permissionDecision).toBe("deny");
    expect(decision(badRules.stdout).permissionDecisionReason).toContain("cannot check");
    const noCommand = await hook(payload("bash-npm-test", box(), { tool_input: {} }), b);
    expect(decision(noCommand.stdout).permissionDecision).toBe("deny");
    const unparsable = await hook(payload("bash-npm-test", box(), { tool_input: { command: "echo $(" } }), b);
    expect(decision(unparsable.stdout).permissionDecision).toBe("deny");
    const garbage = await hook("not json", b);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toContain("not the hook's JSON payload");
    const unknown = await hook("{}", b);
    expect(unknown.code).toBe(0);
  });

  it("fails closed on a hook section it cannot read", async () => {
    const b = box();
    writeFileSync(join(b.workspace, "capgate.config.json"), JSON.stringify({ hook: { sandbox: "yes" } }));
    const r = await hook(payload("bash-npm-test", b), b);
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(r.stdout).permissionDecisionReason).toContain("hook must be an object");
  });
});

describe("the Claude Code hook under configured rules (issue 17)", () => {
  it("asks, with the part it could not read, about commands it cannot read completely", async () => {
    const b = box();
    writeFileSync(join(b.workspace, "capgate.config.json"), JSON.stringify(REVIEW_RULES));
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
      const r = await hook(payload("bash-npm-test", b, { tool_input: { command } }), b);
      const out = decision(r.stdout);
      expect(out.permissionDecision, `${command}: ${r.stdout}`).toBe(expected);
      if (expected === "ask")
        expect(out.permissionDecisionReason).toMatch(/cannot be read completely: .{20,}/);
    }
    // What it reads completely still passes silently.
    const plain = await hook(payload("bash-npm-test", b, { tool_input: { command: "git status && ls" } }), b);
    expect(plain).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("shell.allow lifts the question for what the operator accepts", async () => {
    const b = box();
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { ...REVIEW_RULES.shell, allow: [{ prefix: ["python3", "-c"] }] } }),
    );
    const r = await hook(
      payload("bash-npm-test", b, { tool_input: { command: "python3 -c 'print(1)'" } }),
      b,
    );
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe('the Claude Code hook with "hook": { "sandbox": true }', () => {
  const SANDBOX_EXEC = ["/opt/node/bin/node", "/opt/capgate/dist/bin.js", "sandbox-exec"];

  function sandboxedBox(shell: Record<string, unknown> = {}): Box & { config: string } {
    const b = box();
    const config = join(b.workspace, "capgate.config.json");
    writeFileSync(config, JSON.stringify({ hook: { sandbox: true }, shell }));
    return { ...b, config };
  }

  it("rewrites an allowed call to the caller's sandbox-exec argv, the command line one argument, unchanged", async () => {
    const b = sandboxedBox();
    const command = `echo "it's" > out.txt; cat '$HOME/x' | wc -l`;
    const r = await hook(
      payload("bash-npm-test", b, { tool_input: { command, description: "d" } }),
      b,
      { sandboxExec: SANDBOX_EXEC },
      { CLAUDE_PROJECT_DIR: b.workspace },
    );
    const out = JSON.parse(r.stdout).hookSpecificOutput as {
      permissionDecision: string;
      permissionDecisionReason: string;
      updatedInput: { command: string; description: string };
    };
    expect(out.permissionDecision).toBe("allow");
    expect(out.permissionDecisionReason).toContain("inside capgate's sandbox");
    expect(out.updatedInput.description).toBe("d");
    expect(await splitCommandLine(out.updatedInput.command)).toEqual({
      ok: true,
      argv: [...SANDBOX_EXEC, "--workspace", b.workspace, "--config", b.config, "--", command],
    });
  });

  it("takes the config file's directory as the workspace when there is no project directory", async () => {
    const b = sandboxedBox();
    const sub = join(b.workspace, "sub");
    mkdirSync(sub);
    const d = await decideHook(
      { tool_name: "Bash", tool_input: { command: "ls" }, cwd: sub },
      { cwd: b.root, sandboxExec: SANDBOX_EXEC },
    );
    expect(d?.decision).toBe("allow");
    const rewritten = d && "updatedInput" in d ? String(d.updatedInput?.command) : "";
    expect(await splitCommandLine(rewritten)).toEqual({
      ok: true,
      argv: [...SANDBOX_EXEC, "--workspace", b.workspace, "--config", b.config, "--", "ls"],
    });
  });

  it("sandboxes an asked call too, and leaves a denied one alone", async () => {
    const b = sandboxedBox({ ask: [{ prefix: ["touch"] }] });
    const asked = await hook(payload("bash-npm-test", b, { tool_input: { command: "touch asked.txt" } }), b, {
      sandboxExec: SANDBOX_EXEC,
    });
    const out = JSON.parse(asked.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("ask");
    expect(out.updatedInput.command).toContain("sandbox-exec");
    const denied = await hook(payload("bash-xdg-open", b), b, { sandboxExec: SANDBOX_EXEC });
    expect(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(JSON.parse(denied.stdout).hookSpecificOutput.updatedInput).toBeUndefined();
  });

  it("denies what it was asked to sandbox when it was not told how to start sandbox-exec", async () => {
    const b = sandboxedBox();
    const r = await hook(payload("bash-npm-test", b), b);
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(decision(r.stdout).permissionDecisionReason).toContain(
      "not told how to start capgate sandbox-exec",
    );
    // Without the opt-in, no sandbox-exec is needed.
    writeFileSync(b.config, JSON.stringify({ hook: { sandbox: false } }));
    expect(await hook(payload("bash-npm-test", b), b)).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});
