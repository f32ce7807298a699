import {
  decodeEvent,
  encodeEvent,
  escapeText,
  eventAfterEnd,
  type RunEvent,
  type RunEventListener,
  type RunStore,
  type RunSummary,
  unescapeText,
} from "@capgate/loop";
import type { Database } from "./database.js";
import { PostgresError, redactUrl } from "./errors.js";
import type { Notifier } from "./notifier.js";
import { isTransient, sleep } from "./transient.js";

export const RUN_EVENTS_CHANNEL = "capgate_run_events";

/** SQLSTATE of the database's refusal of an event after its run's run_ended (migration 2's trigger). */
export const EVENT_AFTER_END_SQLSTATE = "CG001";

/** How many ended runs a store remembers to refuse their late events itself; past that the database refuses them. */
const ENDED_REMEMBERED = 10_000;

export interface PgRunStoreOptions {
  /** Keep retrying a batch that failed on a lost connection for this long (default 60 s), then fail the store. */
  retryForMs?: number;
  /** Called when a batch is given up on (the events are not stored; flush() rejects with the same error). */
  onError?: (error: Error) => void;
}

interface Subscription {
  runId: string;
  listener: RunEventListener;
  last: number;
  fetching: boolean;
  again: boolean;
}

/**
 * The run store on PostgreSQL: events in `capgate.run_events` keyed by (run_id, seq),
 * a row per run in `capgate.runs` kept up to date on run_started/profile_changed/run_ended.
 * `append` queues; one batch at a time is written in a transaction (whatever piled up
 * while the previous one was being written goes in the next: group commit), and the
 * transaction NOTIFYs `run_id:seq` so every node's subscribers fetch the new rows.
 * A batch that fails on a lost connection is retried as a whole; the primary key makes
 * that idempotent, and a (run_id, seq) that already holds a *different* event is an
 * `event_conflict` error, never silently dropped. Bodies are written with the shared
 * codec (`encodeEvent`), so any string a run emits is stored and read back exactly.
 *
 * `run_ended` is a run's last event, enforced here (an append after a run_ended this
 * store wrote is refused at once) and in the database (a trigger refuses any insert after
 * a run's run_ended, from any node, and a unique index makes a second one impossible).
 */
export class PgRunStore implements RunStore {
  #queue: RunEvent[] = [];
  #writing: Promise<void> | undefined;
  #failure: Error | undefined;
  /** Runs with events that could not be stored: later events of theirs are not written either (no gaps), except run_ended. */
  readonly #failedRuns = new Map<string, Error>();
  /** Per run: events appended and not yet written (or given up on), and who waits for that to reach 0. */
  readonly #pending = new Map<string, { count: number; waiters: Array<() => void> }>();
  /** The highest seq this store wrote per run not ended yet (a run_ended after a failure follows it). */
  readonly #lastStored = new Map<string, number>();
  /** Runs whose run_ended this store took, most recent last (bounded: past it the database refuses). */
  readonly #ended = new Map<string, number>();
  readonly #subs = new Set<Subscription>();
  readonly #local = new Set<RunEventListener>();
  #unlisten: (() => void) | undefined;
  #listening: Promise<void> | undefined;
  readonly #retryForMs: number;

