import type { GlobalOptions } from "../context.js";
import { intOption, openHarness } from "../context.js";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";

export interface WorkerCommandOptions {
  database?: string;
  concurrency?: string;
  workspace?: string;
  workDir?: string;
}

/**
 * `capgate worker`: execute queued runs from PostgreSQL (graphile-worker), each in a fresh
 * checkout of the workspace, with this machine's MCP servers and browser. Runs until
 * SIGTERM/SIGINT, which aborts running runs (they end as `aborted`) and exits.
 */
export async function workerCommand(
  options: WorkerCommandOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const concurrency = intOption(options.concurrency, "--concurrency", 1, { max: 256 });
  const harness = await openHarness(global, options.workspace ? { workspace: options.workspace } : {});
  const { databaseSetting, describeQueueRunEvent, startQueueWorker } = await import("@capgate/host");
  const database = databaseSetting(options.database, process.env, harness.config);
  if (!database) {
    await harness.close();
    throw new CliError(
      "capgate worker needs a PostgreSQL URL",
      2,
      'pass --database postgresql://…, set CAPGATE_DATABASE_URL, or set "database" in capgate.config.json',
    );
  }
  const p = paint(io);
  let worker: Awaited<ReturnType<typeof startQueueWorker>>;
  try {
    worker = await startQueueWorker({
      harness,
      database,
      concurrency,
      ...(options.workDir ? { workRoot: options.workDir } : {}),
      onRun: (event) => {
        for (const line of describeQueueRunEvent(event, p)) io.out(line);
      },
    });
  } catch (error) {
    await harness.close();
    throw error;
  }
  io.out(
    `${p.bold("capgate worker")} ${worker.id} · concurrency ${concurrency} · ${worker.where} ${p.dim(`(workspace ${harness.workspace})`)}`,
  );
  let signalled = false;
  // A second signal exits at once (the exit hook still kills what the runs started).
  const onSignal = () => {
    if (signalled) process.exit(1);
    signalled = true;
    void worker.stop();
  };
  // `on`, not `once`: signal-exit (the exit hook that kills child processes) re-raises a
  // signal nobody else listens to, which would kill the worker in the middle of its stop.
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  await worker.stopped;
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  await harness.close().catch(() => undefined);
  await worker.close().catch(() => undefined);
  if (!signalled) {
    io.err(
      "capgate worker: lost its database connection; its runs are ended by the sweeper. Restart the worker.",
    );
    return 1;
  }
  return 0;
}
