import {
  DEFAULT_KILL_GRACE_MS,
  killMarkedProcesses,
  terminateGroup,
  trackGroup,
} from "@capgate/process-group";
import { CapgateError, closestMatch } from "@capgate/schema";
import type { HostResources } from "@capgate/tools";
import { execa, loadExeca } from "./lazy-execa.js";
import { HeadTailCapture, tailLines } from "./output-capture.js";
import { containCommand } from "./process-containment.js";
import { bashArgv, sandboxCommand } from "./sandbox.js";
import { type SandboxTarget, sandboxOptionsFor } from "./sandbox-run.js";
import { assertShellAllowed, type ShellGateOptions } from "./shell-check.js";

/** The `ctx.resources` key under which `backgroundProcesses(ctx)` keeps the manager. */
export const BACKGROUND_PROCESSES_KEY = "capgate.tools.background-processes";

export interface BackgroundProcessInfo {
  id: string;
  pid: number | undefined;
  /** The command line as started (for shell processes, the shell string). */
  command: string;
  cwd: string;
  startedAt: string;
  running: boolean;
  exitCode: number | null;
  signal: string | null;
}

export interface BackgroundOutput {
  info: BackgroundProcessInfo;
  /** The last `tailLines` lines of combined stdout+stderr. */
  text: string;
  /** Bytes the process wrote that fell out of the kept window. */
  droppedBytes: number;
}

export interface StartProcessOptions {
  file: string;
  args?: readonly string[];
  /** Confine it with `resolveInWorkspace` first. */
  cwd: string;
  /** The whole environment (pass `ctx.env`); process.env is not merged in. */
  env: Record<string, string | undefined>;
  /** Shown in list(); defaults to the file and args. */
  label?: string;
  /** Called once the process has exited (sandbox clean-up); notices it returns join the output. */
  onExit?: () => string[] | undefined;
  /**
   * An OS sandbox's mark (`SandboxedCommand.mark`): its processes are killed too when the
   * group stops. `file` is then the sandbox and is run as is; any other program is
   * contained first (`containCommand`), so nothing it starts outlives its stop.
   */
  sandboxMark?: string;
}

export interface StartShellOptions extends ShellGateOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** Where the OS sandbox puts the command (pass `sandboxTarget(ctx)`; default workspace: `cwd`). */
  sandbox?: SandboxTarget;
}

export interface BackgroundProcessesOptions {
  /** Output kept per process (the newest bytes), default 1 MiB. */
  maxOutputBytes?: number;
  /** SIGTERM → SIGKILL grace on stop, default 2000 ms. */
  killGraceMs?: number;
  /** Most processes running at once, default 16. */
  maxRunning?: number;
}

interface Entry {
  info: BackgroundProcessInfo;
  output: HeadTailCapture;
  exited: Promise<void>;
  /** Stop the group and, for a sandbox, every process carrying its mark. */
  terminate: () => Promise<void>;
}

/**
 * Long-running processes (dev servers, watchers) started by one host: each in its own
 * process group, output kept in a ring buffer, the whole group killed on stop, on
 * stopAll, and on host exit. Keep one per host in `ctx.resources` — use
 * `backgroundProcesses(ctx)` — so the host's `closeAll()` stops them all.
 */
export class BackgroundProcesses {
  readonly #entries = new Map<string, Entry>();
  readonly #maxOutputBytes: number;
  readonly #graceMs: number;
  readonly #maxRunning: number;
  #next = 1;

  constructor(options: BackgroundProcessesOptions = {}) {
    this.#maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
    this.#graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.#maxRunning = options.maxRunning ?? 16;
  }

