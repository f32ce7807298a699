import type { Harness } from "@capgate/harness";
import type { RunResult } from "@capgate/postgres";
import type { DatabaseSetting } from "./database.js";
import { PLAIN_TEXT, type TextStyle } from "./event-text.js";

/** A run a queue worker started or ended, for the frontend's log. */
export interface QueueWorkerRunEvent {
  type: "started" | "ended";
  runId: string;
  outcome?: string;
  /** Where an ended run's changes went (a branch, or a patch). */
  result?: RunResult;
  error?: string;
}

/**
 * A worker's log lines for one run event: `run <id> started`; `run <id> <outcome> → branch
 * <b>` (or a patch, or the error); and what publishing stripped (nested repositories,
 * gitlinks), said where the operator looks.
 */
export function describeQueueRunEvent(event: QueueWorkerRunEvent, p: TextStyle = PLAIN_TEXT): string[] {
  const run = `${p.dim("run")} ${event.runId}`;
  if (event.type === "started") return [`${run} started`];
  const r = event.result;
  const where =
    r?.kind === "branch"
      ? ` → branch ${r.branch}`
      : r?.kind === "patch"
        ? ` → patch (${r.files.length} file(s))`
        : "";
  return [
    `${run} ${event.outcome}${where}${event.error ? ` — ${event.error}` : ""}`,
    ...(r?.notice ? [`${run} ${r.notice}`] : []),
  ];
}

export interface QueueWorkerOptions {
  /** The worker's harness: its capabilities, MCP servers, browser and configured workspace. */
  harness: Harness;
  database: DatabaseSetting;
  /** Runs at once on this worker (default 1). */
  concurrency?: number;
  /** Where the per-run checkouts go (default a temp dir). */
  workRoot?: string;
  onRun?: (event: QueueWorkerRunEvent) => void;
}

export interface QueueWorker {
  readonly id: string;
  /** The database URL with its password hidden, for logs. */
  readonly where: string;
  /** Stop taking runs, abort running ones (each ends with run_ended aborted). */
  stop(): Promise<void>;
  /** Resolves when the worker has stopped: by stop(), or because it lost its database connection. */
  readonly stopped: Promise<void>;
  /** Disconnect from the database (after `stopped`). */
  close(): Promise<void>;
}

/**
 * Execute queued runs from PostgreSQL (graphile-worker) with a harness's capabilities,
 * each in a fresh checkout of its workspace. The database driver loads only here.
 */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const { harness } = options;
  const { openDatabase, redactUrl, startWorker } = await import("@capgate/postgres");
  const db = await openDatabase({ url: options.database.url, setting: options.database.setting });
  const worker = await startWorker({
    db,
    environment: harness.environment,
    model: (spec) => harness.model(spec),
    workspace: harness.workspace,
    concurrency: options.concurrency ?? 1,
    ...(options.workRoot ? { workRoot: options.workRoot } : {}),
    ...(harness.maxSteps !== undefined ? { maxSteps: harness.maxSteps } : {}),
    ...(options.onRun ? { onRun: options.onRun } : {}),
  }).catch(async (error: unknown) => {
    await db.close().catch(() => undefined);
    throw error;
  });
  return {
    id: worker.id,
    where: redactUrl(options.database.url),
    stop: () => worker.stop(),
    stopped: worker.stopped,
    close: () => db.close(),
  };
}
