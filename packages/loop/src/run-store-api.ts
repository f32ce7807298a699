import type { RunEvent, RunEventListener, RunOutcome } from "./events.js";

/**
 * Where a run's events go and where readers find them. The loop only appends; servers
 * read, list and follow. Two implementations: `FileRunStore` (JSONL under the state
 * dir, one process) and the PostgreSQL store of `@capgate/postgres` (any node).
 *
 * `append` is synchronous so the loop never waits on storage between its own events; a
 * store that writes asynchronously keeps the run's order and reports failures through
 * `flush`, which the loop awaits before each action (so nothing acts without a trace).
 *
 * Invariants every store keeps (events are written with the shared codec, `encodeEvent`,
 * so what is read back equals what was emitted, U+0000 and unpaired surrogates included):
 * - `run_ended` is a run's last event: an append after it is refused with an
 *   `event_after_end` error naming the event (and a process warning), and a run never has
 *   a second run_ended;
 * - after an event of a run could not be stored, its later events are refused with that
 *   error (no silent gap), except its run_ended, which the store still tries to write,
 *   numbered to follow the last stored event.
 */
export interface RunStore {
  /** Record one event. The events of a run arrive in `seq` order. Throws when the event is refused. */
  append(event: RunEvent): void;
  /**
   * Resolves once every event appended so far (of `runId`, or of every run) is stored;
   * rejects with the storage error when one could not be.
   */
  flush(runId?: string): Promise<void>;
  /**
   * Live events of one run (or "*": of every run appended through this store), from now
   * on. `after` is the highest seq the listener has already seen, a hint stores that
   * fetch by seq may use; listeners de-duplicate by seq either way.
   */
  subscribe(runId: string | "*", listener: RunEventListener, after?: number): () => void;
  /** The stored events of a run with `seq > after`, in seq order; `undefined` when the store has no such run. */
  events(runId: string, after?: number): Promise<RunEvent[] | undefined>;
  /** One run's summary, or `undefined` when the store has no such run. */
  summary(runId: string): Promise<RunSummary | undefined>;
  /** The most recent runs, newest first. */
  runs(limit?: number): Promise<RunSummary[]>;
  /** Where a run's trace lives, for people: a file path or a database location. */
  locate(runId: string): string;
  close(): void | Promise<void>;
}

/** What a store knows of one run without reading its events: `RunStore.summary` and `RunStore.runs`. */
export interface RunSummary {
  runId: string;
  goal: string;
  profile: string;
  kind: "goal" | "chat";
  startedAt: string;
  endedAt?: string;
  outcome?: RunOutcome;
  steps?: number;
  parentRunId?: string;
  events: number;
  /** Where a store with a queue knows it: `queued` (not started yet), `running` or `ended`. */
  phase?: "queued" | "running" | "ended";
  /** Where a queued run's work was published (a branch or a patch), when the store records it. */
  result?: unknown;
}
