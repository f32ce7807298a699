import { randomBytes } from "node:crypto";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { EventEmitterForRun, type LoopEnvironment, type RunGoalOptions, runGoal } from "@capgate/loop";
import type pg from "pg";
import { type Database, queueLogger } from "./database.js";
import { Notifier } from "./notifier.js";
import { PgApprovalRegistry } from "./pg-approvals.js";
import { PgMemoryStore } from "./pg-memory.js";
import { PgRunStore } from "./pg-run-store.js";
import { type QueuedRunRequest, RUN_TASK } from "./run-queue.js";
import { prepareRunWorkspace, type RunResult } from "./run-workspace.js";
import { endRun, sweepLostRuns, WORKER_LOCK_NS } from "./sweeper.js";

export interface WorkerOptions {
  db: Database;
  /** The loop environment of the worker's harness (registry, capabilities, MCP pool, browser); its store, memory and approvals are replaced by the shared ones. */
  environment: LoopEnvironment;
  /** A model by spec string (the run's `model`, else the configured default). */
  model: (spec?: string) => RunGoalOptions["model"];
  /** The configured workspace each run gets a fresh checkout of. */
  workspace: string;
  /** Where the checkouts go (default `<tmpdir>/capgate-runs`). */
  workRoot?: string;
  /** Runs at once on this worker (default 1). */
  concurrency?: number;
  maxSteps?: number;
  /** How often to look for runs whose worker died (default 1 s). */
  sweepIntervalMs?: number;
  /** Deny an approval nobody answered within this time (default 15 minutes). */
  approvalTimeoutMs?: number;
  /** Told about each run as it starts and ends (for logs). */
  onRun?: (event: {
    type: "started" | "ended";
    runId: string;
    outcome?: string;
    result?: RunResult;
    error?: string;
  }) => void;
}

export interface RunningWorker {
  readonly id: string;
  /** Runs executing now. */
  active(): number;
  /** Stop taking jobs, abort running runs (each ends with run_ended aborted), and disconnect. */
  stop(): Promise<void>;
  /** Resolves when the worker has stopped (by stop() or because it lost its lock). */
  readonly stopped: Promise<void>;
}

