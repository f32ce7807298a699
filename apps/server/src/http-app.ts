import { bearerToken, checkHostAndOrigin, type OriginPolicy } from "@capgate/host";
import Fastify, { type FastifyInstance } from "fastify";
import { errorBody, toErrorResponse } from "./http-errors.js";
import { loggerOptions, type ServerLogOptions } from "./logging.js";

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
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

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

/** What the request guard reads on every request: set once listening, and when closing. */
export interface GuardState {
  closing: boolean;
  policy: OriginPolicy | undefined;
  tokenMatches: (presented: string | undefined) => boolean;
}

/**
 * The Fastify instance: JSON bodies only, the body and slow-client limits, the one JSON
 * error shape, and the guard every request passes before routing reads its body.
 */
export function createApp(
  options: { log?: ServerLogOptions | false; timeouts?: ServerTimeouts },
  state: GuardState,
): FastifyInstance {
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
  guardRequests(app, state);
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
  return app;
}

/** Runs before routing reads the body: refused requests never have their bodies read. */
function guardRequests(app: FastifyInstance, state: GuardState): void {
  app.addHook("onRequest", async (request, reply) => {
    if (state.closing) {
      return reply.code(503).send(errorBody("shutting_down", "The server is shutting down."));
    }
    if (!state.policy) {
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
    const verdict = checkHostAndOrigin(state.policy, request.headers.host, request.headers.origin);
    if (!verdict.ok) return reply.code(403).send(errorBody(verdict.code, verdict.message));
    if (request.routeOptions.config?.public === true) return;
    if (!state.tokenMatches(bearerToken(request.headers.authorization))) {
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
}
