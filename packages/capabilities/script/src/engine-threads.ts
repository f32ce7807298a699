import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { compiledModule } from "./engine.js";
import type { EngineThreadData, FromEngineThread, ToEngineThread } from "./wire.js";

/**
 * Threads that run scripts (engine-thread.ts), one script at a time each. A thread whose
 * script ended by itself goes back to a small pool; one the host had to terminate is gone.
 * Starting a thread costs tens of milliseconds (a V8 isolate and the engine's module
 * instance from the already compiled code), which the pool saves for the next script.
 */
const MAX_IDLE_THREADS = 2;
const idle: EngineThread[] = [];

/** Thread memory for the JavaScript side: the values crossing (≤ valueBytes) and their parsed copies. */
const THREAD_HEAP_MB = 256;

export class EngineThread {
  readonly worker: Worker;
  /** Int32 [STOP_SLOT]: set by the host to stop the running script. */
  readonly control: Int32Array;
  /** Float64 [used ms, since]: the engine's running time for the current script. */
  readonly clock: Float64Array;
  #listener: ((message: FromEngineThread) => void) | undefined;
  #onExit: ((error: Error) => void) | undefined;
  #exited: Error | undefined;

  constructor(module: object) {
    const control = new SharedArrayBuffer(4);
    const clock = new SharedArrayBuffer(16);
    this.control = new Int32Array(control);
    this.clock = new Float64Array(clock);
    const workerData: EngineThreadData = { module, control, clock };
    this.worker = new Worker(engineThreadPath(), {
      workerData,
      name: "capgate-script",
      // No execArgv of the host's: its entry point's flags (`-e`, `--input-type`, a loader's) are not this thread's.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
      stdout: false,
      stderr: false,
    });
    this.worker.on("message", (message: FromEngineThread) => this.#listener?.(message));
    this.worker.on("error", (error) => this.#ended(error));
    this.worker.on("exit", (code) =>
      this.#ended(new Error(`the script engine's thread exited (code ${code})`)),
    );
    this.worker.unref();
  }

  /** Whether the thread has died or been terminated. */
  get exited(): boolean {
    return this.#exited !== undefined;
  }

  /** Route the thread's messages and its death to one run (until `detach`). */
  attach(listener: (message: FromEngineThread) => void, onExit: (error: Error) => void): void {
    this.#listener = listener;
    this.#onExit = onExit;
    this.worker.ref();
  }

  detach(): void {
    this.#listener = undefined;
    this.#onExit = undefined;
    this.worker.unref();
  }

  post(message: ToEngineThread): void {
    if (!this.#exited) this.worker.postMessage(message);
  }

  /** End the thread now, whatever it is running; a fresh one is started for the pool meanwhile. */
  terminate(): void {
    if (!this.#exited) this.#exited = new Error("terminated by the host");
    void this.worker.terminate();
    // Starting a thread takes a few hundred milliseconds on a busy machine: the next script
    // should not wait for it because this one had to be ended.
    if (idle.length < MAX_IDLE_THREADS)
      void compiledModule()
        .then((module) => releaseThread(new EngineThread(module)))
        .catch(() => undefined);
  }

  #ended(error: Error): void {
    // The first cause is kept ("error" comes before "exit").
    this.#exited ??= error;
    const onExit = this.#onExit;
    this.detach();
    onExit?.(this.#exited);
  }
}

/** A thread for one script: from the pool, else a new one. */
export async function acquireThread(): Promise<EngineThread> {
  for (let thread = idle.pop(); thread; thread = idle.pop()) if (!thread.exited) return thread;
  return new EngineThread(await compiledModule());
}

/** A thread back after its script ended by itself (not terminated). */
export function releaseThread(thread: EngineThread): void {
  thread.detach();
  if (thread.exited) return;
  if (idle.length >= MAX_IDLE_THREADS) {
    void thread.worker.terminate();
    return;
  }
  idle.push(thread);
}

/**
 * Compile the engine and start a thread ahead of the first script (a host may call it at
 * start-up). The thread waits in the pool and keeps no process alive.
 */
export async function warmEngine(): Promise<void> {
  releaseThread(await acquireThread());
}

/** The thread's module: next to this one in the build; the build's when run from source. */
function engineThreadPath(): string {
  const here = import.meta.url;
  const path = fileURLToPath(
    new URL(here.endsWith(".ts") ? "../dist/engine-thread.js" : "./engine-thread.js", here),
  );
  if (!existsSync(path))
    throw new Error(
      `capgate script: the engine thread's module ${path} is missing (build @capgate/capability-script).`,
    );
  return path;
}
