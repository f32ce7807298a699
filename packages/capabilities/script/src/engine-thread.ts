import { parentPort, workerData } from "node:worker_threads";
import { acquireEngine, provideCompiledModule, releaseEngine } from "./engine.js";
import { EngineRun } from "./engine-run.js";
import { DEFAULT_SCRIPT_LIMITS } from "./limits.js";
import type { EngineThreadData, FromEngineThread, ToEngineThread } from "./wire.js";

/**
 * The engine's thread (its own entry point, started by engine-threads.ts): it runs one
 * script at a time and talks to the host only through messages and the two shared arrays.
 * The host can end it at any moment with `worker.terminate()`, whatever the engine is doing.
 */
const port = parentPort;
if (!port) throw new Error("engine-thread.js is the script engine's thread; start it as a Worker");
const data = workerData as EngineThreadData;
provideCompiledModule(data.module);
const control = new Int32Array(data.control);
const clock = new Float64Array(data.clock);
const send = (message: FromEngineThread) => port.postMessage(message);
let current: EngineRun | undefined;
// An engine instance ready before the first script (for the default memory limit): the
// first script on a new thread then costs what a later one does.
const warm = acquireEngine(DEFAULT_SCRIPT_LIMITS.memoryBytes).then(
  (engine) => releaseEngine(engine, true),
  () => undefined,
);

port.on("message", (message: ToEngineThread) => {
  if (message.type === "start") {
    const run = new EngineRun({
      run: message.run,
      source: message.source,
      timeoutMs: message.timeoutMs,
      limits: message.limits,
      control,
      clock,
      send,
    });
    current = run;
    void warm
      .then(() => run.run())
      .catch(
        (error: unknown): FromEngineThread => ({
          type: "done",
          run: message.run,
          failure: {
            kind: "thrown",
            message: `the script engine failed: ${error instanceof Error ? error.message : String(error)}`,
          },
          droppedLogLines: 0,
          calls: 0,
        }),
      )
      .then((done) => {
        if (current === run) current = undefined;
        send(done);
      });
    return;
  }
  if (!current || message.run !== current.number) return;
  if (message.type === "reply") current.reply(message.call, message.text);
  else current.wake();
});
