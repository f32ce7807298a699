import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { type CallErrorInfo, errorReply, parseArguments, utf8Bytes } from "./crossing.js";
import { EngineTime } from "./deadline.js";
import { acquireEngine, type Engine, PAGE_BYTES, releaseEngine } from "./engine.js";
import type { ScriptLimits } from "./limits.js";
import { BODY_PREFIX, BODY_SUFFIX, PRELUDE, SCRIPT_FILE } from "./prelude.js";
import {
  abortedFailure,
  type DoneMessage,
  type FromEngineThread,
  lifetimeFailure,
  type ScriptCall,
  type ScriptFailure,
  type ScriptFailureKind,
  STOP_ABORTED,
  STOP_LIFETIME,
  STOP_NONE,
  STOP_SLOT,
  timeoutFailure,
} from "./wire.js";

/** What one script run on the engine's thread is given. */
export interface EngineRunOptions {
  run: number;
  source: string;
  timeoutMs: number;
  limits: ScriptLimits;
  /** Int32 [STOP_SLOT], set by the host to stop the script (read at every interrupt check). */
  control: Int32Array;
  /** The engine's running time, published for the host's watchdog. */
  clock: Float64Array;
  /** Post a message to the host. */
  send(message: FromEngineThread): void;
}

/** Longest tool name a script may pass (MCP names are `server/tool`, each part well under this). */
const MAX_TOOL_NAME = 256;

/** A C0 control character or DEL: never part of a tool name (a NUL would end it in C code). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * The tool name the script passed, whole. The prelude sends it as JSON text: a string read
 * from the engine is a C string, which ends at the first NUL (`"fs.read\u0000x"` would read
 * as `fs.read`) and loses lone surrogates; JSON escapes both. Anything else reads as "" (refused).
 */
function toolName(vm: QuickJSContext, handle: QuickJSHandle): string {
  if (vm.typeof(handle) !== "string") return "";
  try {
    const name: unknown = JSON.parse(vm.getString(handle));
    return typeof name === "string" ? name : "";
  } catch {
    return "";
  }
}

/**
 * One script on the engine's thread, in a fresh QuickJS runtime: the source as the body of
 * an async function, `tools` and `console` from the prelude, nothing else of the host. Tool
 * calls go to the host as messages; the script ends by returning, throwing, its deadline or
 * the enclosing call's abort (the host sets the stop flag), its engine time, its memory or
 * stack limit, or by waiting on a promise that nothing in flight can settle.
 */
export class EngineRun {
  readonly #options: EngineRunOptions;
  readonly #limits: ScriptLimits;
  #engine: Engine | undefined;
  #logBytes = 0;
  #droppedLogLines = 0;
  #calls = 0;
  #stopped = false;
  /** Set once the script's result is being read: a getter or toJSON may not start calls then. */
  #closed = false;
  #stopReason: ScriptFailure | undefined;
  /** Numbers of the calls handed to the host whose replies the script has not been given. */
  readonly #pending = new Set<number>();
  #nextCall = 0;
  /** Bytes of arguments of each call not yet answered (sent, or waiting to be sent). */
  readonly #pendingBytes = new Map<number, number>();
  #pendingTotal = 0;
  /** Calls made since the engine last yielded, sent to the host together when it does. */
  #outbox: ScriptCall[] = [];
  /** `deliver(number, text)` inside the engine; set while the script runs. */
  #deliver: QuickJSHandle | undefined;
  #vm: QuickJSContext | undefined;
  #settled = false;
  #wake: (() => void) | undefined;
  #runtime: QuickJSRuntime | undefined;
  /** The engine's running time, which counts against the deadline even while an approval is asked. */
  readonly #engineTime: EngineTime;

  constructor(options: EngineRunOptions) {
    this.#options = options;
    this.#limits = options.limits;
    this.#engineTime = new EngineTime(options.timeoutMs, options.clock);
  }

  /** The run's number (messages of other runs are ignored). */
  get number(): number {
    return this.#options.run;
  }

