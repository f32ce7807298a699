import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import {
  type CapgateConfig,
  createHarness,
  type Harness,
  loadConfig,
  type ResolvedConfig,
} from "@capgate/harness";
import { type ApprovalRegistry, MemoryApprovalRegistry, type RunStore } from "@capgate/loop";
import { CapgateError } from "@capgate/schema";
import type { ApprovalMode, Capability } from "@capgate/tools";
import Fastify from "fastify";
import { registerGatewayRoutes } from "./gateway-routes.js";
import { errorBody, toErrorResponse } from "./http-errors.js";
import { loggerOptions, type ServerLogOptions } from "./logging.js";
import { McpEndpoint } from "./mcp-endpoint.js";
import { registerMcpInteractionRoutes } from "./mcp-interaction-routes.js";
import { ElicitationRegistry, McpLoginRegistry } from "./mcp-interactions.js";
import { RunFeed } from "./run-feed.js";
import type { RunLauncher } from "./run-launcher.js";
import { RunManager } from "./run-manager.js";
import { registerRunRoutes } from "./runs-routes.js";
import {
  bearerToken,
  checkHostAndOrigin,
  checkToken,
  generateToken,
  type OriginPolicy,
  originPolicy,
  tokenMatcher,
} from "./security.js";
import { registerViewerRoutes } from "./viewer-routes.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Served without the bearer token (health check, the viewer's static files). */
    public?: boolean;
  }
}

/** The body limit of every route (SPEC §12). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerTimeouts {
  /** Time to receive the request headers (default 10 s). */
  headersMs?: number;
  /** Time to receive the whole request, body included (default 30 s); responses (SSE, long tool calls) are not limited. */
  requestMs?: number;
  /** Idle keep-alive connections close after this (default 5 s). */
  keepAliveMs?: number;
}

/** The slow-client cut-offs docs/server.md promises. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * How often Node checks connections against those limits. Node's default is every 30 s,
 * which turns "10 s for the headers" into anything up to 40 s; a check every second (or
 * every quarter of a shorter limit) keeps each cut-off within a second of what it says.
 */
function checkingIntervalMs(headersMs: number, requestMs: number): number {
  return Math.max(25, Math.min(1_000, Math.floor(Math.min(headersMs, requestMs) / 4)));
}

/** Headers a request may carry only once: two Host (or Authorization) values mean two readings of one request. */
const SINGLE_HEADERS = ["host", "authorization"] as const;

function duplicateHeader(rawHeaders: readonly string[]): string | undefined {
  let host = false;
  let authorization = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // Every request runs this: a length test first skips lowercasing the other headers.
    if (name.length !== 4 && name.length !== 13) continue;
    const lower = name.toLowerCase();
    if (lower === SINGLE_HEADERS[0]) {
      if (host) return lower;
      host = true;
    } else if (lower === SINGLE_HEADERS[1]) {
      if (authorization) return lower;
      authorization = true;
    }
  }
  return undefined;
}

