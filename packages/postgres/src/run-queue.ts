import { findUnstorableText } from "@capgate/loop";
import type { Database } from "./database.js";
import { PostgresError } from "./errors.js";

/** The graphile-worker task that executes one goal run. */
export const RUN_TASK = "capgate_run";

/** What POST /runs accepted, as the worker receives it. */
export interface QueuedRunRequest {
  goal: string;
  profile?: string;
  model?: string;
  maxSteps?: number;
  approval?: "never" | "on-risk" | "always";
  mcp?: boolean;
}

export interface QueuedRun {
  id: string;
  goal: string;
  profile: string | undefined;
  status: "queued" | "running";
  queuedAt: string;
}

/**
 * The API node's side of the queue: a run row and its graphile-worker job are inserted in
 * one transaction (no run without a job, no job without a run). The job has
 * `max_attempts = 1` — a run is never replayed — and `job_key = run id`.
 */
export class RunQueue {
  constructor(private readonly db: Database) {}

  /**
   * Queue one run. `queueName` puts it in a named graphile-worker queue whose jobs run one
   * at a time (use one per shared checkout when runs work in place); by default each run
   * gets a fresh checkout on its worker, so runs need no serialising.
   */
  async enqueue(id: string, request: QueuedRunRequest, options: { queueName?: string } = {}): Promise<void> {
    const bad = findUnstorableText(request);
    if (bad) {
      throw new PostgresError(
        "invalid_request",
        `The run's ${bad.property} cannot be stored: ${bad.problem}.`,
        {
          property: bad.property,
        },
      );
    }
    const client = await this.db.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO capgate.runs (id, goal, profile, kind, status, request, queued_at)
         VALUES ($1, $2, $3, 'goal', 'queued', $4, now())`,
        [id, request.goal, request.profile ?? null, JSON.stringify(request)],
      );
      await client.query(
        "SELECT graphile_worker.add_job($1, json_build_object('runId', $2::text), queue_name => $3, max_attempts => 1, job_key => $2::text, job_key_mode => 'preserve_run_at')",
        [RUN_TASK, id, options.queueName ?? null],
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** A run that has not ended, or undefined. */
  async active(id: string): Promise<QueuedRun | undefined> {
    const { rows } = await this.db.pool.query<Row>(`${SELECT} WHERE id = $1 AND status <> 'ended'`, [id]);
    return rows[0] ? toRun(rows[0]) : undefined;
  }

  /** Runs that have not ended, oldest first. */
  async listActive(limit = 1000): Promise<QueuedRun[]> {
    const { rows } = await this.db.pool.query<Row>(
      `${SELECT} WHERE status <> 'ended' ORDER BY queued_at NULLS LAST, id LIMIT $1`,
      [limit],
    );
    return rows.map(toRun);
  }

  async counts(): Promise<{ running: number; queued: number }> {
    const { rows } = await this.db.pool.query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM capgate.runs WHERE status <> 'ended' GROUP BY status",
    );
    const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
    return { running: get("running"), queued: get("queued") };
  }
}

const SELECT =
  "SELECT id, goal, profile, status, coalesce(queued_at, started_at) AS queued_at FROM capgate.runs";

interface Row {
  id: string;
  goal: string;
  profile: string | null;
  status: "queued" | "running";
  queued_at: Date | null;
}

function toRun(r: Row): QueuedRun {
  return {
    id: r.id,
    goal: r.goal,
    profile: r.profile ?? undefined,
    status: r.status,
    queuedAt: (r.queued_at ?? new Date(0)).toISOString(),
  };
}
