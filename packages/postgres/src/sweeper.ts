import { encodeEvent, escapeText } from "@capgate/loop";
import type pg from "pg";
import type { Database } from "./database.js";
import { RUN_EVENTS_LOCK_NS } from "./migrations.js";
import { APPROVALS_CHANNEL } from "./pg-approvals.js";
import { RUN_EVENTS_CHANNEL } from "./pg-run-store.js";
import { RUN_TASK } from "./run-queue.js";
import { isTransient } from "./transient.js";

/** Namespace of the advisory locks each worker holds for its whole life ('capw'). */
export const WORKER_LOCK_NS = 0x63617077;

/**
 * End the runs whose worker is gone. A worker holds a session advisory lock keyed by its
 * id on its own connection for as long as it lives; when the process dies (kill -9, a
 * lost machine) the server drops the connection and the lock with it. A run that is
 * `running` under a worker whose lock can be taken gets `run_ended { outcome: "error",
 * error: "worker lost" }` as its next event — it is never restarted.
 */
export async function sweepLostRuns(
  db: Database,
  options: { requeueAfterMs?: number } = {},
): Promise<string[]> {
  await requeueOrphanedJobs(db, options.requeueAfterMs ?? 10_000).catch(() => undefined);
  const { rows } = await db.pool.query<{ worker: string }>(
    "SELECT DISTINCT worker FROM capgate.runs WHERE status = 'running' AND worker IS NOT NULL",
  );
  const ended: string[] = [];
  for (const { worker } of rows) {
    if (!(await workerGone(db, worker))) continue;
    const { rows: runs } = await db.pool.query<{ id: string }>(
      "SELECT id FROM capgate.runs WHERE status = 'running' AND worker = $1",
      [worker],
    );
    for (const { id } of runs) if (await endRun(db, id, "worker lost", worker)) ended.push(id);
  }
  return ended;
}

async function workerGone(db: Database, worker: string): Promise<boolean> {
  const client = await db.pool.connect();
  try {
    const { rows } = await client.query<{ got: boolean }>(
      "SELECT pg_try_advisory_lock($1, hashtext($2)) AS got",
      [WORKER_LOCK_NS, worker],
    );
    if (rows[0]?.got)
      await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [WORKER_LOCK_NS, worker]);
    return rows[0]?.got === true;
  } finally {
    client.release();
  }
}

/**
 * Write `run_ended { outcome: "error", error }` as the run's next event and mark its row
 * ended — only if it is still running (under `worker`, when given). Pending approvals of
 * the run are withdrawn, its job removed. Returns whether this call ended it. When the
 * database refuses the event (a run_ended already stored, or the event itself), the row
 * is still marked ended with the error, so the run's status says it failed.
 */
export async function endRun(db: Database, runId: string, error: string, worker?: string): Promise<boolean> {
  const client: pg.PoolClient = await db.pool.connect();
  let eventRefused: unknown;
  try {
    await client.query("BEGIN");
    // The lock migration 2's trigger takes for every insert of this run, taken first: the
    // same order as a store's batch (event, then runs row), so the two cannot deadlock.
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [RUN_EVENTS_LOCK_NS, runId]);
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM capgate.runs WHERE id = $1 AND status = 'running' ${worker ? "AND worker = $2" : ""} FOR UPDATE`,
      worker ? [runId, worker] : [runId],
    );
    if (rows.length === 0) {
      await client.query("ROLLBACK");
      return false;
    }
    const { rows: last } = await client.query<{ seq: number | null; step: number | null }>(
      "SELECT max(seq) AS seq, max((body->>'step')::integer) AS step FROM capgate.run_events WHERE run_id = $1",
      [runId],
    );
    const seq = (last[0]?.seq ?? 0) + 1;
    const time = new Date().toISOString();
    const event = {
      type: "run_ended",
      outcome: "error",
      steps: last[0]?.step ?? 0,
      rejections: 0,
      error,
      runId,
      seq,
      time,
    } as const;
    await client.query("SAVEPOINT end_event");
    try {
      await client.query(
        "INSERT INTO capgate.run_events (run_id, seq, type, body, time) VALUES ($1, $2, 'run_ended', $3, $4)",
        [runId, seq, encodeEvent(event), time],
      );
    } catch (e) {
      if (isTransient(e)) throw e;
      eventRefused = e;
      await client.query("ROLLBACK TO SAVEPOINT end_event");
    }
    await client.query(
      "UPDATE capgate.runs SET status = 'ended', outcome = 'error', error = $2, steps = $3, ended_at = $4, events = greatest(events, $5) WHERE id = $1",
      [runId, escapeText(error), event.steps, time, eventRefused ? seq - 1 : seq],
    );
    const { rows: withdrawn } = await client.query<{ approval_id: string }>(
      "UPDATE capgate.approvals SET status = 'cancelled', reason = $2, answered_at = now() WHERE run_id = $1 AND status = 'pending' RETURNING approval_id",
      [runId, escapeText(error)],
    );
    for (const a of withdrawn)
      await client.query("SELECT pg_notify($1, $2)", [APPROVALS_CHANNEL, a.approval_id]);
    await client.query("SELECT pg_notify($1, $2)", [RUN_EVENTS_CHANNEL, `${runId}:${seq}`]);
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
  if (eventRefused) {
    process.emitWarning(
      `run ${runId} was marked ended (error: ${error}) but its run_ended could not be stored: ${(eventRefused as Error).message}`,
      { code: "CAPGATE_RUN_END_NOT_STORED" },
    );
  }
  // The job (locked by the dead worker) must never be picked up again.
  await db.pool.query("SELECT graphile_worker.remove_job($1)", [runId]).catch(() => undefined);
  return true;
}

/**
 * A worker that died after graphile-worker locked a run's job but before it claimed the
 * run leaves the run `queued` behind a job locked for hours. Nothing of such a run has
 * executed, so its job is replaced by a fresh one; the claim (`UPDATE … WHERE status =
 * 'queued'`) still lets only one worker ever execute it.
 */
async function requeueOrphanedJobs(db: Database, afterMs: number): Promise<void> {
  const { rows } = await db.pool.query<{ id: string; queue_name: string | null }>(
    `SELECT r.id, j.queue_name FROM capgate.runs r JOIN graphile_worker.jobs j ON j.key = r.id
     WHERE r.status = 'queued' AND j.locked_at IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)`,
    [afterMs / 1000],
  );
  for (const { id, queue_name } of rows) {
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      const still = await client.query(
        "SELECT 1 FROM capgate.runs WHERE id = $1 AND status = 'queued' FOR UPDATE",
        [id],
      );
      if (still.rowCount) {
        await client.query("SELECT graphile_worker.remove_job($1)", [id]);
        await client.query(
          "SELECT graphile_worker.add_job($1, json_build_object('runId', $2::text), queue_name => $3, max_attempts => 1, job_key => $2::text)",
          [RUN_TASK, id, queue_name],
        );
      }
      await client.query("COMMIT");
    } catch {
      await client.query("ROLLBACK").catch(() => undefined);
    } finally {
      client.release();
    }
  }
}
