import type { ServerResponse } from "node:http";
import type { RunEvent, RunStore } from "@capgate/loop";

export interface StreamOptions {
  /** Events with `seq` at or below this were seen already (the `Last-Event-ID` header). */
  after: number;
  /** Whether the run may still emit events (queued, running here or on a worker, a live gate session). */
  isActive: () => boolean | Promise<boolean>;
}

/** A slow reader that lets this much pile up is dropped; it can resume with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * Server-Sent Events over the run store: replay the stored trace, then follow live events
 * of the same run. The live subscription starts before the file is read and events are
 * de-duplicated by `seq`, so an event emitted while the file is being read is neither lost
 * nor sent twice. `id:` is the event's seq, so a client resumes with `Last-Event-ID`.
 * The stream ends after `run_ended`; comments keep idle connections alive.
 */
export class RunFeed {
  readonly #live = new Set<string>();
  readonly #streams = new Set<() => void>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(
    private readonly store: RunStore,
    private readonly heartbeatMs: number,
  ) {
    // Runs (and gate sessions) that emitted here and have not ended: their streams stay open.
    this.#unsubscribe = store.subscribe("*", (event) => {
      if (event.type === "run_ended") this.#live.delete(event.runId);
      else this.#live.add(event.runId);
    });
  }

  /** A run of this process that has not ended. */
  isLive(runId: string): boolean {
    return this.#live.has(runId);
  }

  /** Open SSE streams. */
  count(): number {
    return this.#streams.size;
  }

  /** End every open stream (shutdown). */
  closeAll(): void {
    for (const end of [...this.#streams]) end();
  }

  /** End every stream and stop following the store (again: nothing more). */
  close(): void {
    this.closeAll();
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
  }

  /** Write the stream to an already hijacked response. Resolves when the stream has ended. */
  async stream(res: ServerResponse, runId: string, options: StreamOptions): Promise<void> {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "x-content-type-options": "nosniff",
    });
    res.write("retry: 2000\n\n");

    let last = options.after;
    let ended = false;
    let replaying = true;
    const buffered: RunEvent[] = [];
    let heartbeat: NodeJS.Timeout | undefined;
    let unsubscribe: (() => void) | undefined;
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });

    const finish = () => {
      if (ended) return;
      ended = true;
      unsubscribe?.();
      if (heartbeat) clearInterval(heartbeat);
      this.#streams.delete(finish);
      if (!res.writableEnded) res.end();
      resolveDone();
    };
    const send = (event: RunEvent) => {
      if (ended || event.seq <= last) return;
      last = event.seq;
      res.write(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
      if (event.type === "run_ended") finish();
      else if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
    };
    this.#streams.add(finish);
    res.on("close", finish);

    unsubscribe = this.store.subscribe(
      runId,
      (event) => {
        if (replaying) buffered.push(event);
        else send(event);
      },
      options.after,
    );
    heartbeat = setInterval(() => {
      if (!res.writableEnded) res.write(": keep-alive\n\n");
    }, this.heartbeatMs);
    heartbeat.unref();

    let stored: RunEvent[];
    try {
      stored = (await this.store.events(runId, options.after)) ?? [];
    } catch {
      // The store is unreachable: end the stream; the client retries with Last-Event-ID.
      res.destroy();
      finish();
      return done;
    }
    for (const event of stored) send(event);
    replaying = false;
    for (const event of buffered.splice(0).sort((a, b) => a.seq - b.seq)) send(event);
    if (ended) return done;
    // Already ended (perhaps before Last-Event-ID), or nobody will write more.
    const active = stored.some((e) => e.type === "run_ended") ? false : await options.isActive();
    if (!active && !ended) {
      // It may have ended between the read and the check: send what was stored meanwhile.
      const rest = await this.store.events(runId, last).then(
        (events) => events ?? [],
        () => undefined,
      );
      // A failed read must not look like the end of the story: drop the connection, and the
      // client resumes with Last-Event-ID.
      if (rest === undefined) res.destroy();
      for (const event of rest ?? []) send(event);
      finish();
    }
    return done;
  }
}
