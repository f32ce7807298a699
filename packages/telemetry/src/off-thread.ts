import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { diag } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { FromExportThread, ToExportThread } from "./export-worker.js";
import type { TelemetrySettings } from "./settings.js";
import { type SpanWire, writeSpan } from "./span-wire.js";

/** Spans relayed in one message; fewer are sent after `RELAY_DELAY_MS` or on a flush. */
const RELAY_BATCH = 128;
const RELAY_DELAY_MS = 200;
/**
 * Spans that may wait on this thread for the export thread to take them. Beyond it new
 * spans are dropped (one diag warning), as the SDK's batch processor drops beyond its queue: a
 * collector that does not keep up must not grow the host's memory.
 */
const MAX_PENDING = 8192;

/**
 * A span processor that hands finished spans to an export thread (export-worker.ts), where
 * the SDK's BatchSpanProcessor and OTLP exporter encode and send them. On the host's
 * thread a span costs its creation plus one append to a flat array (span-wire.ts); the
 * protobuf encoding, the HTTP requests and their retries happen elsewhere. The thread does
 * not keep the process alive, except while a flush or shutdown waits for it.
 */
export class OffThreadSpanProcessor implements SpanProcessor {
  readonly #worker: Worker;
  #wire: SpanWire = [];
  #spans = 0;
  /** Spans relayed and not yet acknowledged; bounded by MAX_PENDING. */
  #inFlight = 0;
  #warnedBehind = false;
  #timer: NodeJS.Timeout | undefined;
  #nextId = 0;
  readonly #waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();
  #failed: Error | undefined;
  #shutdown: Promise<void> | undefined;
  #terminating = false;

  constructor(settings: TelemetrySettings) {
    // No execArgv of the host's: `--input-type`, `-e` or a loader's flags are about the host's
    // entry point and break a plain module thread (found with `node --input-type=module -e`).
    this.#worker = new Worker(exportWorkerPath(), { workerData: { settings }, execArgv: [] });
    this.#worker.on("message", (message: FromExportThread) => {
      if (message.type === "taken") {
        this.#inFlight -= message.spans;
        return;
      }
      const waiter = this.#waiting.get(message.id);
      this.#waiting.delete(message.id);
      if (this.#waiting.size === 0) this.#worker.unref();
      if (message.error) waiter?.reject(new Error(message.error));
      else waiter?.resolve();
    });
    this.#worker.on("error", (error) => this.#fail(error));
    this.#worker.on("exit", (code) => {
      if (!this.#terminating) this.#fail(new Error(`the telemetry export thread exited (code ${code})`));
    });
    // After the listeners: adding a "message" listener refs the thread's port again.
    this.#worker.unref();
  }

  onStart(_span: Span): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#failed || this.#shutdown) return;
    if (this.#inFlight + this.#spans >= MAX_PENDING) {
      if (!this.#warnedBehind) {
        this.#warnedBehind = true;
        diag.warn("capgate telemetry: the export thread is behind; spans are being dropped");
      }
      return;
    }
    writeSpan(span, this.#wire);
    if (++this.#spans >= RELAY_BATCH) this.#relay();
    else this.#timer ??= setTimeout(() => this.#relay(), RELAY_DELAY_MS).unref();
  }

  forceFlush(): Promise<void> {
    if (this.#shutdown) return this.#shutdown;
    this.#relay();
    return this.#ask("flush");
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#relay();
      try {
        await this.#ask("shutdown");
      } finally {
        this.#terminating = true;
        await this.#worker.terminate();
      }
    })();
    return this.#shutdown;
  }

  #relay(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#spans === 0 || this.#failed) return;
    this.#worker.postMessage({
      type: "spans",
      wire: this.#wire,
      spans: this.#spans,
    } satisfies ToExportThread);
    this.#inFlight += this.#spans;
    this.#wire = [];
    this.#spans = 0;
  }

  #ask(type: "flush" | "shutdown"): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      // Keep the process alive until the export thread answers.
      this.#worker.ref();
      this.#worker.postMessage({ type, id } satisfies ToExportThread);
    });
  }

  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = error;
    diag.error("capgate telemetry: spans can no longer be exported", error);
    for (const waiter of this.#waiting.values()) waiter.reject(error);
    this.#waiting.clear();
  }
}

/**
 * The export thread's module: next to this chunk in dist/. Tests that run the TypeScript
 * sources use the built one (Node's worker threads do not load .ts), so build first.
 */
function exportWorkerPath(): string {
  const here = import.meta.url;
  const path = fileURLToPath(
    new URL(here.endsWith(".ts") ? "../dist/export-worker.js" : "./export-worker.js", here),
  );
  if (!existsSync(path))
    throw new Error(
      `capgate telemetry: the export thread's module ${path} is missing (build @capgate/telemetry).`,
    );
  return path;
}
