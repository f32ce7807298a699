import { Worker } from "node:worker_threads";
import { CapgateError } from "@capgate/schema";
import { InvalidArgumentsError } from "@capgate/tools";

/** One matching line: index of the text in the batch, 1-based line, 0-based column, the line. */
export type LineMatch = [text: number, line: number, column: number, content: string];

/**
 * Compile `pattern` as fs.search does (a JavaScript RegExp, case-sensitive, no flags) or
 * throw `invalid_arguments` naming `pattern`, with the engine's reason. Compiling parses the
 * pattern (at most 1000 characters, linear work); nothing is matched on this thread.
 */
export function checkPattern(pattern: string): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new InvalidArgumentsError(
      `\`pattern\` ${JSON.stringify(pattern)} is not a valid JavaScript regular expression: ${(error as Error).message}. Escape special characters such as ( [ . * + ? with a backslash to match them literally.`,
      { property: "pattern", cause: error },
    );
  }
}

// The worker's program (CommonJS, run with `eval`: no file to locate next to the bundle).
// It receives { id, pattern, texts, max } and answers { id, matches } or { id, error }.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let pattern;
let re;
function match(texts, max) {
  const out = [];
  for (let t = 0; t < texts.length; t++) {
    const text = texts[t];
    let line = 1;
    let start = 0;
    while (start <= text.length) {
      const nl = text.indexOf("\\n", start);
      const end = nl === -1 ? text.length : nl;
      if (end > start || nl !== -1) {
        const content = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
        const m = re.exec(content);
        if (m !== null) {
          out.push([t, line, m.index, content]);
          if (out.length >= max) return out;
        }
      }
      if (nl === -1) break;
      start = nl + 1;
      line++;
    }
  }
  return out;
}
parentPort.on("message", (msg) => {
  try {
    if (msg.pattern !== pattern) {
      re = new RegExp(msg.pattern);
      pattern = msg.pattern;
    }
    parentPort.postMessage({ id: msg.id, matches: match(msg.texts, msg.max) });
  } catch (error) {
    parentPort.postMessage({ id: msg.id, error: String(error && error.message || error) });
  }
});
`;

/** Idle workers kept for the next search (each costs ~30–60 ms to start). */
const MAX_IDLE_WORKERS = 2;
const idle: Worker[] = [];

function startWorker(): Worker {
  return new Worker(WORKER_SOURCE, {
    eval: true,
    name: "capgate-fs-search",
    // A batch is at most a few MB of text; the worker needs no more than its texts and matches.
    resourceLimits: { maxOldGenerationSizeMb: 256 },
    stdout: false,
    stderr: false,
  });
}

/** A worker for one search: an idle one, or a new one. Referenced while in use (the host waits for it). */
function acquire(): Worker {
  const worker = idle.pop() ?? startWorker();
  worker.ref();
  return worker;
}

/** Back to the pool when there is room (unreferenced: an idle worker never keeps the host alive). */
function release(worker: Worker): void {
  worker.removeAllListeners("message");
  worker.removeAllListeners("error");
  worker.removeAllListeners("exit");
  if (idle.length < MAX_IDLE_WORKERS) {
    worker.unref();
    // A pooled worker that dies (it should not) just leaves the pool.
    worker.once("exit", () => {
      const at = idle.indexOf(worker);
      if (at !== -1) idle.splice(at, 1);
    });
    idle.push(worker);
  } else void worker.terminate();
}

let sequence = 0;

/**
 * Matches lines against a model-supplied regex without ever running it on the host's own
 * thread: a catastrophic pattern such as `(a+)+$` would block a synchronous RegExp — and so
 * the whole event loop, every other call and the server with it — for as long as it
 * backtracks. Matching runs in a worker thread; this thread only waits for the answer, and
 * when the search's time budget runs out (or the call is aborted) the worker is terminated,
 * which stops the regex wherever it is. The pattern keeps JavaScript RegExp semantics, as
 * fs.search documents. Work is batched so the message round trip (~0.1 ms) is paid once per
 * batch, not per file. Call `close()` when the search ends.
 */
export class RegexSandbox {
  readonly #pattern: string;
  #remainingMs: number;
  #worker: Worker | undefined;

  constructor(pattern: string, budgetMs: number) {
    checkPattern(pattern);
    this.#pattern = pattern;
    this.#remainingMs = Math.max(1, Math.floor(budgetMs));
  }

  /** Milliseconds of matching time left. */
  get remainingMs(): number {
    return this.#remainingMs;
  }

  /**
   * Matching lines of `texts`, at most `max`; `timedOut` when the budget ran out during
   * this batch (its matches are then lost and the search should stop), `aborted` when
   * `signal` fired.
   * @throws CapgateError `search_failed` when the worker fails (e.g. the pattern overflows the regex stack).
   */
  async match(
    texts: readonly string[],
    max: number,
    signal?: AbortSignal,
  ): Promise<{ matches: LineMatch[]; timedOut: boolean; aborted?: boolean }> {
    if (this.#remainingMs <= 0) return { matches: [], timedOut: true };
    if (signal?.aborted) return { matches: [], timedOut: false, aborted: true };
    this.#worker ??= acquire();
    const worker = this.#worker;
    const id = ++sequence;
    const started = performance.now();
    try {
      return await new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          worker.off("message", onMessage);
          worker.off("error", onError);
          worker.off("exit", onExit);
        };
        const kill = () => {
          done();
          this.#worker = undefined;
          void worker.terminate();
        };
        const timer = setTimeout(() => {
          kill();
          this.#remainingMs = 0;
          resolve({ matches: [], timedOut: true });
        }, Math.ceil(this.#remainingMs));
        const onAbort = () => {
          kill();
          resolve({ matches: [], timedOut: false, aborted: true });
        };
        const onMessage = (message: { id: number; matches?: LineMatch[]; error?: string }) => {
          if (message.id !== id) return;
          done();
          if (message.error !== undefined) {
            reject(new CapgateError("search_failed", `the pattern could not be run: ${message.error}.`));
          } else resolve({ matches: message.matches ?? [], timedOut: false });
        };
        const onError = (error: Error) => {
          kill();
          reject(
            new CapgateError("search_failed", `the search worker failed: ${error.message}.`, {
              cause: error,
            }),
          );
        };
        const onExit = (code: number) => {
          done();
          this.#worker = undefined;
          reject(new CapgateError("search_failed", `the search worker stopped (exit code ${code}).`));
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        worker.on("message", onMessage);
        worker.on("error", onError);
        worker.on("exit", onExit);
        worker.postMessage({ id, pattern: this.#pattern, texts, max });
      });
    } finally {
      if (this.#remainingMs > 0) this.#remainingMs -= performance.now() - started;
    }
  }

  /** The search is over: its worker goes back to the pool (or is stopped). */
  close(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) release(worker);
  }
}
