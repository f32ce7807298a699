import { realpathSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import type { Harness } from "@capgate/harness";
import { CapgateError } from "@capgate/schema";
import type { ApprovalMode } from "@capgate/tools";

export interface StdioGateOptions {
  /**
   * The config file; else `CAPGATE_CONFIG` of `env`; else the workspace's own
   * capgate.config.json (else the current directory's).
   */
  configPath?: string;
  /**
   * The workspace given on purpose (a flag); else `CAPGATE_WORKSPACE` of `env` (desktop
   * clients set variables, not flags); else the config's, else the current directory.
   */
  workspace?: string;
  /** The session's profile and the capabilities it starts with loaded. */
  profile?: string;
  preload?: string[];
  /** Approval mode; `on-risk`/`always` ask the client's user by elicitation. */
  approval?: ApprovalMode;
  /** Capability plugins beside the config's (resolved from the current directory). */
  capabilityPlugins?: string[];
  /** The version the gate reports to its client. */
  version: string;
  /** One line for the operator: stderr, since stdout is the MCP channel. */
  log: (line: string) => void;
  /** Told once the harness is built, before serving (a frontend reports plugin problems here). */
  onHarness?: (harness: Harness) => void;
  /** Environment for HOME, CAPGATE_CONFIG and CAPGATE_WORKSPACE (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * Handle this process's signals, as a stdio server started by a client should: SIGTERM
   * and SIGINT close the gate, SIGHUP reloads the config; the listeners go when it closes.
   * Default: the caller's (wire them to `close()` and `reload()`).
   */
  signals?: boolean;
}

/** The gate being served on stdio. */
export interface StdioGate {
  readonly harness: Harness;
  /** Settles when the client has gone (stdin ended) or `close()` was called, after everything is closed. */
  readonly closed: Promise<void>;
  /** Put the config file in force again (what SIGHUP does). */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The gate as an MCP server on this process's stdio — four tools instead of hundreds — for
 * desktop clients (Claude Desktop, Cursor, Claude Code). They start it from a working
 * directory of their choosing (`/` for Claude Desktop), so an implicit workspace of `/` or
 * the home directory is refused instead of serving the whole disk. An edited config file is
 * put in force while serving, unless it lies inside the workspace (`watchConfig`).
 * Signals are the caller's (wire SIGTERM/SIGINT to `close()` and SIGHUP to `reload()`),
 * or, with `signals`, handled here.
 * @throws CapgateError `implicit_workspace` for an implicit `/` or home workspace.
 */
export async function serveGateOnStdio(options: StdioGateOptions): Promise<StdioGate> {
  const env = options.env ?? process.env;
  const { CONFIG_FILE_NAME, createHarness, describeReload, loadConfig, watchConfig } = await import(
    "@capgate/harness"
  );
  const explicit = options.workspace ?? nonEmpty(env.CAPGATE_WORKSPACE);
  const configPath = options.configPath ?? nonEmpty(env.CAPGATE_CONFIG);
  // Without a config path, the workspace's own capgate.config.json (the cwd of a desktop client means nothing).
  const config = loadConfig(configPath ? { path: configPath } : explicit ? { cwd: resolve(explicit) } : {});
  if (!explicit && !config.config.workspace) refuseImplicitRoot(env);
  const { createGateServer, elicitingApprover } = await import("@capgate/mcp-client");
  let server: Awaited<ReturnType<typeof createGateServer>> | undefined;
  const harness = await createHarness({
    config,
    ...(explicit ? { workspace: explicit } : {}),
    ...(options.capabilityPlugins?.length ? { capabilityPlugins: options.capabilityPlugins } : {}),
    ...(options.approval ? { approval: options.approval } : {}),
    approve: elicitingApprover(() => server),
  });
  for (const notice of harness.notices) options.log(notice);
  options.onHarness?.(harness);
  let session: ReturnType<typeof harness.createGateSession>;
  try {
    session = harness.createGateSession({
      ...(options.profile ? { profile: options.profile } : {}),
      ...(options.preload?.length ? { preload: options.preload } : {}),
    });
  } catch (error) {
    await harness.close();
    throw error;
  }
  const { serveGateOverStdio } = await import("@capgate/mcp-client/stdio");
  server = await createGateServer({
    name: "capgate",
    version: options.version,
    handlers: session.handlers,
    ...(session.resources ? { resources: session.resources } : {}),
    ...(session.prompts ? { prompts: session.prompts } : {}),
  });
  const servers = Object.keys(config.mcpServers);
  options.log(
    `capgate mcp serve · workspace ${harness.workspace} · config ${config.path ?? "(none)"} · MCP servers ${servers.length ? servers.join(", ") : "(none)"} · trace ${harness.store.pathOf(session.runId)}`,
  );
  const serving = await serveGateOverStdio(server);
  // The file need not exist yet: one created later is picked up.
  const watched = config.path ?? join(explicit ? resolve(explicit) : process.cwd(), CONFIG_FILE_NAME);
  const watcher = watchConfig(harness, {
    path: watched,
    onReload: (outcome) => options.log(`capgate mcp serve · ${describeReload(outcome)}`),
    onWatchError: (error) =>
      options.log(`capgate mcp serve · cannot watch ${watched} (${error.message}); SIGHUP still reloads it`),
  });
  // `on`, not `once`: signal-exit (the exit hook that kills child processes) re-raises a
  // signal nobody else listens to, which would end the process before the close finished.
  const onStop = () => void serving.close();
  const onHup = () => void watcher.reload();
  const signals = options.signals
    ? ([
        ["SIGTERM", onStop],
        ["SIGINT", onStop],
        ["SIGHUP", onHup],
      ] as const)
    : [];
  for (const [signal, listener] of signals) process.on(signal, listener);
  const closed = serving.closed.finally(async () => {
    watcher.close();
    try {
      await session.close();
      await harness.close();
    } finally {
      // Only now: a SIGTERM during the close (a client closes stdin, then signals) must find
      // our listener, not end the process before the sandboxes' after-command steps.
      for (const [signal, listener] of signals) process.off(signal, listener);
    }
  });
  return {
    harness,
    closed,
    reload: async () => {
      await watcher.reload();
    },
    close: async () => {
      await serving.close();
      await closed;
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** Refuse `/` and the home directory as a workspace nobody chose: only the current directory. */
function refuseImplicitRoot(env: Record<string, string | undefined>): void {
  const cwd = realOrSelf(process.cwd());
  // $HOME, and the account's own home whatever HOME says.
  const homes = [env.HOME ?? homedir(), accountHome()].filter((h): h is string => !!h).map(realOrSelf);
  if (cwd !== "/" && !homes.includes(cwd)) return;
  throw new CapgateError(
    "implicit_workspace",
    `refusing to serve ${cwd === "/" ? "/" : `your home directory (${cwd})`} as the workspace: it is only the current directory, which desktop MCP clients set as they like`,
    { property: "workspace" },
  );
}

function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined;
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
