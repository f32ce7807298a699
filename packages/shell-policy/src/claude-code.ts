import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { ShellRules } from "./config.js";
import { compileBashWasm } from "./parse/grammar-wasm.js";

/**
 * The shell policy as a Claude Code PreToolUse hook (`@capgate/shell-policy/claude-code`).
 * Claude Code runs the hook before every tool call with the call as JSON on stdin
 * ({hook_event_name, tool_name, tool_input: {command}, cwd, …}); for `Bash` the command goes
 * through the shell policy (the built-in rules plus the `shell` deny/ask/allow rules of
 * capgate.config.json) and the answer is Claude Code's decision JSON on stdout:
 *   deny → {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":…}}
 *   ask  → the same with "ask" (Claude Code asks the user, showing the reason)
 *   allow → nothing (exit 0): Claude Code's own permission rules still apply.
 * With `"hook": { "sandbox": true }` in the config, an allowed (or asked) call is answered
 * with `updatedInput`: the same call whose command runs inside capgate's OS sandbox through
 * `capgate sandbox-exec` (the caller says how to start it: `sandboxExec`), and an allowed one
 * is approved. Other tools pass silently. It fails closed: a Bash call it cannot check (a bad
 * config, a payload without a command) is denied with the reason, never let through by a crash.
 *
 * This entry loads a few Node built-ins, and the policy itself only once a Bash call is to
 * be checked: it runs on every tool call, so its cold start matters (bench `cli.hook_ratio`).
 */
export interface HookIO {
  stdin: () => Promise<string>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Where the hook runs; the payload's `cwd` wins when it has one. */
  cwd: string;
  /** The hook's environment (default `process.env`): `CLAUDE_PROJECT_DIR`, which Claude Code sets for hooks, names the project. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What Claude Code sends a PreToolUse command hook on stdin (the parts the hook reads). */
export interface HookPayload {
  hook_event_name?: unknown;
  tool_name?: unknown;
  tool_input?: unknown;
  cwd?: unknown;
}

/**
 * The hook's answer. `updatedInput` (only with `"hook": { "sandbox": true }`): the Bash
 * call's input with its command rewritten to run inside capgate's sandbox.
 */
export type HookDecision =
  | { decision: "allow"; updatedInput?: Record<string, unknown>; reason?: string }
  | { decision: "deny"; reason: string }
  | { decision: "ask"; reason: string; updatedInput?: Record<string, unknown> };

export interface ClaudeCodeHookOptions {
  /** The config file (`--config`; relative to the call's cwd). Default: found by `hookConfigPath`. */
  config?: string;
  /**
   * The argv that starts `capgate sandbox-exec`, before its own arguments (the capgate CLI
   * passes `[process.execPath, <its bin.js>, "sandbox-exec"]`). Only a config with
   * `"hook": { "sandbox": true }` uses it; without it such a config's calls are denied, since
   * the hook could not put them in the sandbox the config asks for.
   */
  sandboxExec?: readonly string[];
}

export interface DecideHookOptions extends ClaudeCodeHookOptions {
  /** Where the hook runs (the payload's `cwd` wins when it has one). */
  cwd: string;
  /** The project directory (`$CLAUDE_PROJECT_DIR`): its config applies wherever the shell has `cd`-ed to. */
  projectDir?: string;
}

/** The decision as the JSON Claude Code reads from a PreToolUse hook's stdout. */
export const decisionJson = (d: HookDecision): string =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: d.decision,
      ...(d.reason !== undefined ? { permissionDecisionReason: d.reason } : {}),
      ...("updatedInput" in d && d.updatedInput ? { updatedInput: d.updatedInput } : {}),
    },
  });

/**
 * The config file the hook applies: `--config` (relative to the call's cwd); else the
 * project's (`$CLAUDE_PROJECT_DIR/capgate.config.json`, which Claude Code sets for hooks),
 * whatever directory the shell has `cd`-ed to since; else the nearest capgate.config.json in
 * the call's cwd or a directory above it. Claude Code keeps the working directory between
 * Bash calls, so after `cd sub` the payload's cwd is `sub`: looking only there would lose
 * the rules.
 */