  /** Run the script to its end and say how it ended. */
  async run(): Promise<DoneMessage> {
    const engine = await acquireEngine(this.#limits.memoryBytes);
    this.#engine = engine;
    let clean = true;
    const runtime = engine.module.newRuntime();
    this.#runtime = runtime;
    let failure: ScriptFailure | undefined;
    let value: string | undefined;
    try {
      runtime.setMaxStackSize(this.#limits.stackBytes);
      runtime.setInterruptHandler(() => this.#interrupt());
      runtime.setModuleLoader(() => ({
        error: new Error("import() is not available in scripts: use the tools object to reach tools"),
      }));
      const vm = runtime.newContext();
      this.#vm = vm;
      try {
        // Stopped before it began (a deadline of a millisecond or two, an early abort).
        const outcome = this.#checkStopFlag()
          ? { failure: this.#stopReason ?? this.#pastDeadline() }
          : await this.#execute(vm, runtime);
        value = outcome.value;
        failure = outcome.failure;
        // An allocation failed somewhere in the engine's C code: do not trust the instance again.
        if (failure?.kind === "memory") clean = false;
      } finally {
        // Calls the script started and left running: the host starts them and, the script
        // having ended, aborts them (as any call in flight at the end).
        this.#sendCalls();
        this.#stopped = true;
        this.#pending.clear();
        this.#vm = undefined;
        vm.dispose();
      }
    } catch (error) {
      if (this.#stopReason) {
        // Stopped while the prelude or the script was being set up: the stop made the
        // engine refuse to enter a function (an ordinary engine exception, the instance is
        // sound). The failure is the stop's reason.
        failure = this.#stopReason;
      } else {
        // The engine failed inside its own code: most often the stack ran out during native
        // recursion (JSON of a deeply nested value). The instance is not reused.
        clean = false;
        failure = engineFailure(error);
      }
    } finally {
      // A failed instance is dropped whole: freeing its runtime would run its C code again.
      if (clean) {
        try {
          runtime.dispose();
        } catch {
          clean = false;
        }
      }
      releaseEngine(engine, clean);
    }
    return {
      type: "done",
      run: this.#options.run,
      ...(value !== undefined ? { value } : {}),
      ...(failure ? { failure } : {}),
      droppedLogLines: this.#droppedLogLines,
      calls: this.#calls,
    };
  }

  /** The host answered call `number` (ignored once the script no longer waits for it). */
  reply(number: number, text: string): void {
    if (!this.#pending.delete(number)) return;
    this.#pendingTotal -= this.#pendingBytes.get(number) ?? 0;
    this.#pendingBytes.delete(number);
    const deliver = this.#deliver;
    const vm = this.#vm;
    if (!this.#stopped && deliver && vm) {
      const id = vm.newNumber(number);
      const body = vm.newString(text);
      // Runs the script's resolve: it only queues the job that resumes the script.
      const done = this.#engineTime.run(() => vm.callFunction(deliver, vm.undefined, id, body));
      id.dispose();
      body.dispose();
      if (done.error) done.error.dispose();
      else done.value.dispose();
    }
    this.#wake?.();
  }

  /** The host set the stop flag (or just wants the script to look at it). */
  wake(): void {
    this.#checkStopFlag();
    this.#wake?.();
  }

  /** Hand the calls made since the last yield to the host; none once the script is stopped. */
  #sendCalls(): void {
    const calls = this.#outbox;
    if (calls.length === 0) return;
    this.#outbox = [];
    if (this.#stopReason || this.#checkStopFlag()) return;
    this.#options.send({ type: "calls", run: this.#options.run, calls });
  }

  /** Stop when the host has asked to; true when stopped. */
  #checkStopFlag(): boolean {
    const flag = Atomics.load(this.#options.control, STOP_SLOT);
    if (flag === STOP_NONE) return false;
    this.#stop(
      flag === STOP_ABORTED
        ? abortedFailure()
        : flag === STOP_LIFETIME
          ? lifetimeFailure(this.#limits.maxLifetimeMs)
          : this.#pastDeadline(),
    );
    return true;
  }

  async #execute(
    vm: QuickJSContext,
    runtime: QuickJSRuntime,
  ): Promise<{ value?: string; failure?: ScriptFailure }> {
    const hostCall = vm.newFunction("call", (name, args) => this.#hostCall(vm, name, args));
    const hostLog = vm.newFunction("log", (text) => {
      this.#log(vm, text);
    });
    const hostSettled = vm.newFunction("settled", () => {
      this.#settled = true;
    });
    const preludeResult = this.#engineTime.run(() => vm.evalCode(PRELUDE, "prelude.js"));
    const prelude = vm.unwrapResult(preludeResult);
    const helpers = vm.unwrapResult(
      this.#engineTime.run(() => vm.callFunction(prelude, vm.undefined, hostCall, hostLog, hostSettled)),
    );
    prelude.dispose();
    hostCall.dispose();
    hostLog.dispose();
    hostSettled.dispose();
    const finish = vm.getProp(helpers, 0);
    const describe = vm.getProp(helpers, 1);
    const deliver = vm.getProp(helpers, 2);
    const watch = vm.getProp(helpers, 3);
    helpers.dispose();
    this.#deliver = deliver;
    try {
      const compiled = this.#engineTime.run(() =>
        vm.evalCode(`${BODY_PREFIX}${this.#options.source}${BODY_SUFFIX}`, SCRIPT_FILE),
      );
      if (compiled.error) {
        const failure = this.#thrown(vm, describe, compiled.error, "syntax");
        compiled.error.dispose();
        return { failure };
      }
      const fn = compiled.value;
      if (vm.typeof(fn) !== "function") {
        fn.dispose();
        return {
          failure: {
            kind: "syntax",
            message: "the source must be the body of a function (it closed the function it is wrapped in)",
          },
        };
      }
      const started = this.#engineTime.run(() => vm.callFunction(fn, vm.undefined));
      fn.dispose();
      if (started.error) {
        const failure = this.#stopReason ?? this.#thrown(vm, describe, started.error, "thrown");
        started.error.dispose();
        return { failure };
      }
      const promise = started.value;
      try {
        const watching = this.#engineTime.run(() => vm.callFunction(watch, vm.undefined, promise));
        if (watching.error) {
          const failure = this.#stopReason ?? this.#thrown(vm, describe, watching.error, "thrown");
          watching.error.dispose();
          return { failure };
        }
        watching.value.dispose();
        return await this.#drive(vm, runtime, promise, finish, describe);
      } finally {
        promise.dispose();
      }
    } finally {
      this.#deliver = undefined;
      finish.dispose();
      describe.dispose();
      deliver.dispose();
      watch.dispose();
    }
  }

  /** Run jobs until the script's promise settles, sleeping while its tool calls are out. */
  async #drive(
    vm: QuickJSContext,
    runtime: QuickJSRuntime,
    promise: QuickJSHandle,
    finish: QuickJSHandle,
    describe: QuickJSHandle,
  ): Promise<{ value?: string; failure?: ScriptFailure }> {
    for (;;) {
      // Also checked here, not only by the interrupt: short drives may never reach its check.
      if (!this.#stopReason && this.#engineTime.spentAt(Date.now())) this.#stop(this.#pastDeadline());
      if (this.#stopReason) return { failure: this.#stopReason };
      const jobs = this.#engineTime.run(() => runtime.executePendingJobs());
      if (jobs.error) {
        // A job that threw past the script (the interrupt, out of memory).
        const failure = this.#stopReason ?? this.#thrown(vm, describe, jobs.error, "thrown");
        jobs.error.dispose();
        return { failure };
      }
      if (this.#stopReason) return { failure: this.#stopReason };
      if (!this.#settled) {
        if (this.#pending.size === 0 && !runtime.hasPendingJob()) return { failure: this.#stalled() };
        this.#sendCalls();
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      const state = vm.getPromiseState(promise);
      if (state.type !== "pending") this.#closed = true;
      if (state.type === "fulfilled") {
        const result = this.#engineTime.run(() => vm.callFunction(finish, vm.undefined, state.value));
        state.value.dispose();
        if (result.error) {
          const failure = this.#stopReason ?? this.#thrown(vm, describe, result.error, "result");
          result.error.dispose();
          return { failure };
        }
        const text = vm.typeof(result.value) === "string" ? vm.getString(result.value) : "";
        result.value.dispose();
        return finished(text);
      }
      if (state.type === "rejected") {
        const failure = this.#stopReason ?? this.#thrown(vm, describe, state.error, "thrown");
        state.error.dispose();
        return { failure };
      }
      return { failure: this.#stalled() };
    }
  }

  /**
   * True when the engine's memory has grown to its maximum. QuickJS reports an allocation
   * that failed with no room left even for an error object as a thrown `null`, and a
   * promise reaction that failed that way only rejects its own promise: a flood of
   * promise jobs would then look like a script that threw null, or one waiting forever.
   */
  #memoryExhausted(): boolean {
    const engine = this.#engine;
    if (!engine) return false;
    try {
      return (
        engine.module.getWasmMemory().buffer.byteLength >= engine.pages * PAGE_BYTES - EXHAUSTED_MARGIN_BYTES
      );
    } catch {
      return false;
    }
  }

  #outOfMemory(): ScriptFailure {
    return {
      kind: "memory",
      message: `the script ran out of memory (limit ${this.#limits.memoryBytes} bytes)`,
    };
  }

  /** Waiting on nothing: out of memory when the engine is full (its jobs died there), else stalled. */
  #stalled(): ScriptFailure {
    return this.#memoryExhausted() ? this.#outOfMemory() : stalled();
  }

  /**
   * The engine's interrupt check (called very often while the script runs: one clock read).
   * The wall-clock deadline stops while a person is asked to approve a call, but the time
   * the engine spends running always counts: a script busy while an approval is pending
   * blocks the host's event loop, and only this check can end it.
   */
  #interrupt(): boolean {
    if (this.#stopped) return true;
    if (this.#checkStopFlag()) return true;
    if (!this.#engineTime.spentAt(Date.now())) return false;
    this.#stop(this.#pastDeadline());
    return true;
  }

  #pastDeadline(): ScriptFailure {
    return timeoutFailure(this.#options.timeoutMs);
  }

  #stop(reason: ScriptFailure): void {
    if (this.#stopReason) return;
    this.#stopReason = reason;
    this.#stopped = true;
    // The interrupt alone does not stop a script that keeps calling async functions: QuickJS
    // turns any exception inside an async function, the uncatchable interrupt included, into
    // that function's rejected promise, and its caller runs on (\`for (;;) f()\` with a long
    // async \`f\` took every interrupt inside \`f\` and never ended). From the stop on, no
    // function can be entered at all — no call, getter, trap, promise job or resumed async
    // function (the stack limit is made 1 byte; the engine checks it on every entry) — so
    // the frames still running each end at their next interrupt check.
    try {
      this.#runtime?.setMaxStackSize(1);
    } catch {
      // A runtime already freed has nothing left to run.
    }
    this.#wake?.();
  }

  #log(vm: QuickJSContext, text: QuickJSHandle): void {
    if (vm.typeof(text) !== "string") return;
    const line = vm.getString(text);
    const bytes = utf8Bytes(line) + 1;
    if (this.#logBytes + bytes > this.#limits.outputBytes) {
      this.#droppedLogLines++;
      return;
    }
    this.#logBytes += bytes;
    this.#options.send({ type: "log", run: this.#options.run, line });
  }

  /**
   * `tools.<cap>.<verb>(args)` / `tools.call(name, args)`: the reply text at once for a
   * refusal, else a promise of it; never a host exception (its stack would name host files).
   */
  #hostCall(vm: QuickJSContext, nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const name = toolName(vm, nameHandle);
    const refuse = (info: CallErrorInfo) => vm.newString(errorReply(info));
    if (this.#stopped || this.#closed)
      return refuse({
        tool: name.slice(0, MAX_TOOL_NAME),
        code: "script_stopped",
        message: `${name.slice(0, MAX_TOOL_NAME)} was not called: the script has ${this.#closed && !this.#stopped ? "returned" : "been stopped"}.`,
      });
    if (name.length === 0 || name.length > MAX_TOOL_NAME)
      return refuse({
        tool: name.slice(0, MAX_TOOL_NAME),
        code: "unknown_tool",
        property: "tool",
        message: `A tool name is 1 to ${MAX_TOOL_NAME} characters, like "fs.read" or "server/tool".`,
      });
    if (CONTROL_CHARACTER.test(name))
      return refuse({
        tool: name,
        code: "unknown_tool",
        property: "tool",
        message: `The tool name ${JSON.stringify(name)} contains a control character (such as NUL); no tool is named that way.`,
      });
    if (this.#calls >= this.#limits.maxCalls)
      return refuse({
        tool: name,
        code: "call_limit",
        message: `${name} was not called: a script may make at most ${this.#limits.maxCalls} tool calls. Do the rest in another script.run.`,
      });
    const argsText = vm.typeof(argsHandle) === "string" ? vm.getString(argsHandle) : "";
    this.#calls++;
    const args = parseArguments(name, argsText, this.#limits);
    if (!args.ok) return refuse(args.info);

    if (this.#pendingTotal + args.bytes > this.#limits.pendingBytes)
      return refuse({
        tool: name,
        code: "too_large",
        property: "arguments",
        message: `${name} was not called: the script's calls still waiting for an answer hold ${this.#pendingTotal} bytes of arguments, and this one's ${args.bytes} would pass the ${this.#limits.pendingBytes}-byte limit. Await some calls before making more.`,
      });
    const number = ++this.#nextCall;
    this.#pending.add(number);
    this.#pendingBytes.set(number, args.bytes);
    this.#pendingTotal += args.bytes;
    this.#outbox.push({ call: number, tool: name, args: args.value });
    return vm.newNumber(number);
  }

  /** What the script threw, described inside the engine; the deadline or a limit when that was the cause. */
  #thrown(
    vm: QuickJSContext,
    describe: QuickJSHandle,
    error: QuickJSHandle,
    kind: ScriptFailureKind,
  ): ScriptFailure {
    this.#closed = true;
    if (this.#stopReason || this.#checkStopFlag()) return this.#stopReason ?? this.#pastDeadline();
    let info: Record<string, unknown> = {};
    // Describing runs script code (a getter on the error); the deadline still applies.
    const described = this.#engineTime.run(() => vm.callFunction(describe, vm.undefined, error));
    if (described.error) described.error.dispose();
    else {
      if (vm.typeof(described.value) === "string") {
        try {
          info = JSON.parse(vm.getString(described.value)) as Record<string, unknown>;
        } catch {
          info = {};
        }
      }
      described.value.dispose();
    }
    const message = typeof info.message === "string" ? info.message : "the script failed";
    if (/out of memory/i.test(message)) return this.#outOfMemory();
    // A thrown null or undefined with the engine full is an allocation that failed.
    if (
      described.error !== undefined ||
      /^the script threw a non-Error value: (null|undefined)$/.test(message)
    )
      if (this.#memoryExhausted()) return this.#outOfMemory();
    if (/stack overflow|call stack size/i.test(message))
      return {
        kind: "stack",
        message: `the script nested calls too deeply (stack limit ${this.#limits.stackBytes} bytes)`,
      };
    const where = locate(typeof info.stack === "string" ? info.stack : "");
    return {
      kind,
      message,
      ...where,
      ...(typeof info.code === "string" ? { code: info.code } : {}),
      ...(typeof info.property === "string" ? { property: info.property } : {}),
      ...(typeof info.tool === "string" ? { tool: info.tool } : {}),
    };
  }
}

/**
 * How close to its maximum the engine's memory counts as full. The engine grows its memory
 * to whatever an allocation asks, capped at the maximum, so a small allocation fails only
 * there; a large one that fails below it says "out of memory" itself.
 */
const EXHAUSTED_MARGIN_BYTES = 1024 * 1024;

function stalled(): ScriptFailure {
  return {
    kind: "stalled",
    message:
      "the script is waiting on a promise that nothing will settle (there are no timers, and no tool call is in flight)",
  };
}

function finished(text: string): { value?: string; failure?: ScriptFailure } {
  let reply: { ok?: unknown; text?: unknown; message?: unknown } | undefined;
  try {
    reply = JSON.parse(text) as typeof reply;
  } catch {
    reply = undefined;
  }
  if (!reply || typeof reply !== "object" || reply.ok !== true) {
    const why = typeof reply?.message === "string" ? reply.message : "the returned value could not be read";
    return { failure: { kind: "result", message: why } };
  }
  return typeof reply.text === "string" ? { value: reply.text } : {};
}

/** The first position in the script's own file, with line 1's columns shifted back by the wrapper. */
function locate(stack: string): { line?: number; column?: number } {
  const match = new RegExp(`${SCRIPT_FILE.replace(".", "\\.")}:(\\d+):(\\d+)`).exec(stack);
  if (!match) return {};
  const line = Number(match[1]);
  let column = Number(match[2]);
  if (line === 1) column = Math.max(1, column - BODY_PREFIX.length);
  return { line, column };
}

function engineFailure(error: unknown): ScriptFailure {
  if (error instanceof RangeError)
    return {
      kind: "stack",
      message:
        "the script nested too deeply for the engine (a value or expression nested thousands of levels deep) and was stopped",
    };
  const message = error instanceof Error ? error.message : String(error);
  if (/out of memory|memory access out of bounds/i.test(message))
    return { kind: "memory", message: "the script ran out of memory and was stopped" };
  return { kind: "thrown", message: `the script engine failed: ${message}` };
}
