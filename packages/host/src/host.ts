import type { CapgateConfig, Harness, ResolvedConfig } from "@capgate/harness";
import type { ApprovalRegistry, PendingApproval, RunStore, RunSummary } from "@capgate/loop";
import type { ApprovalMode, Capability } from "@capgate/tools";
import { databaseSetting, openQueueBackend, type QueueBackend } from "./database.js";
import type { ElicitationRegistry, McpLoginRegistry } from "./mcp-interactions.js";
import { RunFeed } from "./run-feed.js";
import type { ActiveRun, RunLauncher } from "./run-launcher.js";

export interface HostOptions {
  /** Workspace root (default: the config's, else the current directory). */
  workspace?: string;
  /** A config value or one loaded with loadConfig(). */
  config?: CapgateConfig | ResolvedConfig;
  /** Without `config`: the config file to load (`--config`); it must exist. */
  configPath?: string;
  /** Without `config` or `configPath`: where to look for capgate.config.json (default the current directory; none there means an empty config). */
  cwd?: string;
  /** Traces and memory (default: the config's, else $CAPGATE_HOME, else ~/.capgate). */
  stateDir?: string;
  /** Default approval mode of runs (and gate sessions); default: the config's, else `never`. */
  approval?: ApprovalMode;
  /** Extra capabilities beside the ten built-ins. */
  capabilities?: Capability[];
  /**
   * More capability plugins (package names or paths) beside the config's `capabilities` —
   * the CLI's `--capability` — loaded, linted and registered like those; resolved against
   * `pluginBaseDir` (default the current directory). Ones that fail are in `harness.capabilityProblems`.
   */
  capabilityPlugins?: string[];
  pluginBaseDir?: string;
  /** Host this harness instead of building one (it is not closed by close()). */
  harness?: Harness;
  /** Goal runs executing at once (default 4); more wait in a queue of up to `maxQueuedRuns` (default 100). */
  maxConcurrentRuns?: number;
  maxQueuedRuns?: number;
  /** Keep-alive comment interval of event streams (default 15 s). */
  heartbeatMs?: number;
  /** Deny an approval (decline an elicitation) nobody answered within this time (default 15 minutes; 0 = never). */
  approvalTimeoutMs?: number;
  /**
   * Directory of scripted model files (`scripted:<file>`) that a run request may name, for
   * demos and tests. Without it such requests are refused: the spec names a file on this
   * machine, and whoever may start runs must not be able to make it read arbitrary files
   * (and quote them back in errors). A model from the config file is unaffected.
   * Default: `$CAPGATE_SCRIPTED_MODELS_DIR`, else none.
   */
  scriptedModelsDir?: string;
  /** Environment to read CAPGATE_HOME, CAPGATE_SCRIPTED_MODELS_DIR and CAPGATE_DATABASE_URL from (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * Where goal runs execute: `local` (in this process, traces as JSONL: the default) or
   * `queue` (handed to `capgate worker` nodes through PostgreSQL; events, approvals and the
   * run list come from the database, so any node serves any run). Default: `queue` when a
   * database is configured, else `local`.
   */
  runs?: "local" | "queue";
  /** PostgreSQL URL for runs: "queue" (default: $CAPGATE_DATABASE_URL, else the config's `database`). */
  database?: string;
  /** How often a node in queue mode looks for runs whose worker died (default 2 s). */
  sweepIntervalMs?: number;
  /** Told about a local run that failed outside the loop's own error handling. */
  onRunError?: (runId: string, error: unknown) => void;
}

/** `queued`/`running` here; `ended` with a run_ended; `interrupted` when the trace stops short and nothing here is writing it. */
export type RunState = "queued" | "running" | "ended" | "interrupted";

/** One run as a frontend shows it: its summary, its state and the approvals waiting for an answer. */
export interface RunView extends Partial<Omit<RunSummary, "phase">> {
  id: string;
  runId: string;
  goal: string;
  status: RunState;
  pendingApprovals: PendingApproval[];
}

/** What is open and waiting, for a status page. */
export interface HostCounts {
  runs: { running: number; queued: number };
  streams: number;
  pendingApprovals: number;
  pendingElicitations: number;
  pendingLogins: number;
}

/**
 * What a frontend that starts runs and shows them needs, composed from one config: the
 * harness, who executes runs (`runs`), where their events are read (`store`, `feed`), the
 * operator's pending approvals, MCP elicitations and logins.
 */