export function hookConfigPath(
  configPath: string | undefined,
  cwd: string,
  projectDir: string | undefined,
): string | undefined {
  if (configPath) return isAbsolute(configPath) ? configPath : resolve(cwd, configPath);
  if (projectDir && isAbsolute(projectDir)) {
    const projectConfig = join(projectDir, "capgate.config.json");
    if (existsSync(projectConfig)) return projectConfig;
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, "capgate.config.json");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** What the hook reads from the config it applies (hookConfigPath): the shell rules, `hook.sandbox`, the file. */
interface HookConfig {
  rules?: ShellRules;
  sandbox: boolean;
  path?: string;
}

function hookConfig(configPath: string | undefined, cwd: string, projectDir: string | undefined): HookConfig {
  const path = hookConfigPath(configPath, cwd, projectDir);
  if (path === undefined) return { sandbox: false };
  if (!existsSync(path)) throw new Error(`the config file ${path} does not exist`);
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path} is not valid JSON (${(error as Error).message})`);
  }
  if (config === null || typeof config !== "object" || Array.isArray(config))
    throw new Error(`${path} must hold a JSON object`);
  const { shell, hook } = config as { shell?: unknown; hook?: unknown };
  if (shell !== undefined && (shell === null || typeof shell !== "object" || Array.isArray(shell)))
    throw new Error(`${path}: shell must be an object with optional deny, ask and allow lists`);
  let sandbox = false;
  if (hook !== undefined) {
    const value =
      hook !== null && typeof hook === "object" && !Array.isArray(hook)
        ? (hook as { sandbox?: unknown }).sandbox
        : hook;
    if (value !== undefined && typeof value !== "boolean")
      throw new Error(`${path}: hook must be an object like { "sandbox": true }`);
    sandbox = value === true;
  }
  return { ...(shell !== undefined ? { rules: shell as ShellRules } : {}), sandbox, path };
}

/**
 * The Bash call's input with its command run by `sandboxExec` inside the sandbox: the
 * workspace writable is the project ($CLAUDE_PROJECT_DIR), else the config file's directory,
 * else the call's cwd. Quoted with `shellQuote`, so Claude Code's shell hands sandbox-exec
 * the original command line as one argument, unchanged.
 */
function sandboxedInput(
  input: Record<string, unknown>,
  command: string,
  config: HookConfig,
  cwd: string,
  projectDir: string | undefined,
  sandboxExec: readonly string[],
  shellQuote: (argv: readonly string[]) => string,
): Record<string, unknown> {
  const workspace =
    projectDir && isAbsolute(projectDir) ? projectDir : config.path ? dirname(config.path) : resolve(cwd);
  const argv = [
    ...sandboxExec,
    "--workspace",
    workspace,
    ...(config.path ? ["--config", config.path] : []),
    "--",
    command,
  ];
  return { ...input, command: shellQuote(argv) };
}

/** Decide one payload: a decision for a Bash call, `undefined` for other tools. */
export async function decideHook(
  payload: HookPayload,
  options: DecideHookOptions,
): Promise<HookDecision | undefined> {
  if (payload.tool_name !== "Bash") return undefined;
  const input = payload.tool_input as { command?: unknown } | undefined;
  const command = input?.command;
  if (typeof command !== "string")
    return { decision: "deny", reason: "capgate: the Bash call has no command string to check" };
  const cwd = typeof payload.cwd === "string" && payload.cwd !== "" ? payload.cwd : options.cwd;
  let config: HookConfig;
  try {
    config = hookConfig(options.config, cwd, options.projectDir);
  } catch (error) {
    return { decision: "deny", reason: `capgate cannot check this command: ${(error as Error).message}` };
  }
  // Loaded here, not at the top: a call to another tool never pays for the policy's code.
  const { checkShellCommand, shellQuote } = await import("./index.js");
  let verdict: Awaited<ReturnType<typeof checkShellCommand>>;
  try {
    verdict = await checkShellCommand(command, config.rules);
  } catch (error) {
    return { decision: "deny", reason: `capgate cannot check this command: ${(error as Error).message}` };
  }
  if (verdict.decision === "deny")
    return { decision: "deny", reason: verdict.reason ?? "denied by the capgate shell policy" };
  if (config.sandbox && !options.sandboxExec?.length)
    return {
      decision: "deny",
      reason:
        'capgate cannot sandbox this command: the config says "hook": { "sandbox": true }, but this hook was not told how to start capgate sandbox-exec',
    };
  const sandboxed =
    config.sandbox && options.sandboxExec
      ? sandboxedInput(
          input as Record<string, unknown>,
          command,
          config,
          cwd,
          options.projectDir,
          options.sandboxExec,
          shellQuote,
        )
      : undefined;
  if (verdict.decision === "ask") {
    const reason = verdict.reason ?? "the capgate shell policy asks first";
    // Approved or not by the person, the command still runs in the sandbox when the config says so.
    return sandboxed ? { decision: "ask", reason, updatedInput: sandboxed } : { decision: "ask", reason };
  }
  if (!sandboxed) return { decision: "allow" };
  return {
    decision: "allow",
    reason: "capgate: allowed by the shell policy; runs inside capgate's sandbox",
    updatedInput: sandboxed,
  };
}

/**
 * Run the hook: 0 with a decision JSON (deny/ask) or nothing (allow, other tools);
 * a payload that is not JSON is reported on stderr with exit 1 — Claude Code shows it to
 * the user (it is Claude Code's bug or a misconfigured hook, not the model's doing).
 */
export async function runClaudeCodeHook(options: ClaudeCodeHookOptions, io: HookIO): Promise<number> {
  // The hook is configured for Bash calls (matcher "Bash"), so the grammar's WebAssembly
  // starts compiling now, on V8's background threads, while this thread reads stdin and the
  // policy's code. A failure is reported by the check that needs the grammar.
  compileBashWasm().catch(() => {});
  const text = await io.stdin();
  let payload: HookPayload;
  try {
    payload = JSON.parse(text) as HookPayload;
  } catch {
    io.err(
      "capgate hook claude-code: stdin is not the hook's JSON payload (configure it as a PreToolUse command hook)",
    );
    return 1;
  }
  if (payload === null || typeof payload !== "object") {
    io.err("capgate hook claude-code: the hook payload must be a JSON object");
    return 1;
  }
  const projectDir = (io.env ?? process.env).CLAUDE_PROJECT_DIR;
  const decision = await decideHook(payload, {
    ...(options.config ? { config: options.config } : {}),
    ...(options.sandboxExec ? { sandboxExec: options.sandboxExec } : {}),
    cwd: io.cwd,
    ...(projectDir ? { projectDir } : {}),
  });
  // A plain allow says nothing, so Claude Code's own permission rules decide; an allow that
  // rewrites the command into the sandbox must say allow (Claude Code's deny and ask rules still apply).
  if (decision && (decision.decision !== "allow" || decision.updatedInput)) io.out(decisionJson(decision));
  return 0;
}
