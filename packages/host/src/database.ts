import type { Harness } from "@capgate/harness";
import type { ApprovalRegistry, RunStore } from "@capgate/loop";
import type { RunLauncher } from "./run-launcher.js";

/** A PostgreSQL URL and the setting it came from (named in connection errors). */
export interface DatabaseSetting {
  url: string;
  setting: string;
}

/**
 * Which database URL applies: the option (`--database`), else `$CAPGATE_DATABASE_URL`,
 * else the config's `database`; undefined when none is set.
 */
export function databaseSetting(
  option: string | undefined,
  env: Record<string, string | undefined>,
  config: { database?: string | undefined },
  optionName = "--database",
): DatabaseSetting | undefined {
  if (option) return { url: option, setting: optionName };
  if (env.CAPGATE_DATABASE_URL) return { url: env.CAPGATE_DATABASE_URL, setting: "CAPGATE_DATABASE_URL" };
  if (config.database) return { url: config.database, setting: "database (config file)" };
  return undefined;
}

/** The database side of runs: "queue": where events, approvals and runs live, and who hands runs to workers. */
export interface QueueBackend {
  store: RunStore;
  approvals: ApprovalRegistry;
  launcher: (harness: Harness) => RunLauncher;
  close: () => Promise<void>;
}

export interface QueueBackendOptions {
  /** Deny an approval nobody answered within this time (default 15 minutes; 0 = never). */
  approvalTimeoutMs?: number;
  /** How often this node looks for runs whose worker died (default 2 s). */
  sweepIntervalMs?: number;
  scriptedModelsDir?: string;
}

/**
 * Open the PostgreSQL side of runs: "queue". Loaded only when used, so a frontend that
 * runs everything in-process never loads a database driver.
 */
export async function openQueueBackend(
  database: DatabaseSetting,
  options: QueueBackendOptions = {},
): Promise<QueueBackend> {
  const pgmod = await import("@capgate/postgres");
  const { QueueRunLauncher } = await import("./queue-launcher.js");
  const db = await pgmod.openDatabase({ url: database.url, setting: database.setting });
  const notifier = new pgmod.Notifier(db);
  const store = new pgmod.PgRunStore(db, notifier);
  const approvals = new pgmod.PgApprovalRegistry(
    db,
    notifier,
    options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {},
  );
  const queue = new pgmod.RunQueue(db);
  // API nodes sweep too: runs of a dead worker end even when no worker is left.
  const sweep = setInterval(
    () => void pgmod.sweepLostRuns(db).catch(() => undefined),
    options.sweepIntervalMs ?? 2_000,
  );
  sweep.unref();
  return {
    store,
    approvals,
    launcher: (harness) => new QueueRunLauncher(harness, queue, options.scriptedModelsDir),
    close: async () => {
      clearInterval(sweep);
      await store.close();
      await notifier.close();
      await db.close();
    },
  };
}
