import { CapgateError } from "@capgate/schema";
import type { NestedCallOptions, ToolResult } from "@capgate/tools";
import { type CallErrorInfo, errorReply, resultValue, valueReply } from "./crossing.js";
import { Deadline, sharedEngineTimeSpent } from "./deadline.js";
import { acquireThread, type EngineThread, releaseThread } from "./engine-threads.js";
import type { ScriptLimits } from "./limits.js";
import {
  abortedFailure,
  type DoneMessage,
  type FromEngineThread,
  lifetimeFailure,
  type ScriptCall,
  type ScriptFailure,
  STOP_ABORTED,
  STOP_LIFETIME,
  STOP_NONE,
  STOP_SLOT,
  STOP_TIMEOUT,
  timeoutFailure,
} from "./wire.js";

export type { ScriptFailure, ScriptFailureKind } from "./wire.js";

/** How a script reaches tools: the host's call service, bound to the enclosing call. */
export type ScriptCaller = (
  tool: string,
  args: Record<string, unknown>,
  options: NestedCallOptions,
) => Promise<ToolResult>;

export interface RunScriptOptions {
  source: string;
  timeoutMs: number;
  limits: ScriptLimits;
  /** The enclosing call's stop side (the run's abort, the executor's timeout). */
  signal: AbortSignal;
  call: ScriptCaller;
  /** Stops the enclosing call's timeout while an approval is asked (ToolContext.pauseTimeout). */
  pauseTimeout?: () => () => void;
  /**
   * Whose script this is (a session's or a run's own object, ToolContext.resources): one
   * owner may run at most MAX_RUNNING_PER_OWNER scripts at once, so one session cannot take
   * every slot of a shared host.
   */
  owner?: object;
}

export interface ScriptOutcome {
  /** The returned value as JSON text (absent when the script returned nothing or failed). */
  value?: string;
  failure?: ScriptFailure;
  logs: string[];
  /** console output dropped past the output limit, in lines. */
  droppedLogLines: number;
  /** Tool calls the script made (refused ones included). */
  calls: number;
  durationMs: number;
}

/** Most scripts running at once in this process (each holds a thread, an engine instance and its heap). */
const MAX_RUNNING = 16;
/** Most scripts running at once for one owner (a session, a run). */
const MAX_RUNNING_PER_OWNER = 4;
let running = 0;
const runningByOwner = new WeakMap<object, number>();

/**
 * How long a script asked to stop may take to notice it before its thread is ended. The
 * engine checks the stop flag every few thousand operations, so a script normally ends
 * within a millisecond; only a native loop that never reaches the check needs the thread
 * terminated.
 */
const STOP_GRACE_MS = 500;

/**
 * How often the host looks at the engine's running time. The engine checks it itself at
 * every interrupt; the host's look catches a native loop that never reaches the check while
 * the wall-clock deadline is paused for an approval.
 */
const WATCH_INTERVAL_MS = 100;

let nextRun = 0;

/**
 * Run one script on an engine thread (engine-thread.ts) and make its tool calls here, in
 * the host, through `call`. The host owns the wall-clock deadline (paused while a person is
 * asked to approve a call), the run's abort, the limit on calls in flight and the calls
 * themselves; the thread owns the engine. When the script must stop, the host sets the stop
 * flag the engine reads at every interrupt check, and ends the thread if the engine does
 * not notice within STOP_GRACE_MS: no script can hold the host, whatever native loop it runs.
 */
export async function runScript(options: RunScriptOptions): Promise<ScriptOutcome> {
  const owner = options.owner;
  const mine = owner ? (runningByOwner.get(owner) ?? 0) : 0;
  const busy =
    running >= MAX_RUNNING
      ? `${MAX_RUNNING} scripts are already running in this host`
      : mine >= MAX_RUNNING_PER_OWNER
        ? `${MAX_RUNNING_PER_OWNER} scripts of this session are already running`
        : undefined;
  if (busy) {
    return {
      failure: { kind: "busy", message: `${busy}; try again when one has finished.` },
      logs: [],
      droppedLogLines: 0,
      calls: 0,
      durationMs: 0,
    };
  }
  running++;
  if (owner) runningByOwner.set(owner, mine + 1);
  try {
    return await new HostRun(options).run();
  } finally {
    running--;
    if (owner) runningByOwner.set(owner, (runningByOwner.get(owner) ?? 1) - 1);
  }
}

