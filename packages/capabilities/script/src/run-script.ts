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
  type ScriptCall,
  type ScriptFailure,
  STOP_ABORTED,
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
let running = 0;

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
  if (running >= MAX_RUNNING) {
    return {
      failure: {
        kind: "busy",
        message: `${MAX_RUNNING} scripts are already running in this host; try again when one has finished.`,
      },
      logs: [],
      droppedLogLines: 0,
      calls: 0,
      durationMs: 0,
    };
  }
  running++;
  try {
    return await new HostRun(options).run();
  } finally {
    running--;
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
    else if (message.type === "calls") for (const call of message.calls) this.#call(call);
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
            onApprovalWait: () => this.#pauseClocks(),
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

  #pauseClocks(): () => void {
    const resumeDeadline = this.#deadline?.pause();
    const resumeTimeout = this.#options.pauseTimeout?.();
    return () => {
      resumeDeadline?.();
      resumeTimeout?.();
    };
  }

  #whenSlotFree(): Promise<void> {
    if (this.#inFlight < this.#limits.maxConcurrentCalls) {
      this.#inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#queued.push(() => {
        this.#inFlight++;
        resolve();
      });
    });
  }

  #slotDone(): void {
    this.#inFlight--;
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