/**
 * A queue worker: graphile-worker runs the `capgate_run` task with `concurrency` jobs at
 * once. Each run is claimed with `UPDATE … WHERE status = 'queued'` (a job whose run is
 * not queued any more does nothing: never a replay), gets a fresh checkout, runs
 * `runGoal` on the PostgreSQL store, approvals and memory, and publishes its changes as a
 * branch or a patch in the run row. The worker holds an advisory lock for its life; the
 * sweeper (here and on API nodes) ends the runs of a worker whose lock is free.
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { db } = options;
  const id = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const notifier = new Notifier(db);
  const store = new PgRunStore(db, notifier);
  const memory = new PgMemoryStore(db);
  const approvals = new PgApprovalRegistry(
    db,
    notifier,
    options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {},
  );
  const workRoot = options.workRoot ?? join(tmpdir(), "capgate-runs");
  const controllers = new Map<string, AbortController>();

  // The life lock: held on its own connection until this process (or that connection) dies.
  const lock: pg.Client = db.client();
  await lock.connect();
  await lock.query("SELECT pg_advisory_lock($1, hashtext($2))", [WORKER_LOCK_NS, id]);
  await db.pool.query("INSERT INTO capgate.workers (id, host, pid, concurrency) VALUES ($1, $2, $3, $4)", [
    id,
    hostname(),
    process.pid,
    options.concurrency ?? 1,
  ]);

  const runTask = async (payload: unknown) => {
    const runId = (payload as { runId?: unknown })?.runId;
    if (typeof runId !== "string") return;
    const claimed = await db.pool.query<{ request: QueuedRunRequest }>(
      "UPDATE capgate.runs SET status = 'running', worker = $2, started_at = now() WHERE id = $1 AND status = 'queued' RETURNING request",
      [runId, id],
    );
    // Ended, or already taken: a job is never a replay.
    if (claimed.rowCount === 0) return;
    const request = claimed.rows[0]!.request;
    const controller = new AbortController();
    controllers.set(runId, controller);
    options.onRun?.({ type: "started", runId });
    let checkout: Awaited<ReturnType<typeof prepareRunWorkspace>> | undefined;
    let published: RunResult | undefined;
    try {
      const model = options.model(request.model);
      const base = options.environment;
      // Publishing runs git in the run's own sandbox (the operator's shell policy), hiding the same state directory.
      checkout = await prepareRunWorkspace(options.workspace, workRoot, runId, {
        env: base.env,
        sandbox: { stateDir: base.stateDir, ...(base.policy.shell ? { shell: base.policy.shell } : {}) },
      });
      const env: LoopEnvironment = {
        ...base,
        store,
        memory,
        approve: approvals.hook,
        policy: { ...base.policy, approval: request.approval ?? base.policy.approval ?? "never" },
      };
      const maxSteps = request.maxSteps ?? options.maxSteps;
      const result = await runGoal(env, {
        goal: request.goal,
        ...(request.profile ? { profile: request.profile } : {}),
        model,
        workspace: checkout.dir,
        ...(maxSteps !== undefined ? { maxSteps } : {}),
        mcp: request.mcp === true,
        nativeTools: (model as { nativeTools?: boolean }).nativeTools === true,
        signal: controller.signal,
        runId,
        // Publish and record the result before run_ended: whoever sees the end (over SSE,
        // in GET /runs) also sees the branch.
        beforeEnd: async () => {
          const work = checkout!;
          checkout = undefined;
          published = await work
            .publish(`capgate run ${runId}: ${request.goal.slice(0, 200)}`)
            .catch((error: unknown) => ({ kind: "none" as const, error: (error as Error).message }));
          await db.pool.query("UPDATE capgate.runs SET result = $2 WHERE id = $1", [
            runId,
            JSON.stringify(published),
          ]);
        },
      });
      await store.flush(runId).catch(() => undefined);
      const failure = store.failure(runId);
      if (failure) {
        // Not every event could be stored: the trace says so instead of stopping short.
        await endRun(db, runId, `events could not be stored: ${failure.message}`, id).catch(() => undefined);
      }
      options.onRun?.({
        type: "ended",
        runId,
        outcome: result.outcome,
        ...(published ? { result: published } : {}),
      });
    } catch (error) {
      await checkout?.discard().catch(() => undefined);
      await store.flush(runId).catch(() => undefined);
      const message = error instanceof Error ? error.message : String(error);
      // The loop never started (a bad model spec, a checkout that failed): give the trace
      // its run_started, so a reader sees what was asked before the error.
      const stored = await store.events(runId).catch(() => undefined);
      if (stored !== undefined && stored.length === 0) {
        new EventEmitterForRun(runId, (e) => store.append(e)).emit({
          type: "run_started",
          goal: request.goal,
          profile: request.profile ?? "Orchestrator",
          model: request.model ?? "(not started)",
          workspace: options.workspace,
          maxSteps: 0,
          mcp: request.mcp === true,
          kind: "goal",
        });
        await store.flush(runId).catch(() => undefined);
      }
      // A failure before or around the loop (a bad model spec, a checkout that failed): the run still ends.
      await endRun(db, runId, message, id).catch(() => undefined);
      options.onRun?.({ type: "ended", runId, outcome: "error", error: message });
    } finally {
      controllers.delete(runId);
    }
  };

  const { run } = await import("graphile-worker");
  const runner = await run({
    pgPool: db.pool,
    concurrency: options.concurrency ?? 1,
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: await queueLogger(),
    taskList: { [RUN_TASK]: runTask },
  });

  let stopping: Promise<void> | undefined;
  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  const sweep = setInterval(() => {
    void sweepLostRuns(db).catch(() => undefined);
  }, options.sweepIntervalMs ?? 1_000);
  sweep.unref();

  const stop = (reason = "the worker is stopping"): Promise<void> => {
    stopping ??= (async () => {
      clearInterval(sweep);
      for (const c of controllers.values()) c.abort(new Error(reason));
      // A graceful stop: no new jobs, and it waits for the running ones (aborted above) to
      // write run_ended and publish before the store is closed.
      await runner.stop().catch(() => undefined);
      for (let waited = 0; controllers.size > 0 && waited < 30_000; waited += 50)
        await new Promise((r) => setTimeout(r, 50));
      await store.flush().catch(() => undefined);
      await store.close();
      approvals.denyAll(reason);
      await notifier.close();
      await db.pool.query("DELETE FROM capgate.workers WHERE id = $1", [id]).catch(() => undefined);
      await lock.end().catch(() => undefined);
      resolveStopped();
    })();
    return stopping;
  };
  // Without the lock the sweeper may end this worker's runs: stop them rather than write past it.
  const lost = () => void stop("the worker lost its database lock");
  lock.on("error", lost);
  lock.on("end", () => {
    if (!stopping) lost();
  });

  return { id, active: () => controllers.size, stop: () => stop(), stopped };
}
