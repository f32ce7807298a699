import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { ConfigReloadOutcome, ConfigWatcher, Harness } from "@capgate/harness";
import {
  checkToken,
  GateSessions,
  generateToken,
  type Host,
  type HostOptions,
  openHost,
  originPolicy,
  tokenMatcher,
} from "@capgate/host";
import { CapgateError } from "@capgate/schema";
import type { FastifyInstance } from "fastify";
import { registerGatewayRoutes } from "./gateway-routes.js";
import { createApp, type GuardState, type ServerTimeouts } from "./http-app.js";
import type { ServerLogOptions } from "./logging.js";
import { registerMcpRoute } from "./mcp-endpoint.js";
import { registerMcpInteractionRoutes } from "./mcp-interaction-routes.js";
import { registerRunRoutes } from "./runs-routes.js";
import { registerViewerRoutes } from "./viewer-routes.js";

/**
 * The host's options (config, workspace, runs, approvals — see `@capgate/host`) plus
 * what is HTTP's: where to listen, the token, Host/Origin allowances, /mcp session limits,
 * slow-client timeouts and the request log.
 */
export interface StartServerOptions extends Omit<HostOptions, "onRunError"> {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 7777; 0 picks a free one). */
  port?: number;
  /** Bearer token; default $CAPGATE_TOKEN, else a generated one (read it from the result). */
  token?: string;
  /** Extra Host header values to accept, as the client sends them (`name` or `name:port`), e.g. behind a proxy. */
  allowedHosts?: string[];
  /** Extra Origin values to accept (`null` never is). */
  allowedOrigins?: string[];
  /** /mcp sessions open at once, per bearer token, and their idle lifetime (defaults: the config's `gate`, else 64, 64 and 5 minutes). */
  maxMcpSessions?: number;
  maxMcpSessionsPerToken?: number;
  mcpSessionIdleMs?: number;
  timeouts?: ServerTimeouts;
  /** Log requests and errors as JSON lines (default: nothing is printed). The token is never logged. */
  log?: ServerLogOptions | false;
  /** Environment to read CAPGATE_TOKEN (and the host's variables) from (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * Put an edited config file in force while running (MCP servers added, removed, changed;
   * see docs/server.md): the file given by `configPath`, else `capgate.config.json` in `cwd`.
   * Off by default (`capgate serve` turns it on); without a file to read (a `config` value,
   * a given `harness`) there is nothing to watch. `reloadConfig()` reloads on request either way.
   */
  watchConfig?: boolean;
  /** Told about every config reload, good or refused (also logged to the request log). */
  onConfigReload?: (outcome: ConfigReloadOutcome) => void;
  /**
   * Told when the config file is not watched (its directory cannot be, or it is inside the
   * workspace, where the model can write it); `reloadConfig()` still reloads it.
   */
  onConfigWatchError?: (path: string, error: Error) => void;
}

export interface RunningServer {
  /** `http://127.0.0.1:7777` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  /** The viewer link with the token in its fragment: `http://127.0.0.1:7777/#token=…`. */
  readonly viewerUrl: string;
  readonly harness: Harness;
  /** Where runs execute: in this process, or on queue workers. */
  readonly runs: "local" | "queue";
  /**
   * Read the config file again and put it in force (what SIGHUP does for `capgate serve`):
   * resolves with what changed, or why the edit was refused (the last good config stays).
   * Refused when the server has no config file (it was given a config value or a harness).
   */
  reloadConfig(): Promise<ConfigReloadOutcome>;
  /**
   * Stop accepting requests, abort running runs (each trace ends with `run_ended {
   * outcome: "aborted" }`), deny pending approvals, end event streams, close MCP
   * sessions, then the harness (MCP servers, the browser, background processes).
   */
  close(): Promise<void>;
}

