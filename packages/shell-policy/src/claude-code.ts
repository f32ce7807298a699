import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { ShellRules } from "./config.js";

/**
 * The shell policy as a Claude Code PreToolUse hook (`capgate hook claude-code` runs it). Claude Code runs it before
 * every tool call with the call as JSON on stdin ({hook_event_name, tool_name,
 * tool_input: {command}, cwd, …}); for `Bash` the command goes through capgate's shell
 * policy (the built-in rules plus the `shell` deny/ask rules of capgate.config.json) and
 * the answer is Claude Code's decision JSON on stdout:
 *   deny → {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":…}}
 *   ask  → the same with "ask" (Claude Code asks the user, showing the reason)
 *   allow → nothing (exit 0): Claude Code's own permission rules still apply.
 * Other tools pass silently. It fails closed: a Bash call it cannot check (a bad config, a
 * payload without a command) is denied with the reason, never let through by a crash.
 *
 * It loads the parser only for a Bash call: the hook runs before every tool call, so its
 * cold start matters (bench `cli.hook_ratio`).
 */
export interface HookIO {
  stdin: () => Promise<string>;
  out: (text: string) => void;
  err: (text: string) => void;
  cwd: string;
}

export interface HookPayload {
  hook_event_name?: unknown;
  tool_name?: unknown;
  tool_input?: unknown;
  cwd?: unknown;
}

/** The hook's answer for one Bash call. */
export type HookDecision = { decision: "allow" } | { decision: "deny" | "ask"; reason: string };

const decisionJson = (decision: "deny" | "ask", reason: string) =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: decision,
      permissionDecisionReason: reason,
    },
  });

/**
 * The config file the hook applies: `--config` (relative to the call's cwd); else the
 * project's (`$CLAUDE_PROJECT_DIR/capgate.config.json`, which Claude Code sets for hooks),
 * whatever directory the shell has `cd`-ed to since; else the nearest capgate.config.json in
 * the call's cwd or a directory above it. Claude Code keeps the working directory between
 * Bash calls, so after `cd sub` the payload's cwd is `sub`, and looking only there would
 * miss the project's rules.
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

/** The `shell` section of the config the hook applies (hookConfigPath), or undefined when there is none. */
function shellRules(
  configPath: string | undefined,
  cwd: string,
  projectDir: string | undefined,
): ShellRules | undefined {
  const path = hookConfigPath(configPath, cwd, projectDir);
  if (path === undefined) return undefined;
  if (!existsSync(path)) throw new Error(`the config file ${path} does not exist`);
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path} is not valid JSON (${(error as Error).message})`);
  }
  if (config === null || typeof config !== "object" || Array.isArray(config))
    throw new Error(`${path} must hold a JSON object`);
  const shell = (config as { shell?: unknown }).shell;
  if (shell === undefined) return undefined;
  if (shell === null || typeof shell !== "object" || Array.isArray(shell))
    throw new Error(`${path}: shell must be an object with optional deny and ask lists`);
  return shell as ShellRules;
}

/** Decide one payload: undefined for a tool other than Bash (the hook stays silent). */
export async function decideHook(
  payload: HookPayload,
  options: { config?: string; cwd: string; projectDir?: string },
): Promise<HookDecision | undefined> {
  if (payload.tool_name !== "Bash") return undefined;
  const input = payload.tool_input as { command?: unknown } | undefined;
  const command = input?.command;
  if (typeof command !== "string")
    return { decision: "deny", reason: "capgate: the Bash call has no command string to check" };
  const cwd = typeof payload.cwd === "string" && payload.cwd !== "" ? payload.cwd : options.cwd;
  let rules: ShellRules | undefined;
  try {
    rules = shellRules(options.config, cwd, options.projectDir);
  } catch (error) {
    return { decision: "deny", reason: `capgate cannot check this command: ${(error as Error).message}` };
  }
  const { checkShellCommand } = await import("./index.js");
  let verdict: Awaited<ReturnType<typeof checkShellCommand>>;
  try {
    verdict = await checkShellCommand(command, rules);
  } catch (error) {
    return { decision: "deny", reason: `capgate cannot check this command: ${(error as Error).message}` };
  }
  if (verdict.decision === "allow") return { decision: "allow" };
  const fallback =
    verdict.decision === "deny"
      ? "denied by the capgate shell policy"
      : "the capgate shell policy asks first";
  return { decision: verdict.decision, reason: verdict.reason ?? fallback };
}

/**
 * Run the hook: 0 with a decision JSON (deny/ask) or nothing (allow, other tools);
 * a payload that is not JSON is reported on stderr with exit 1 — Claude Code shows it to
 * the user (it is Claude Code's bug or a misconfigured hook, not the model's doing).
 */
export async function runClaudeCodeHook(options: { config?: string }, io: HookIO): Promise<number> {
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
  const decision = await decideHook(payload, {
    ...(options.config ? { config: options.config } : {}),
    cwd: io.cwd,
    ...(process.env.CLAUDE_PROJECT_DIR ? { projectDir: process.env.CLAUDE_PROJECT_DIR } : {}),
  });
  if (decision && decision.decision !== "allow") io.out(decisionJson(decision.decision, decision.reason));
  return 0;
}