class HostRun {
  readonly #options: RunScriptOptions;
  readonly #limits: ScriptLimits;
  readonly #run = ++nextRun;
  readonly #started = Date.now();
  readonly #logs: string[] = [];
  #thread: EngineThread | undefined;
  #inFlight = 0;
  #queued: Array<() => void> = [];
  /** Calls handed to the host's call service and not yet settled; the script ends only after they have. */
  readonly #inFlightCalls = new Set<Promise<void>>();
  /** Aborts nested calls still in flight when the script ends or is stopped. */
  readonly #callsAbort = new AbortController();
  #stopReason: ScriptFailure | undefined;
  #ended = false;
  #deadline: Deadline | undefined;
  #watch: ReturnType<typeof setInterval> | undefined;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #lifetime: ReturnType<typeof setTimeout> | undefined;
  /** Calls now waiting for a person's answer. */
  #waitingApproval = 0;
  /** Resumes the clocks, while they are stopped because every call in flight waits for a person. */
  #clocksPaused: (() => void) | undefined;
  /** Calls received and not yet started (started one per turn of the event loop). */
  readonly #toStart: ScriptCall[] = [];
  #starting = false;
  /** Calls the host has seen (the thread's own count, refusals included, comes with its result). */
  #callsMade = 0;
  #finish: ((outcome: Omit<DoneMessage, "type" | "run">) => void) | undefined;

  constructor(options: RunScriptOptions) {
    this.#options = options;
    this.#limits = options.limits;
  }