  constructor(
    private readonly db: Database,
    private readonly notifier: Notifier,
    private readonly options: PgRunStoreOptions = {},
  ) {
    this.#retryForMs = options.retryForMs ?? 60_000;
    notifier.onReconnect(() => {
      for (const sub of this.#subs) this.#fetch(sub);
    });
  }

  /**
   * Queue one event. Throws `event_after_end` (also a process warning) for an event of a
   * run whose run_ended this store already took, and the run's storage error for an event
   * of a run whose earlier event could not be stored (run_ended excepted: it is still written,
   * numbered to follow the last stored event).
   */
  append(event: RunEvent): void {
    const endSeq = this.#ended.get(event.runId);
    if (endSeq !== undefined) throw eventAfterEnd(event.runId, event.type, event.seq, endSeq);
    const failed = this.#failedRuns.get(event.runId);
    if (failed && event.type !== "run_ended") throw failed;
    if (event.type === "run_ended") {
      this.#ended.set(event.runId, event.seq);
      if (this.#ended.size > ENDED_REMEMBERED) this.#ended.delete(this.#ended.keys().next().value!);
    }
    const pending = this.#pending.get(event.runId);
    if (pending) pending.count++;
    else this.#pending.set(event.runId, { count: 1, waiters: [] });
    this.#queue.push(event);
    this.#writing ??= this.#drain();
  }

  /** Resolves once the events appended so far (of `runId`, or of every run) are written; rejects with the storage error. */
  async flush(runId?: string): Promise<void> {
    const runs = runId === undefined ? [...this.#pending.keys()] : [runId];
    await Promise.all(
      runs.map((id) => {
        const pending = this.#pending.get(id);
        return pending ? new Promise<void>((resolve) => pending.waiters.push(resolve)) : undefined;
      }),
    );
    const failure = runId === undefined ? this.#failure : this.#failedRuns.get(runId);
    if (failure) throw failure;
  }

  /** The storage error that made the store give up on some events (of one run, or of any), if any. */
  failure(runId?: string): Error | undefined {
    return runId === undefined ? this.#failure : this.#failedRuns.get(runId);
  }

  /** These events were written or given up on. */
  #settle(events: RunEvent[]): void {
    for (const e of events) {
      const pending = this.#pending.get(e.runId);
      if (!pending || --pending.count > 0) continue;
      this.#pending.delete(e.runId);
      for (const wake of pending.waiters) wake();
    }
  }

  async #drain(): Promise<void> {
    // Yield first: #writing must be set before this can finish (and more events join the batch).
    await null;
    try {
      while (this.#queue.length > 0) {
        const taken = this.#queue;
        this.#queue = [];
        const batch: RunEvent[] = [];
        for (const e of taken) {
          if (!this.#failedRuns.has(e.runId)) batch.push(e);
          // After a failure only the run's end is still written, right after what was stored.
          else if (e.type === "run_ended")
            batch.push({ ...e, seq: (this.#lastStored.get(e.runId) ?? 0) + 1 });
        }
        if (batch.length > 0) await this.#writeBatch(batch);
        this.#settle(taken);
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #writeBatch(batch: RunEvent[]): Promise<void> {
    const groups = groupByRun(batch);
    try {
      await this.#writeWithRetry(batch);
      this.#stored(batch);
    } catch (error) {
      // Write run by run so one run's conflict does not cost the others their events.
      const parts = groups.size > 1 ? [...groups.values()] : [batch];
      for (const part of parts) {
        try {
          if (parts.length > 1) await this.#writeWithRetry(part);
          else throw error;
          this.#stored(part);
        } catch (partError) {
          const failure =
            partError instanceof Error
              ? partError
              : new PostgresError("store_failed", String(partError), { cause: partError });
          const runId = part[0]!.runId;
          const end = part.find((e) => e.type === "run_ended");
          if (end && part.length > 1 && !this.#failedRuns.has(runId)) {
            // The run's end went down with an earlier event of its batch: try it once more on its own.
            this.#queue.unshift(end);
            this.#pending.get(runId)!.count++;
          }
          if (!this.#failedRuns.has(runId)) this.#failedRuns.set(runId, failure);
          this.#failure ??= failure;
          if (codeOf(failure) === "event_after_end")
            process.emitWarning(failure.message, { code: "CAPGATE_EVENT_AFTER_END" });
          this.options.onError?.(failure);
        }
      }
    }
  }

  #stored(events: RunEvent[]): void {
    for (const e of events) {
      if (e.type === "run_ended") this.#lastStored.delete(e.runId);
      else this.#lastStored.set(e.runId, Math.max(this.#lastStored.get(e.runId) ?? 0, e.seq));
    }
    for (const l of this.#local) for (const e of events) safeCall(l, e);
  }

  async #writeWithRetry(batch: RunEvent[]): Promise<void> {
    const deadline = Date.now() + this.#retryForMs;
    let delay = 50;
    while (true) {
      try {
        await this.#write(batch);
        return;
      } catch (error) {
        if (!isTransient(error) || Date.now() > deadline) {
          if (codeOf(error) === undefined && (error as { code?: string }).code === EVENT_AFTER_END_SQLSTATE) {
            // The database's own refusal names the event; nothing else of its text is added.
            throw new PostgresError("event_after_end", (error as Error).message, { cause: error });
          }
          throw new PostgresError(
            codeOf(error) ?? "store_failed",
            `Could not store ${batch.length} event(s) of run ${batch[0]?.runId} in ${redactUrl(this.db.url)}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        await sleep(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  async #write(batch: RunEvent[]): Promise<void> {
    const rows = `[${batch
      .map(
        (e) =>
          `{"run_id":${JSON.stringify(e.runId)},"seq":${e.seq},"type":${JSON.stringify(e.type)},"time":${JSON.stringify(e.time)},"body":${encodeEvent(e)}}`,
      )
      .join(",")}]`;
    const client = await this.db.pool.connect();
    let broken = false;
    try {
      await client.query("BEGIN");
      const inserted = await client.query<{ run_id: string; seq: number }>(
        `INSERT INTO capgate.run_events (run_id, seq, type, body, time)
         SELECT run_id, seq, type, body, time FROM jsonb_to_recordset($1::jsonb)
           AS x(run_id text, seq integer, type text, body jsonb, time timestamptz)
         ON CONFLICT (run_id, seq) DO NOTHING
         RETURNING run_id, seq`,
        [rows],
      );
      if (inserted.rowCount !== batch.length) {
        // A retried batch that had committed before the connection dropped, or someone else's event.
        const { rows: differing } = await client.query<{ run_id: string; seq: number }>(
          `SELECT e.run_id, e.seq FROM jsonb_to_recordset($1::jsonb) AS x(run_id text, seq integer, body jsonb)
           JOIN capgate.run_events e ON e.run_id = x.run_id AND e.seq = x.seq
           WHERE e.body <> x.body`,
          [rows],
        );
        if (differing.length > 0) {
          const d = differing[0]!;
          throw new PostgresError(
            "event_conflict",
            `Event ${d.seq} of run ${d.run_id} is already stored with different content (was the run ended by another node, e.g. as 'worker lost'?); refusing to overwrite it.`,
          );
        }
      }
      for (const [runId, events] of groupByRun(batch)) await updateRunRow(client, runId, events);
      await client.query("COMMIT");
    } catch (error) {
      broken = isTransient(error);
      if (!broken) await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      // A connection that failed mid-transaction is discarded, not handed to the next query.
      client.release(broken);
    }
  }

  subscribe(runId: string | "*", listener: RunEventListener, after = 0): () => void {
    if (runId === "*") {
      this.#local.add(listener);
      return () => this.#local.delete(listener);
    }
    const sub: Subscription = { runId, listener, last: after, fetching: false, again: false };
    this.#subs.add(sub);
    void this.#listen().then(
      () => this.#fetch(sub),
      () => undefined,
    );
    return () => {
      this.#subs.delete(sub);
    };
  }

  #listen(): Promise<void> {
    this.#listening ??= this.notifier
      .listen(RUN_EVENTS_CHANNEL, (payload) => {
        const colon = payload.lastIndexOf(":");
        const runId = payload.slice(0, colon);
        const seq = Number(payload.slice(colon + 1));
        for (const sub of this.#subs) if (sub.runId === runId && seq > sub.last) this.#fetch(sub);
      })
      .then((unlisten) => {
        this.#unlisten = unlisten;
      })
      .catch((error) => {
        this.#listening = undefined;
        throw error;
      });
    return this.#listening;
  }

  /**
   * Fetch what the subscriber has not seen yet; one fetch at a time per subscriber, repeated
   * if more was notified meanwhile. A failed read (the database away, or the pool busy past its
   * connect timeout on a loaded node) is tried again shortly: the NOTIFY that woke it will not
   * come again, and a follower that missed a run's last batch would never see its run_ended.
   */
  #fetch(sub: Subscription, retryMs = 100): void {
    if (sub.fetching) {
      sub.again = true;
      return;
    }
    sub.fetching = true;
    let failed = false;
    void (async () => {
      do {
        sub.again = false;
        try {
          const events = (await this.events(sub.runId, sub.last)) ?? [];
          for (const e of events) {
            if (!this.#subs.has(sub)) return;
            if (e.seq <= sub.last) continue;
            sub.last = e.seq;
            safeCall(sub.listener, e);
          }
        } catch {
          failed = true;
          return;
        }
      } while (sub.again && this.#subs.has(sub));
    })().finally(() => {
      sub.fetching = false;
      if (failed && this.#subs.has(sub)) {
        setTimeout(() => this.#fetch(sub, Math.min(retryMs * 2, 2_000)), retryMs).unref();
      }
    });
  }

  async events(runId: string, after = 0): Promise<RunEvent[] | undefined> {
    const { rows } = await this.db.pool.query<{ body: RunEvent }>(
      "SELECT body FROM capgate.run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
      [runId, after],
    );
    if (rows.length > 0) return rows.map((r) => decodeEvent(r.body));
    const exists = await this.db.pool.query("SELECT 1 FROM capgate.runs WHERE id = $1", [runId]);
    return exists.rowCount ? [] : undefined;
  }

  async summary(runId: string): Promise<RunSummary | undefined> {
    const { rows } = await this.db.pool.query<RunRow>(`${SELECT_RUN} WHERE id = $1`, [runId]);
    return rows[0] ? toSummary(rows[0]) : undefined;
  }

  async runs(limit = 100): Promise<RunSummary[]> {
    const { rows } = await this.db.pool.query<RunRow>(
      `${SELECT_RUN} ORDER BY coalesce(started_at, queued_at) DESC, id DESC LIMIT $1`,
      [limit],
    );
    return rows.map(toSummary);
  }

  locate(runId: string): string {
    return `${redactUrl(this.db.url)}#run=${runId}`;
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    this.#unlisten?.();
    this.#subs.clear();
  }
}

function codeOf(error: unknown): string | undefined {
  return error instanceof PostgresError ? error.code : undefined;
}

function safeCall(listener: RunEventListener, event: RunEvent): void {
  try {
    listener(event);
  } catch {
    // Subscribers cannot break the run.
  }
}

function groupByRun(batch: RunEvent[]): Map<string, RunEvent[]> {
  const out = new Map<string, RunEvent[]>();
  for (const e of batch) {
    const list = out.get(e.runId);
    if (list) list.push(e);
    else out.set(e.runId, [e]);
  }
  return out;
}

/** Keep the `runs` row in step with the events: created or marked running on run_started, profile on profile_changed, outcome on run_ended. */
async function updateRunRow(
  client: { query: (sql: string, values: unknown[]) => Promise<unknown> },
  runId: string,
  events: RunEvent[],
): Promise<void> {
  const maxSeq = Math.max(...events.map((e) => e.seq));
  for (const e of events) {
    if (e.type === "run_started") {
      await client.query(
        `INSERT INTO capgate.runs (id, goal, profile, kind, status, parent_run_id, started_at, queued_at, events)
         VALUES ($1, $2, $3, $4, 'running', $5, $6, $6, $7)
         ON CONFLICT (id) DO UPDATE SET status = CASE WHEN capgate.runs.status = 'ended' THEN 'ended' ELSE 'running' END,
           profile = EXCLUDED.profile, kind = EXCLUDED.kind, started_at = EXCLUDED.started_at,
           parent_run_id = EXCLUDED.parent_run_id`,
        [runId, escapeText(e.goal), escapeText(e.profile), e.kind, e.parentRunId ?? null, e.time, maxSeq],
      );
    } else if (e.type === "profile_changed") {
      await client.query("UPDATE capgate.runs SET profile = $2 WHERE id = $1", [runId, escapeText(e.to)]);
    } else if (e.type === "run_ended") {
      await client.query(
        `UPDATE capgate.runs SET status = 'ended', outcome = $2, steps = $3, ended_at = $4, summary = $5, error = $6
         WHERE id = $1`,
        [
          runId,
          e.outcome,
          e.steps,
          e.time,
          e.summary === undefined ? null : escapeText(e.summary),
          e.error === undefined ? null : escapeText(e.error),
        ],
      );
    }
  }
  await client.query("UPDATE capgate.runs SET events = greatest(events, $2) WHERE id = $1", [runId, maxSeq]);
  await client.query("SELECT pg_notify($1, $2)", [RUN_EVENTS_CHANNEL, `${runId}:${maxSeq}`]);
}

const SELECT_RUN = `SELECT id, goal, profile, kind, status, outcome, error, summary, steps, events, parent_run_id,
  result, queued_at, started_at, ended_at FROM capgate.runs`;

interface RunRow {
  id: string;
  goal: string;
  profile: string | null;
  kind: string;
  status: "queued" | "running" | "ended";
  outcome: RunSummary["outcome"] | null;
  error: string | null;
  summary: string | null;
  steps: number | null;
  events: number;
  parent_run_id: string | null;
  result: unknown;
  queued_at: Date | null;
  started_at: Date | null;
  ended_at: Date | null;
}

function toSummary(r: RunRow): RunSummary {
  return {
    runId: r.id,
    goal: unescapeText(r.goal),
    profile: r.profile === null ? "Orchestrator" : unescapeText(r.profile),
    kind: r.kind === "chat" ? "chat" : "goal",
    startedAt: (r.started_at ?? r.queued_at ?? new Date(0)).toISOString(),
    ...(r.parent_run_id ? { parentRunId: r.parent_run_id } : {}),
    ...(r.ended_at ? { endedAt: r.ended_at.toISOString() } : {}),
    ...(r.outcome ? { outcome: r.outcome } : {}),
    ...(r.steps !== null && r.outcome ? { steps: r.steps } : {}),
    events: r.events,
    phase: r.status,
    ...(r.result !== null && r.result !== undefined ? { result: r.result } : {}),
  };
}