export interface Host {
  readonly harness: Harness;
  /** Where runs execute: in this process, or on queue workers. */
  readonly mode: "local" | "queue";
  /** Where runs' events and summaries are read from (the harness's trace files, or PostgreSQL). */
  readonly store: RunStore;
  readonly runs: RunLauncher;
  readonly approvals: ApprovalRegistry;
  readonly elicitations: ElicitationRegistry;
  readonly logins: McpLoginRegistry;
  readonly feed: RunFeed;
  /** A run of this host (stored, queued or running), or undefined. */
  run(id: string): Promise<RunView | undefined>;
  /** The most recent runs, queued ones first. */
  listRuns(limit?: number): Promise<RunView[]>;
  /** Whether the run may still emit events (queued, running here or on a worker, a live gate session). */
  isActive(id: string): Promise<boolean>;
  counts(): Promise<HostCounts>;
  /**
   * Stop taking runs, abort running ones (each trace ends with `run_ended { outcome:
   * "aborted" }`), deny pending approvals, decline elicitations and cancel logins.
   */
  stop(reason?: string): Promise<void>;
  /** stop(), then end event streams and close the harness (when made here) and the database. */
  close(): Promise<void>;
}

/**
 * Open a host: the harness (unless one is given), runs in this process or on the
 * PostgreSQL queue, the run feed, and the registries where approvals, MCP elicitations and
 * logins wait for the operator.
 */
export async function openHost(options: HostOptions = {}): Promise<Host> {
  // The harness and the loop load here, not when the package is imported.
  const { loadConfig } = await import("@capgate/harness");
  const env = options.env ?? process.env;
  const scriptedModelsDir = options.scriptedModelsDir ?? (env.CAPGATE_SCRIPTED_MODELS_DIR || undefined);
  const loaded =
    options.config === undefined && options.harness === undefined
      ? loadConfig({
          ...(options.cwd ? { cwd: options.cwd } : {}),
          ...(options.configPath ? { path: options.configPath } : {}),
        })
      : undefined;
  const queue = await openRuns(options, configDatabase(options, loaded), env, scriptedModelsDir);
  try {
    return await compose(options, loaded, queue, env, scriptedModelsDir);
  } catch (error) {
    await queue?.close().catch(() => undefined);
    throw error;
  }
}

function configDatabase(options: HostOptions, loaded: ResolvedConfig | undefined): string | undefined {
  const given = options.config;
  return (
    options.harness?.config.database ??
    (given && "baseDir" in given && "config" in given
      ? (given as ResolvedConfig).config.database
      : (given as CapgateConfig | undefined)?.database) ??
    loaded?.config.database
  );
}