  /** Start a program (no shell). Returns at once with its id; the process keeps running. */
  start(options: StartProcessOptions): BackgroundProcessInfo {
    const running = this.list().filter((p) => p.running).length;
    if (running >= this.#maxRunning) {
      throw new CapgateError(
        "limit_exceeded",
        `${running} background processes are already running (the limit is ${this.#maxRunning}); stop one first.`,
      );
    }
    const contained = options.sandboxMark
      ? undefined
      : containCommand(options.file, options.args ?? [], options.env);
    const mark = options.sandboxMark ?? contained?.mark;
    const id = `p${this.#next++}`;
    const output = new HeadTailCapture(this.#maxOutputBytes, 0);
    const child = execa(contained?.file ?? options.file, contained?.args ?? [...(options.args ?? [])], {
      cwd: options.cwd,
      env: (contained?.env ?? options.env) as Record<string, string>,
      extendEnv: false,
      detached: true,
      cleanup: false,
      buffer: false,
      encoding: "buffer",
      reject: false,
      stdin: "ignore",
      windowsHide: true,
    });
    const info: BackgroundProcessInfo = {
      id,
      pid: child.pid,
      command: options.label ?? [options.file, ...(options.args ?? [])].join(" "),
      cwd: options.cwd,
      startedAt: new Date().toISOString(),
      running: child.pid !== undefined,
      exitCode: null,
      signal: null,
    };
    if (child.pid !== undefined) trackGroup(child.pid, mark);
    const pid = child.pid;
    let terminating: Promise<void> | undefined;
    const terminate = () => {
      terminating ??= (pid === undefined ? Promise.resolve() : terminateGroup(pid, this.#graceMs)).then(
        () => {
          if (mark) killMarkedProcesses(mark);
        },
      );
      return terminating;
    };
    // Leftovers of the group (and of a sandbox) go when the process itself exits — before its
    // pipes close, which a leftover holding them open would delay forever.
    child.once("exit", () => void terminate());
    child.stdout?.on("data", (c: Uint8Array) => output.push(c));
    child.stderr?.on("data", (c: Uint8Array) => output.push(c));
    const exited = child.then((result) => {
      info.running = false;
      info.exitCode = result.exitCode ?? null;
      info.signal = result.signal ?? null;
      if (result.failed && result.exitCode === undefined && result.signal === undefined) {
        output.push(
          new TextEncoder().encode(`[could not start: ${result.shortMessage ?? result.message}]\n`),
        );
      }
      void terminate(); // leftovers of the group
      for (const notice of options.onExit?.() ?? []) {
        output.push(new TextEncoder().encode(`[capgate] ${notice}\n`));
      }
    });
    this.#entries.set(id, { info, output, exited, terminate });
    return { ...info };
  }

  /**
   * Start a shell command line (`bash --noprofile --norc -c`) — only after the shell policy
   * allowed it, inside the OS sandbox unless `policy.sandbox` is "off".
   * @throws CapgateError `sandbox_unavailable` (nothing started) when the sandbox cannot start.
   */
  async startShell(options: StartShellOptions): Promise<BackgroundProcessInfo> {
    await assertShellAllowed(options);
    await loadExeca();
    const wrapped = await sandboxCommand(
      bashArgv(options.command),
      sandboxOptionsFor(options.cwd, options.env, options.policy, options.sandbox),
    );
    try {
      return this.start({
        file: wrapped.file,
        args: wrapped.args,
        cwd: options.cwd,
        env: wrapped.env,
        label: options.command,
        onExit: wrapped.release,
        ...(wrapped.mark ? { sandboxMark: wrapped.mark } : {}),
      });
    } catch (error) {
      wrapped.release();
      throw error;
    }
  }

  /** The last `lines` lines of a process's combined output (default 100) and its state. */
  output(id: string, lines = 100): BackgroundOutput {
    const entry = this.#get(id);
    const captured = entry.output.result();
    return {
      info: { ...entry.info },
      text: tailLines(captured.text, lines),
      droppedBytes: Math.max(0, entry.output.totalBytes - entry.output.maxBytes),
    };
  }

  /** Stop a process and everything it started (SIGTERM, SIGKILL after the grace period); it leaves the list. */
  async stop(id: string): Promise<BackgroundProcessInfo> {
    const entry = this.#get(id);
    await entry.terminate();
    await entry.exited;
    this.#entries.delete(id);
    return { ...entry.info };
  }

  list(): BackgroundProcessInfo[] {
    return [...this.#entries.values()].map((e) => ({ ...e.info }));
  }

  /** Stop every process (the ctx.resources dispose hook). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#entries.keys()].map((id) => this.stop(id)));
  }

  #get(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry) return entry;
    const ids = [...this.#entries.keys()];
    const guess = closestMatch(id, ids);
    throw new CapgateError(
      "not_found",
      `no background process '${id}'${guess ? `; did you mean '${guess}'?` : ids.length ? `; running: ${ids.join(", ")}` : "; none is running"}.`,
      { property: "id" },
    );
  }
}

/** The host's BackgroundProcesses, created on first use and stopped by `ctx.resources.closeAll()`. */
export async function backgroundProcesses(
  ctx: { resources: HostResources },
  options?: BackgroundProcessesOptions,
): Promise<BackgroundProcesses> {
  // Its starts are synchronous: execa is loaded here, the way every loader handles.
  await loadExeca();
  return ctx.resources.acquire(
    BACKGROUND_PROCESSES_KEY,
    () => new BackgroundProcesses(options),
    (manager) => manager.stopAll(),
  );
}