export interface StartServerOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 7777; 0 picks a free one). */
  port?: number;
  /** Bearer token; default $CAPGATE_TOKEN, else a generated one (read it from the result). */
  token?: string;
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
  /** Serve this harness instead of building one (it is not closed by close()). */
  harness?: Harness;
  /** Extra Host header values to accept, as the client sends them (`name` or `name:port`), e.g. behind a proxy. */
  allowedHosts?: string[];
  /** Extra Origin values to accept (`null` never is). */
  allowedOrigins?: string[];
  /** Goal runs executing at once (default 4); more wait in a queue of up to `maxQueuedRuns` (default 100). */
  maxConcurrentRuns?: number;
  maxQueuedRuns?: number;
  /** SSE keep-alive comment interval (default 15 s). */
  heartbeatMs?: number;
  /** Deny an approval nobody answered within this time (default 15 minutes; 0 = never). */
  approvalTimeoutMs?: number;
  /** /mcp sessions open at once, per bearer token, and their idle lifetime (defaults: the config's `gate`, else 64, 64 and 5 minutes). */
  maxMcpSessions?: number;
  maxMcpSessionsPerToken?: number;
  mcpSessionIdleMs?: number;
  timeouts?: ServerTimeouts;
  /**
   * Directory of scripted model files (`scripted:<file>`) that POST /runs may name, for
   * demos and tests. Without it POST /runs refuses scripted models: the spec names a file
   * on the server, and a token holder must not be able to make the server read arbitrary
   * files (and quote them back in errors). A model from the config file is unaffected.
   * Default: `$CAPGATE_SCRIPTED_MODELS_DIR` (so `capgate serve` can set it), else none.
   */
  scriptedModelsDir?: string;
  /** Log requests and errors as JSON lines (default: nothing is printed). The token is never logged. */
  log?: ServerLogOptions | false;
  /** Environment to read CAPGATE_TOKEN, CAPGATE_HOME, CAPGATE_SCRIPTED_MODELS_DIR and CAPGATE_DATABASE_URL from (default process.env). */
  env?: Record<string, string | undefined>;
  /**
   * Where goal runs execute: `local` (in this process, traces as JSONL: the default) or
   * `queue` (handed to `capgate worker` nodes through PostgreSQL; events, approvals and the
   * run list come from the database, so any API node serves any run). Default: `queue`
   * when a database is configured, else `local`.
   */
  runs?: "local" | "queue";
  /** PostgreSQL URL for runs: "queue" (default: $CAPGATE_DATABASE_URL, else the config's `database`). */
  database?: string;
  /** How often an API node in queue mode looks for runs whose worker died (default 2 s). */
  sweepIntervalMs?: number;
}

interface QueueParts {
  store: RunStore;
  approvals: ApprovalRegistry;
  launcher: (harness: Harness) => RunLauncher;
  close: () => Promise<void>;
}

/** The database side of queue mode, loaded only when it is used (the embedded default never loads a driver). */
async function openQueue(
  url: string,
  setting: string,
  options: StartServerOptions,
  scriptedModelsDir: string | undefined,
): Promise<QueueParts> {
  const pgmod = await import("@capgate/postgres");
  const { QueueRunLauncher } = await import("./queue-launcher.js");
  const db = await pgmod.openDatabase({ url, setting });
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
    launcher: (harness) => new QueueRunLauncher(harness, queue, scriptedModelsDir),
    close: async () => {
      clearInterval(sweep);
      await store.close();
      await notifier.close();
      await db.close();
    },
  };
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
   * Stop accepting requests, abort running runs (each trace ends with `run_ended {
   * outcome: "aborted" }`), deny pending approvals, end event streams, close MCP
   * sessions, then the harness (MCP servers, the browser, background processes).
   */
  close(): Promise<void>;
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