  async run(): Promise<ScriptOutcome> {
    const signal = this.#options.signal;
    const thread = await acquireThread();
    this.#thread = thread;
    thread.control[STOP_SLOT] = STOP_NONE;
    thread.clock.fill(0);
    const onAbort = () => this.#stop(abortedFailure(), STOP_ABORTED);
    let done: Omit<DoneMessage, "type" | "run">;
    try {
      done = await new Promise((resolve) => {
        this.#finish = resolve;
        thread.attach(
          (message) => this.#message(message),
          (error) => this.#threadDied(error),
        );
        this.#deadline = new Deadline(this.#options.timeoutMs, () =>
          this.#stop(timeoutFailure(this.#options.timeoutMs), STOP_TIMEOUT),
        );
        this.#watch = setInterval(() => this.#watchEngine(), WATCH_INTERVAL_MS);
        this.#watch.unref?.();
        // However long its approvals take, a script ends by this time.
        this.#lifetime = setTimeout(
          () => this.#stop(lifetimeFailure(this.#limits.maxLifetimeMs), STOP_LIFETIME),
          // setTimeout fires at once past 2^31 − 1 ms.
          Math.min(this.#limits.maxLifetimeMs, 2_147_483_647),
        );
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
        thread.post({
          type: "start",
          run: this.#run,
          source: this.#options.source,
          timeoutMs: this.#options.timeoutMs,
          limits: this.#limits,
        });
      });
    } finally {
      this.#ended = true;
      this.#deadline?.stop();
      clearInterval(this.#watch);
      clearTimeout(this.#grace);
      clearTimeout(this.#lifetime);
      this.#clocksPaused?.();
      this.#clocksPaused = undefined;
      signal.removeEventListener("abort", onAbort);
      this.#callsAbort.abort(new Error("the script has ended"));
      if (thread.exited) thread.detach();
      else releaseThread(thread);
      // Calls the script left running (not awaited, or stopped mid-way) end before the script
      // does: nothing it started runs on after its result is reported.
      await Promise.allSettled([...this.#inFlightCalls]);
    }
    return {
      ...(done.value !== undefined ? { value: done.value } : {}),
      ...(done.failure ? { failure: done.failure } : {}),
      logs: this.#logs,
      droppedLogLines: done.droppedLogLines,
      calls: done.calls,
      durationMs: Date.now() - this.#started,
    };
  }

  #message(message: FromEngineThread): void {
    if (message.run !== this.#run || this.#ended) return;
    if (message.type === "log") this.#logs.push(message.line);
    else if (message.type === "calls") this.#received(message.calls);
    else {
      const { type: _type, run: _run, ...outcome } = message;
      this.#finish?.(outcome);
    }
  }

  /** The thread ended without finishing the script: terminated by `#stop`, or it failed. */
  #threadDied(error: Error): void {
    const failure: ScriptFailure = this.#stopReason ?? {
      kind: /out of memory/i.test(error.message) ? "memory" : "thrown",
      message: `the script engine's thread failed: ${error.message}`,
    };
    this.#finish?.({ failure, droppedLogLines: 0, calls: this.#callsMade });
  }

  /** Engine time past the deadline while the wall clock is paused (a native loop during an approval wait). */
  #watchEngine(): void {
    const thread = this.#thread;
    if (!thread || this.#stopReason) return;
    if (sharedEngineTimeSpent(thread.clock, this.#options.timeoutMs, Date.now()))
      this.#stop(timeoutFailure(this.#options.timeoutMs), STOP_TIMEOUT);
  }

  #stop(reason: ScriptFailure, flag: number): void {
    if (this.#stopReason || this.#ended) return;
    this.#stopReason = reason;
    const thread = this.#thread;
    this.#callsAbort.abort(new Error(reason.message));
    if (!thread) return;
    Atomics.store(thread.control, STOP_SLOT, flag);
    thread.post({ type: "wake", run: this.#run });
    this.#grace = setTimeout(() => thread.terminate(), STOP_GRACE_MS);
  }

  /**
   * Start the calls of a batch one per turn of the event loop: checking a call's arguments
   * against its schema is work on this thread, and a batch of heavy ones started together
   * would hold it (other sessions, timers, the deadline) until all were checked.
   */
  #received(calls: readonly ScriptCall[]): void {
    this.#toStart.push(...calls);
    if (this.#starting) return;
    this.#starting = true;
    const next = () => {
      // The script has ended: calls it left unstarted are never made.
      const call = this.#ended ? undefined : this.#toStart.shift();
      if (!call) {
        this.#toStart.length = 0;
        this.#starting = false;
        return;
      }
      this.#call(call);
      if (this.#toStart.length > 0) setImmediate(next);
      else this.#starting = false;
    };
    next();
  }

  #call(message: ScriptCall): void {
    const { call: number, tool: name, args } = message;
    this.#callsMade++;
    const reply = (text: string) => {
      if (!this.#ended) this.#thread?.post({ type: "reply", run: this.#run, call: number, text });
    };
    const settled = this.#whenSlotFree().then(async () => {
      let text: string;
      try {
        if (this.#stopReason || this.#ended) {
          text = errorReply({
            tool: name,
            code: "script_stopped",
            message: `${name} was not called: the script has been stopped.`,
          });
        } else {
          const result = await this.#options.call(name, args, {
            signal: this.#callsAbort.signal,
            onApprovalWait: () => this.#approvalWait(),
          });
          text = result.success
            ? valueReply(name, resultValue(result), this.#limits)
            : errorReply({
                tool: name,
                code: "tool_failed",
                message: result.summary,
                result: safeJson(resultValue(result)),
              });
        }
      } catch (error) {
        text = errorReply(callErrorInfo(name, error));
      } finally {
        this.#slotDone();
      }
      reply(text);
    });
    this.#inFlightCalls.add(settled);
    void settled.finally(() => this.#inFlightCalls.delete(settled));
  }

  /**
   * A call starts waiting for a person. The clocks (the script's deadline, the enclosing
   * call's timeout) stop only while *every* call in flight waits for a person: a script
   * whose other calls go on working keeps using its time.
   */
  #approvalWait(): () => void {
    this.#waitingApproval++;
    this.#updateClocks();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#waitingApproval--;
      this.#updateClocks();
    };
  }

  #updateClocks(): void {
    const pause = this.#waitingApproval > 0 && this.#waitingApproval >= this.#inFlight && !this.#ended;
    if (pause && !this.#clocksPaused) {
      const resumeDeadline = this.#deadline?.pause();
      const resumeTimeout = this.#options.pauseTimeout?.();
      this.#clocksPaused = () => {
        resumeDeadline?.();
        resumeTimeout?.();
      };
    } else if (!pause && this.#clocksPaused) {
      const resume = this.#clocksPaused;
      this.#clocksPaused = undefined;
      resume();
    }
  }

  #whenSlotFree(): Promise<void> {
    if (this.#inFlight < this.#limits.maxConcurrentCalls) {
      this.#inFlight++;
      this.#updateClocks();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#queued.push(() => {
        this.#inFlight++;
        this.#updateClocks();
        resolve();
      });
    });
  }

  #slotDone(): void {
    this.#inFlight--;
    this.#updateClocks();
    this.#queued.shift()?.();
  }
}

function callErrorInfo(tool: string, error: unknown): CallErrorInfo {
  if (CapgateError.isInstance(error)) {
    return {
      tool,
      code: error.code,
      message: error.message,
      ...(error.property !== undefined ? { property: error.property } : {}),
    };
  }
  return {
    tool,
    code: "tool_error",
    message: `${tool} failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/** A value that survives JSON (a failed call's data), or undefined when it does not. */
function safeJson(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined || text.length > 1_000_000 ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