/**
 * Start capgate's HTTP server over a host: the /tools/call gateway, goal runs with
 * live events, approvals, the gate at /mcp and the run viewer at /. Binds 127.0.0.1:7777
 * unless told otherwise; every route but /healthz and the viewer's static files needs
 * `Authorization: Bearer <token>`.
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const bind = options.host ?? "127.0.0.1";
  const port = checkPort(options.port ?? 7777);
  const token = serverToken(options.token, env);
  const state: GuardState = { closing: false, policy: undefined, tokenMatches: tokenMatcher(token) };
  const shutdown = new AbortController();
  let app: FastifyInstance | undefined;
  const host = await openHost({
    ...options,
    env,
    onRunError: (runId, error) => app?.log.error({ err: error, runId }, "run failed"),
  });
  const gates = new GateSessions({
    harness: host.harness,
    policy: () => state.policy!,
    version: packageVersion(),
    ...(options.maxMcpSessions ? { maxSessions: options.maxMcpSessions } : {}),
    ...(options.mcpSessionIdleMs ? { idleMs: options.mcpSessionIdleMs } : {}),
    ...(options.maxMcpSessionsPerToken ? { maxSessionsPerToken: options.maxMcpSessionsPerToken } : {}),
  });
  app = createApp(options, state);
  registerRoutes(app, host, gates, shutdown.signal);
  const bound = await listen(app, host, gates, bind, port);
  state.policy = originPolicy({
    host: bind,
    port: bound,
    extraHosts: options.allowedHosts ?? [],
    extraOrigins: options.allowedOrigins ?? [],
  });
  const url = `http://${formatHost(bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "::1" : bind)}:${bound}`;
  const server = app;
  const watcher = await configWatcher(
    options,
    host,
    (outcome) => {
      if (outcome.ok) server.log.info({ reload: outcome.result, path: outcome.path }, "config reloaded");
      else server.log.error({ path: outcome.path, err: outcome.error }, "config reload refused");
      options.onConfigReload?.(outcome);
    },
    (path, error) => {
      server.log.error({ path, err: error }, "cannot watch the config file; reloadConfig() still reloads it");
      options.onConfigWatchError?.(path, error);
    },
  );
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      watcher?.close();
      state.closing = true;
      shutdown.abort(new Error("the server is shutting down"));
      // Runs first: each writes run_ended, which also ends its event streams.
      await host.stop();
      await gates.close();
      host.feed.close();
      await server.close();
      await host.close();
    })();
    return closed;
  };
  return {
    url,
    host: bind,
    port: bound,
    token,
    viewerUrl: `${url}/#token=${encodeURIComponent(token)}`,
    harness: host.harness,
    runs: host.mode,
    reloadConfig: async () => {
      if (watcher) return watcher.reload();
      const { CapgateError: Refusal } = await import("@capgate/schema");
      const outcome: ConfigReloadOutcome = {
        ok: false,
        path: "",
        trigger: "request",
        error: new Refusal(
          "no_config_file",
          "This server has no config file to reload: it was started with a config value or a harness.",
        ),
      };
      options.onConfigReload?.(outcome);
      return outcome;
    },
    close,
  };
}

/**
 * The watcher of the config file the host read at start (or would have read: a file
 * created later is picked up), watching the file only when `watchConfig` asks; undefined
 * when the config did not come from a file.
 */
async function configWatcher(
  options: StartServerOptions,
  host: Host,
  onReload: (outcome: ConfigReloadOutcome) => void,
  onWatchError: (path: string, error: Error) => void,
): Promise<ConfigWatcher | undefined> {
  if (options.harness || options.config !== undefined) return undefined;
  const { CONFIG_FILE_NAME, watchConfig } = await import("@capgate/harness");
  const path =
    host.harness.configPath ??
    (options.configPath ? resolve(options.configPath) : join(resolve(options.cwd ?? "."), CONFIG_FILE_NAME));
  return watchConfig(host.harness, {
    path,
    onReload,
    watch: options.watchConfig === true,
    onWatchError: (error) => onWatchError(path, error),
  });
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CapgateError("invalid_port", `The port must be an integer from 0 to 65535; got ${port}.`, {
      property: "port",
    });
  }
  return port;
}

function serverToken(given: string | undefined, env: Record<string, string | undefined>): string {
  if (given !== undefined) return checkToken(given, "the token option");
  return env.CAPGATE_TOKEN ? checkToken(env.CAPGATE_TOKEN, "CAPGATE_TOKEN") : generateToken();
}

function registerRoutes(app: FastifyInstance, host: Host, gates: GateSessions, shutdown: AbortSignal): void {
  app.get("/healthz", { config: { public: true } }, async () => ({ ok: true }));
  // What is open and waiting (the host's counts), and this server's MCP sessions.
  app.get("/status", async () => ({ ...(await host.counts()), mcpSessions: gates.count() }));
  registerGatewayRoutes(app, { harness: host.harness, shutdown });
  registerRunRoutes(app, host);
  registerMcpInteractionRoutes(app, host);
  registerMcpRoute(app, gates);
  registerViewerRoutes(app);
}

/** Listen, and on failure close what was opened; resolves with the bound port. */
async function listen(
  app: FastifyInstance,
  host: Host,
  gates: GateSessions,
  bind: string,
  port: number,
): Promise<number> {
  try {
    await app.listen({ host: bind, port });
  } catch (error) {
    await gates.close();
    await host.close().catch(() => undefined);
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new CapgateError(
        "address_in_use",
        `${formatHost(bind)}:${port} is already in use; pick another --port.`,
        { property: "port", cause: error },
      );
    }
    throw error;
  }
  return (app.server.address() as AddressInfo).port;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

function formatHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
