import {
  DEFAULT_KILL_GRACE_MS,
  killMarkedProcesses,
  terminateGroup,
  trackGroup,
  untrackGroup,
} from "@capgate/process-group";
import { CapgateError } from "@capgate/schema";
import { DEFAULT_LIMITS } from "@capgate/tools";
import { execa, loadExeca } from "./lazy-execa.js";
import { HeadTailCapture } from "./output-capture.js";
import { containCommand } from "./process-containment.js";

export interface RunProcessOptions {
  /** The program (looked up on `env.PATH` when it has no slash). Never run through a shell. */
  file: string;
  args?: readonly string[];
  /** Working directory — confine it first with `resolveInWorkspace`. Required: no implicit process.cwd(). */
  cwd: string;
  /**
   * The child's whole environment (pass `ctx.env`). Required and used as is: process.env is
   * never merged in, so secrets of the host do not leak by default.
   */
  env: Record<string, string | undefined>;
  /** Kill the process group after this long (default DEFAULT_LIMITS.timeoutMs). */
  timeoutMs?: number;
  /** Cap for each of stdout and stderr, in UTF-8 bytes; head and tail are kept (default DEFAULT_LIMITS.outputBytes). */
  maxOutputBytes?: number;
  /** Aborting kills the process group (pass `ctx.signal`). */
  signal?: AbortSignal;
  /** Written to stdin, then stdin is closed. Without it stdin is /dev/null. */
  input?: string | Uint8Array;
  /** Time between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /**
   * An OS sandbox's mark (`SandboxedCommand.mark`): its processes are killed too when the
   * group stops. `file` is then the sandbox (which has its own pid namespace) and is run as
   * is; any other program is contained first (`containCommand`).
   */
  sandboxMark?: string;
}

export interface ProcessResult {
  /** Exit status, or null when the process was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the process (e.g. "SIGTERM" after a timeout), or null. */
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** True when stdout or stderr was cut (the text then carries a `…[N bytes truncated]…` marker). */
  truncated: boolean;
  /** Bytes the process wrote to each stream, kept or not. */
  stdoutBytes: number;
  stderrBytes: number;
}

/**
 * Run a program without a shell, in its own process group, and collect its output.
 *
 * Nothing the program starts outlives the call: it runs contained (`containCommand`: its
 * own pid namespace, which takes everything in it along when the program exits — also what
 * left the group with setsid or a double fork — and dies with the host, `kill -9`
 * included). The group is stopped — SIGTERM, then SIGKILL after `killGraceMs` — on
 * timeout, on abort, and when the child exits; it is also SIGKILLed if the host exits.
 * Output is captured as it streams, keeping head and tail within
 * `maxOutputBytes` per stream, so a flood never sits in memory.
 *
 * Never rejects for what the process did (non-zero exit, timeout, abort): read the result.
 * @throws CapgateError `spawn_failed` when the program cannot be started (not found, not executable, bad cwd).
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LIMITS.timeoutMs;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_LIMITS.outputBytes;
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  if (typeof options.cwd !== "string" || options.cwd === "")
    throw new TypeError("runProcess: cwd is required");
  if (!options.env || typeof options.env !== "object") throw new TypeError("runProcess: env is required");

  const stdout = new HeadTailCapture(maxOutputBytes);
  const stderr = new HeadTailCapture(maxOutputBytes);
  if (options.signal?.aborted) {
    return emptyResult({ aborted: true });
  }
  await loadExeca();

  const contained = options.sandboxMark
    ? undefined
    : containCommand(options.file, options.args ?? [], options.env);
  const mark = options.sandboxMark ?? contained?.mark;
  const child = execa(contained?.file ?? options.file, contained?.args ?? [...(options.args ?? [])], {
    cwd: options.cwd,
    env: (contained?.env ?? options.env) as Record<string, string>,
    extendEnv: false,
    detached: true, // own process group, so the whole tree can be signalled
    cleanup: false, // we kill the group ourselves, also on host exit
    buffer: false,
    encoding: "buffer",
    reject: false,
    stripFinalNewline: false,
    windowsHide: true,
    ...(options.input === undefined ? { stdin: "ignore" as const } : { input: options.input }),
  });
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid, mark);
  child.stdout?.on("data", (chunk: Uint8Array) => stdout.push(chunk));
  child.stderr?.on("data", (chunk: Uint8Array) => stderr.push(chunk));

  let timedOut = false;
  let aborted = false;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (pid === undefined) return;
    stopping ??= terminateGroup(pid, graceMs).then(() => {
      if (mark) killMarkedProcesses(mark);
    });
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, timeoutMs);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // When the child itself exits, end what it left behind; its pipes close once they are gone.
  child.once("exit", stop);

  try {
    const result = await child;
    if (
      result.failed &&
      result.exitCode === undefined &&
      result.signal === undefined &&
      !timedOut &&
      !aborted
    ) {
      const code = (result as { code?: string }).code;
      throw new CapgateError(
        "spawn_failed",
        `could not start '${options.file}': ${code === "ENOENT" ? "no such program or working directory" : (result.shortMessage ?? result.message)}`,
        { cause: result },
      );
    }
    await stopping;
    const out = stdout.result();
    const err = stderr.result();
    return {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      stdout: out.text,
      stderr: err.text,
      timedOut,
      aborted,
      truncated: out.truncated || err.truncated,
      stdoutBytes: stdout.totalBytes,
      stderrBytes: stderr.totalBytes,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if (pid !== undefined && !stopping) untrackGroup(pid);
  }
}

function emptyResult(over: Partial<ProcessResult>): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    aborted: false,
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 0,
    ...over,
  };
}

/** One line for a model: how the process ended. */
export function describeExit(result: ProcessResult, timeoutMs?: number): string {
  if (result.timedOut) return `timed out${timeoutMs ? ` after ${timeoutMs} ms` : ""} and was killed`;
  if (result.aborted) return "aborted and killed";
  if (result.signal) return `killed by ${result.signal}`;
  return `exit code ${result.exitCode}`;
}