/** The queue backend when runs go to workers; undefined when they run here. */
async function openRuns(
  options: HostOptions,
  configured: string | undefined,
  env: Record<string, string | undefined>,
  scriptedModelsDir: string | undefined,
): Promise<QueueBackend | undefined> {
  const database = databaseSetting(
    options.database,
    env,
    { database: configured },
    "the database option (--database)",
  );
  const mode = options.runs ?? (database ? "queue" : "local");
  if (mode === "local") return undefined;
  if (!database) {
    const { CapgateError } = await import("@capgate/schema");
    throw new CapgateError(
      "no_database",
      'runs: "queue" needs a PostgreSQL URL: pass --database, set CAPGATE_DATABASE_URL, or set "database" in capgate.config.json.',
      { property: "database" },
    );
  }
  return openQueueBackend(database, {
    ...(options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
    ...(options.sweepIntervalMs !== undefined ? { sweepIntervalMs: options.sweepIntervalMs } : {}),
    ...(scriptedModelsDir ? { scriptedModelsDir } : {}),
  });
}

async function compose(
  options: HostOptions,
  loaded: ResolvedConfig | undefined,
  queue: QueueBackend | undefined,
  env: Record<string, string | undefined>,
  scriptedModelsDir: string | undefined,
): Promise<Host> {
  const [
    { createHarness },
    { MemoryApprovalRegistry },
    { ElicitationRegistry, McpLoginRegistry },
    { RunManager },
  ] = await Promise.all([
    import("@capgate/harness"),
    import("@capgate/loop"),
    import("./mcp-interactions.js"),
    import("./run-manager.js"),
  ]);
  const timeout = options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {};
  const approvals: ApprovalRegistry = queue?.approvals ?? new MemoryApprovalRegistry(timeout);
  // MCP servers' form requests wait for the operator like approvals (only for a harness made here).
  const elicitations = new ElicitationRegistry(timeout);
  const harness =
    options.harness ??
    (await createHarness({
      config: options.config ?? (loaded as ResolvedConfig),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.stateDir ? { stateDir: options.stateDir } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
      ...(options.capabilityPlugins?.length ? { capabilityPlugins: options.capabilityPlugins } : {}),
      ...(options.pluginBaseDir ? { pluginBaseDir: options.pluginBaseDir } : {}),
      approve: approvals.hook,
      onElicitation: elicitations.hook,
      processEnv: env,
    }));
  const logins = new McpLoginRegistry(harness);
  const store: RunStore = queue?.store ?? harness.store;
  const feed = new RunFeed(store, options.heartbeatMs ?? 15_000);
  const runs: RunLauncher = queue
    ? queue.launcher(harness)
    : new RunManager(harness, {
        approve: approvals.hook,
        ...(options.onRunError ? { onError: options.onRunError } : {}),
        ...(options.approval ? { approval: options.approval } : {}),
        ...(options.maxConcurrentRuns ? { maxConcurrent: options.maxConcurrentRuns } : {}),
        ...(options.maxQueuedRuns ? { maxQueued: options.maxQueuedRuns } : {}),
        ...(scriptedModelsDir ? { scriptedModelsDir } : {}),
      });
  const isActive = async (id: string) => feed.isLive(id) || (await runs.get(id)) !== undefined;
  const view = viewer(approvals, feed);

  let stopped: Promise<void> | undefined;
  const stop = (reason = "the server is shutting down"): Promise<void> => {
    stopped ??= (async () => {
      // Runs first: each writes run_ended, which also ends its event streams.
      await runs.shutdown(reason);
      approvals.denyAll(reason);
      elicitations.declineAll();
      logins.cancelAll();
    })();
    return stopped;
  };
  let closed: Promise<void> | undefined;
  return {
    harness,
    mode: queue ? "queue" : "local",
    store,
    runs,
    approvals,
    elicitations,
    logins,
    feed,
    async run(id) {
      const [active, summary] = await Promise.all([runs.get(id), store.summary(id)]);
      return summary || active ? view(summary, active, id) : undefined;
    },
    async listRuns(limit = 100) {
      const [stored, active] = await Promise.all([store.runs(limit), runs.list()]);
      const seen = new Set(stored.map((s) => s.runId));
      const byId = new Map(active.map((r) => [r.id, r]));
      const queued = await Promise.all(
        active.filter((r) => !seen.has(r.id)).map((r) => view(undefined, r, r.id)),
      );
      const listed = await Promise.all(stored.map((s) => view(s, byId.get(s.runId), s.runId)));
      return [...queued, ...listed].slice(0, limit);
    },
    isActive,
    async counts() {
      return {
        runs: await runs.counts(),
        streams: feed.count(),
        pendingApprovals: await approvals.count(),
        pendingElicitations: elicitations.count(),
        pendingLogins: logins.count(),
      };
    },
    stop,
    close() {
      closed ??= (async () => {
        await stop();
        feed.close();
        if (!options.harness) await harness.close();
        await queue?.close();
      })();
      return closed;
    },
  };
}

/** A run's view from its stored summary and, while it has not ended, its launcher entry. */
function viewer(approvals: ApprovalRegistry, feed: RunFeed) {
  return async (
    summary: RunSummary | undefined,
    active: ActiveRun | undefined,
    id: string,
  ): Promise<RunView> => {
    const { phase, ...rest } = summary ?? {};
    const status: RunState = active
      ? active.status
      : summary?.outcome !== undefined || phase === "ended"
        ? "ended"
        : phase === "queued" || phase === "running" || feed.isLive(id)
          ? (phase ?? "running")
          : "interrupted";
    return {
      ...rest,
      id,
      runId: id,
      goal: summary?.goal ?? active?.goal ?? "",
      ...(summary === undefined && active?.profile ? { profile: active.profile } : {}),
      ...(summary === undefined && active ? { queuedAt: active.queuedAt } : {}),
      status,
      pendingApprovals: await approvals.pendingFor(id),
    };
  };
}
