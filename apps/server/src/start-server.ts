import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import {
  type CapgateConfig,
  createHarness,
  type Harness,
  loadConfig,
  type ResolvedConfig,
} from "@capgate/harness";
import { CapgateError } from "@capgate/schema";
import type { ApprovalMode, Capability } from "@capgate/tools";
import Fastify from "fastify";
import { ApprovalRegistry } from "./approvals.js";
import { registerGatewayRoutes } from "./gateway-routes.js";
import { errorBody, toErrorResponse } from "./http-errors.js";
import { loggerOptions, type ServerLogOptions } from "./logging.js";
import { McpEndpoint } from "./mcp-endpoint.js";
import { RunFeed } from "./run-feed.js";
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
  /** Log requests and errors as JSON lines (default: nothing is printed). The token is never logged. */
  log?: ServerLogOptions | false;
  /** Environment to read CAPGATE_TOKEN and CAPGATE_HOME from (default process.env). */
  env?: Record<string, string | undefined>;
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

  const approvals = new ApprovalRegistry(
    options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {},
  );
  const harness =
    options.harness ??
    (await createHarness({
      config:
        options.config ??
        loadConfig({
          ...(options.cwd ? { cwd: options.cwd } : {}),
          ...(options.configPath ? { path: options.configPath } : {}),
        }),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.stateDir ? { stateDir: options.stateDir } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
      approve: approvals.hook,
      processEnv: env,
    }));
  const ownsHarness = options.harness === undefined;

  const shutdown = new AbortController();
  const feed = new RunFeed(harness.store, options.heartbeatMs ?? 15_000);
  const runs = new RunManager(harness, {
    approve: approvals.hook,
    onError: (runId, error) => app.log.error({ err: error, runId }, "run failed"),
    ...(options.approval ? { approval: options.approval } : {}),
    ...(options.maxConcurrentRuns ? { maxConcurrent: options.maxConcurrentRuns } : {}),
    ...(options.maxQueuedRuns ? { maxQueued: options.maxQueuedRuns } : {}),
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
  const app = Fastify({
    logger: loggerOptions(options.log),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: timeouts.requestMs ?? 30_000,
    keepAliveTimeout: timeouts.keepAliveMs ?? 5_000,
    http: { headersTimeout: timeouts.headersMs ?? 10_000 },
    return503OnClosing: true,
    // Never trust X-Forwarded-*: the Host check must see what the client sent.
    trustProxy: false,
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
      return reply
        .code(401)
        .header("www-authenticate", 'Bearer realm="capgate"')
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
          `No route ${request.method} ${request.url.split("?")[0]}. Routes: GET /healthz, GET /capabilities, GET /capabilities/search, POST /tools/call, POST|GET /runs, GET /runs/:id, GET /runs/:id/events, POST /runs/:id/approvals/:approvalId, /mcp, GET /.`,
        ),
      ),
  );

  app.get("/healthz", { config: { public: true } }, async () => ({ ok: true }));
  app.get("/status", async () => ({
    runs: runs.counts(),
    streams: feed.count(),
    mcpSessions: mcp.count(),
    pendingApprovals: approvals.count(),
  }));
  registerGatewayRoutes(app, { harness, shutdown: shutdown.signal });
  registerRunRoutes(app, { harness, runs, approvals, feed });
  mcp.register(app);
  registerViewerRoutes(app);

  try {
    await app.listen({ host, port });
  } catch (error) {
    await mcp.close();
    feed.close();
    if (ownsHarness) await harness.close().catch(() => undefined);
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
      await mcp.close();
      feed.close();
      await app.close();
      if (ownsHarness) await harness.close();
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
    close,
  };
}