/**
 * Start capgate's HTTP server over a harness: the /tools/call gateway, goal runs with
 * live events, approvals, the gate at /mcp and the run viewer at /. Binds 127.0.0.1:7777
 * unless told otherwise; every route but /healthz and the viewer's static files needs
 * `Authorization: Bearer <token>`.
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const scriptedModelsDir = options.scriptedModelsDir ?? (env.CAPGATE_SCRIPTED_MODELS_DIR || undefined);
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 7777;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CapgateError("invalid_port", `The port must be an integer from 0 to 65535; got ${port}.`, {
      property: "port",
    });
  }
  const token =
    options.token !== undefined
      ? checkToken(options.token, "the token option")
      : env.CAPGATE_TOKEN
        ? checkToken(env.CAPGATE_TOKEN, "CAPGATE_TOKEN")
        : generateToken();
  const tokenMatches = tokenMatcher(token);

  const loaded =
    options.config === undefined && options.harness === undefined
      ? loadConfig({
          ...(options.cwd ? { cwd: options.cwd } : {}),
          ...(options.configPath ? { path: options.configPath } : {}),
        })
      : undefined;
  const given = options.config;
  const configDatabase =
    options.harness?.config.database ??
    (given && "baseDir" in given && "config" in given
      ? (given as ResolvedConfig).config.database
      : (given as CapgateConfig | undefined)?.database) ??
    loaded?.config.database;
  const database = options.database
    ? { url: options.database, setting: "the database option (--database)" }
    : env.CAPGATE_DATABASE_URL
      ? { url: env.CAPGATE_DATABASE_URL, setting: "CAPGATE_DATABASE_URL" }
      : configDatabase
        ? { url: configDatabase, setting: "database (config file)" }
        : undefined;
  const mode = options.runs ?? (database ? "queue" : "local");
  if (mode === "queue" && !database) {
    throw new CapgateError(
      "no_database",
      'runs: "queue" needs a PostgreSQL URL: pass --database, set CAPGATE_DATABASE_URL, or set "database" in capgate.config.json.',
      { property: "database" },
    );
  }
  const queued =
    mode === "queue" && database
      ? await openQueue(database.url, database.setting, options, scriptedModelsDir)
      : undefined;
  const approvals: ApprovalRegistry =
    queued?.approvals ??
    new MemoryApprovalRegistry(
      options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {},
    );
  // MCP servers' form requests wait for the operator like approvals (only for a harness made here).
  const elicitations = new ElicitationRegistry(
    options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {},
  );
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
  const ownsHarness = options.harness === undefined;

  const shutdown = new AbortController();
  const store: RunStore = queued?.store ?? harness.store;
  const feed = new RunFeed(store, options.heartbeatMs ?? 15_000);
  const runs: RunLauncher = queued
    ? queued.launcher(harness)
    : new RunManager(harness, {
        approve: approvals.hook,
        onError: (runId, error) => app.log.error({ err: error, runId }, "run failed"),
        ...(options.approval ? { approval: options.approval } : {}),
        ...(options.maxConcurrentRuns ? { maxConcurrent: options.maxConcurrentRuns } : {}),
        ...(options.maxQueuedRuns ? { maxQueued: options.maxQueuedRuns } : {}),
        ...(scriptedModelsDir ? { scriptedModelsDir } : {}),
      });
  let policy: OriginPolicy | undefined;
  const mcp = new McpEndpoint({
    harness,
    policy: () => policy as OriginPolicy,
    version: packageVersion(),
    ...(options.maxMcpSessions ? { maxSessions: options.maxMcpSessions } : {}),
    ...(options.mcpSessionIdleMs ? { idleMs: options.mcpSessionIdleMs } : {}),
    ...(options.maxMcpSessionsPerToken ? { maxSessionsPerToken: options.maxMcpSessionsPerToken } : {}),
  });

  const timeouts = options.timeouts ?? {};
  const requestMs = timeouts.requestMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headersMs = Math.min(timeouts.headersMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestMs);
  const app = Fastify({
    logger: loggerOptions(options.log),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: requestMs,
    keepAliveTimeout: timeouts.keepAliveMs ?? 5_000,
    http: {
      headersTimeout: headersMs,
      connectionsCheckingInterval: checkingIntervalMs(headersMs, requestMs),
    },
    return503OnClosing: true,
    // Never trust X-Forwarded-*: the Host check must see what the client sent.
    trustProxy: false,
    // A client cut off (too slow) or unreadable gets the same JSON error shape as every
    // other refusal, and the connection closes.
    clientErrorHandler: (error, socket) => {
      if (socket.destroyed || !socket.writable) return;
      const code = (error as NodeJS.ErrnoException).code;
      const [status, text, body] =
        code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [
              408,
              "Request Timeout",
              errorBody(
                "request_timeout",
                `The request did not arrive in time (headers within ${headersMs} ms, the whole request within ${requestMs} ms); the connection was closed.`,
              ),
            ]
          : code === "HPE_HEADER_OVERFLOW"
            ? [
                431,
                "Request Header Fields Too Large",
                errorBody("headers_too_large", "The request's headers are too large."),
              ]
            : [400, "Bad Request", errorBody("bad_request", "The request is not valid HTTP.")];
      const json = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      );
    },
  });
  // Only JSON bodies: anything else is a 415 rather than a string a route must guess about.
  app.removeContentTypeParser("text/plain");

  let closing = false;
  // Runs before routing reads the body: refused requests never have their bodies read.
  app.addHook("onRequest", async (request, reply) => {
    if (closing) {
      return reply.code(503).send(errorBody("shutting_down", "The server is shutting down."));
    }
    if (!policy) {
      return reply.code(503).send(errorBody("starting", "The server is starting; try again."));
    }
    const doubled = duplicateHeader(request.raw.rawHeaders);
    if (doubled) {
      // Node keeps the first and drops the rest; a proxy in front may have used another one.
      return reply
        .code(400)
        .header("connection", "close")
        .send(
          errorBody(
            "duplicate_header",
            `The request has more than one ${doubled === "host" ? "Host" : "Authorization"} header; send exactly one.`,
          ),
        );
    }
    const verdict = checkHostAndOrigin(policy, request.headers.host, request.headers.origin);
    if (!verdict.ok) return reply.code(403).send(errorBody(verdict.code, verdict.message));
    if (request.routeOptions.config?.public === true) return;
    if (!tokenMatches(bearerToken(request.headers.authorization))) {
      const inQuery = /[?&](token|access_token|auth)=/i.test(request.url);
      const message = inQuery
        ? "A token in the URL is not accepted (URLs end up in logs and history); send it as `Authorization: Bearer <token>`."
        : request.headers.authorization === undefined
          ? "This route needs `Authorization: Bearer <token>` (the token `capgate serve` printed, or $CAPGATE_TOKEN)."
          : "The bearer token is not valid for this server.";
      // The connection closes after the answer: an unauthenticated client that declared a
      // body it never sends would otherwise hold the socket until the body cut-off.
      return reply
        .code(401)
        .header("www-authenticate", 'Bearer realm="capgate"')
        .header("connection", "close")
        .send(errorBody("unauthorized", message));
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const response = toErrorResponse(error);
    if (response.status >= 500) request.log.error({ err: error }, "request failed");
    return reply.code(response.status).send(response.body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        errorBody(
          "not_found",
          `No route ${request.method} ${request.url.split("?")[0]}. Routes: GET /healthz, GET /capabilities, GET /capabilities/search, POST /tools/call, POST|GET /runs, GET /runs/:id, GET /runs/:id/events, POST /runs/:id/approvals/:approvalId, GET /mcp-logins, POST /mcp-logins/:server, GET /elicitations, POST /elicitations/:id, /mcp, GET /.`,
        ),
      ),
  );

  app.get("/healthz", { config: { public: true } }, async () => ({ ok: true }));
  app.get("/status", async () => ({
    runs: await runs.counts(),
    streams: feed.count(),
    mcpSessions: mcp.count(),
    pendingApprovals: await approvals.count(),
    pendingElicitations: elicitations.count(),
    pendingLogins: logins.count(),
  }));
  registerGatewayRoutes(app, { harness, shutdown: shutdown.signal });
  registerRunRoutes(app, { store, runs, approvals, feed });
  registerMcpInteractionRoutes(app, { logins, elicitations });
  mcp.register(app);
  registerViewerRoutes(app);

  try {
    await app.listen({ host, port });
  } catch (error) {
    await mcp.close();
    feed.close();
    if (ownsHarness) await harness.close().catch(() => undefined);
    await queued?.close().catch(() => undefined);
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new CapgateError(
        "address_in_use",
        `${formatHost(host)}:${port} is already in use; pick another --port.`,
        {
          property: "port",
          cause: error,
        },
      );
    }
    throw error;
  }
  const bound = (app.server.address() as AddressInfo).port;
  policy = originPolicy({
    host,
    port: bound,
    extraHosts: options.allowedHosts ?? [],
    extraOrigins: options.allowedOrigins ?? [],
  });
  const url = `http://${formatHost(host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host)}:${bound}`;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      shutdown.abort(new Error("the server is shutting down"));
      // Runs first: each writes run_ended, which also ends its event streams.
      await runs.shutdown();
      approvals.denyAll("the server is shutting down");
      elicitations.declineAll();
      logins.cancelAll();
      await mcp.close();
      feed.close();
      await app.close();
      if (ownsHarness) await harness.close();
      await queued?.close();
    })();
    return closed;
  };

  return {
    url,
    host,
    port: bound,
    token,
    viewerUrl: `${url}/#token=${encodeURIComponent(token)}`,
    harness,
    runs: mode,
    close,
  };
}
