import { type ProcessResult, runSandboxed, sandboxTarget } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { realWorkspace } from "@capgate/workspace";
import { splitBudget } from "./output.js";

export interface RunArgs {
  language: "javascript" | "python";
  source: string;
  timeout_ms?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Time between SIGTERM and SIGKILL when the program is stopped. */
export const KILL_GRACE_MS = 1000;
/** Headroom left under the host's per-call limit, so this handler reports the timeout itself. */
const HOST_MARGIN_MS = KILL_GRACE_MS + 1000;
/** Bytes of the summary kept for the status line and section headers. */
const FRAME_BYTES = 256;

interface Interpreter {
  file: string;
  args: string[];
  name: string;
}

/**
 * The source goes to the interpreter on stdin, not into a temp file: nothing to clean up,
 * nothing left in the workspace, and relative imports resolve against the workspace (the
 * cwd) — `import "./lib.mjs"` in JavaScript, `import lib` in Python.
 */
function interpreterFor(language: RunArgs["language"]): Interpreter {
  if (language === "javascript") {
    // The host's own Node.js, whatever PATH says; stdin read as an ES module (top-level await works).
    return { file: process.execPath, args: ["--input-type=module", "-"], name: "node" };
  }
  // -u: unbuffered, so output printed before a timeout is not lost; -B: no __pycache__ in the workspace.
  return { file: "python3", args: ["-u", "-B", "-"], name: "python3" };
}

/**
 * The effective timeout: the requested one (default 30 s), but short enough that the
 * process is stopped and reported here before the executor's own per-call timeout fires.
 */
export function effectiveTimeout(requested: number | undefined, hostTimeoutMs: number): number {
  const wanted = requested ?? DEFAULT_TIMEOUT_MS;
  return Math.max(100, Math.min(wanted, hostTimeoutMs - HOST_MARGIN_MS));
}

/**
 * code.run: the program runs in its own process group with the workspace as cwd and
 * exactly `ctx.env` as environment; on timeout or abort the whole group (children it
 * started included) is stopped. Output is captured head+tail while it streams (a flood
 * never sits in memory) and the summary splits the output cap between stdout and stderr.
 */
export async function runCode(args: RunArgs, ctx: ToolContext): Promise<ToolResult> {
  const interpreter = interpreterFor(args.language);
  const timeoutMs = effectiveTimeout(args.timeout_ms, ctx.limits.timeoutMs);
  const cwd = await realWorkspace(ctx.workspace);
  const started = performance.now();
  let result: ProcessResult;
  try {
    // Inside the same OS sandbox as shell.run: workspace writable, secrets hidden, no desktop.
    result = await runSandboxed({
      shellPolicy: ctx.policy.shell ?? {},
      sandbox: sandboxTarget(ctx),
      file: interpreter.file,
      args: interpreter.args,
      cwd,
      env: ctx.env,
      input: args.source,
      timeoutMs,
      maxOutputBytes: ctx.limits.outputBytes,
      signal: ctx.signal,
      killGraceMs: KILL_GRACE_MS,
    });
  } catch (error) {
    if (CapgateError.isInstance(error) && error.code === "spawn_failed")
      return notStarted(args, interpreter, ctx);
    throw error;
  }
  const durationMs = Math.round(performance.now() - started);
  const success = result.exitCode === 0 && !result.timedOut && !result.aborted;
  const capped = args.timeout_ms !== undefined && timeoutMs < args.timeout_ms;
  let status = `${args.language} program ${howItEnded(result, timeoutMs)}`;
  if (result.timedOut && capped) status += ` (timeout_ms ${args.timeout_ms} was lowered to the host's limit)`;
  if (result.timedOut) status += "; output printed before that is below";
  const [stdout, stderr] = splitBudget(
    { text: result.stdout, totalBytes: result.stdoutBytes },
    { text: result.stderr, totalBytes: result.stderrBytes },
    ctx.limits.outputBytes - FRAME_BYTES,
  );
  const sections = [`${status}.`];
  sections.push(section("stdout", stdout, result.stdoutBytes));
  if (result.stderrBytes > 0) sections.push(section("stderr", stderr, result.stderrBytes));
  return {
    success,
    summary: sections.join("\n"),
    data: {
      language: args.language,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      aborted: result.aborted,
      timeoutMs,
      durationMs,
      stdout: result.stdout,
      stderr: result.stderr,
      stdoutBytes: result.stdoutBytes,
      stderrBytes: result.stderrBytes,
      truncated: result.truncated || stdout !== result.stdout || stderr !== result.stderr,
    },
  };
}

function howItEnded(result: ProcessResult, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${timeoutMs} ms and was killed, with any processes it started`;
  if (result.aborted) return "was aborted and killed";
  if (result.signal) return `was killed by ${result.signal}`;
  return `exited with code ${result.exitCode}`;
}

function section(name: string, text: string, totalBytes: number): string {
  if (totalBytes === 0) return `--- ${name}: (empty) ---`;
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return `--- ${name} (${totalBytes} bytes) ---\n${body}`;
}

function notStarted(args: RunArgs, interpreter: Interpreter, ctx: ToolContext): ToolResult {
  const path = ctx.env.PATH ?? "(PATH is not set)";
  const summary =
    args.language === "python"
      ? `python3 is not available: it was not found on PATH (${path}). Install Python 3 or use language "javascript".`
      : `node could not be started from ${interpreter.file}.`;
  return { success: false, summary, data: { language: args.language, started: false } };
}
