// A second frontend for capgate in one file, on @capgate/host alone: goal runs over plain
// node:http. POST /runs starts a run, GET /runs lists runs, GET /runs/:id shows one,
// GET /runs/:id/events follows it (Server-Sent Events: the stored trace, then live), and
// POST /runs/:id/approvals/:approvalId answers an approval the run waits for.
//
//   pnpm --filter @capgate/examples http      (prints the URL and the token)
//
// It guards itself as capgate's own server does: it binds 127.0.0.1, refuses a Host that
// is not a local name and a foreign Origin (DNS rebinding), and wants the bearer token.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import {
  bearerToken,
  checkHostAndOrigin,
  generateToken,
  type Host,
  type HostOptions,
  type OriginPolicy,
  openHost,
  originPolicy,
  parseStartRunRequest,
  tokenMatcher,
} from "@capgate/host";

export interface Frontend {
  readonly url: string;
  readonly token: string;
  readonly host: Host;
  close(): Promise<void>;
}

const BODY_LIMIT = 1024 * 1024;

/** Start the frontend on 127.0.0.1 (`port` 0 picks a free one). */
export async function startFrontend(options: HostOptions & { port?: number } = {}): Promise<Frontend> {
  const { port = 0, ...hostOptions } = options;
  const host = await openHost(hostOptions);
  const token = generateToken();
  const tokenMatches = tokenMatcher(token);
  let policy: OriginPolicy | undefined;

  const server = createServer((req, res) => {
    if (!policy) return send(res, 503, error("starting", "Starting; try again."));
    const verdict = checkHostAndOrigin(policy, req.headers.host, req.headers.origin);
    if (!verdict.ok) return send(res, 403, error(verdict.code, verdict.message));
    if (!tokenMatches(bearerToken(req.headers.authorization)))
      return send(res, 401, error("unauthorized", "Send `Authorization: Bearer <token>`."));
    route(host, req, res).catch((e: unknown) => {
      const code = (e as { code?: unknown }).code;
      const known = typeof code === "string" && /^[a-z_]+$/.test(code);
      send(
        res,
        known ? (STATUS[code] ?? 400) : 500,
        error(known ? code : "internal_error", known ? (e as Error).message : "The request failed."),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  policy = originPolicy({ host: "127.0.0.1", port: bound });
  return {
    url: `http://127.0.0.1:${bound}`,
    token,
    host,
    async close() {
      // Runs first (each trace ends with run_ended), then the event streams, then the harness.
      await host.stop("the frontend is shutting down");
      host.feed.close();
      await new Promise((resolve) => server.close(resolve));
      await host.close();
    },
  };
}

/** Status codes of the refusals the host throws (CapgateError codes); any other code is the client's mistake. */
const STATUS: Record<string, number> = {
  too_many_requests: 429,
  shutting_down: 503,
  queue_unavailable: 503,
  not_found: 404,
};

async function route(host: Host, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { pathname } = new URL(req.url ?? "/", "http://localhost");
  const [, resource, id, part, approvalId, ...rest] = pathname.split("/");
  if (resource !== "runs" || rest.length > 0) return send(res, 404, error("not_found", "Only /runs here."));
  if (id === undefined || id === "") {
    if (req.method === "POST") {
      const started = await host.runs.start(parseStartRunRequest(await readJson(req)));
      return send(res, 202, started);
    }
    if (req.method === "GET") return send(res, 200, await host.listRuns());
  } else if (part === undefined && req.method === "GET") {
    // A malformed id (`..%2Fetc`) is no run's: the store checks it before it builds a path.
    const run = await host.run(id);
    return run ? send(res, 200, run) : send(res, 404, error("not_found", `No run '${id}'.`));
  } else if (part === "events" && req.method === "GET") {
    if (!(await host.run(id))) return send(res, 404, error("not_found", `No run '${id}'.`));
    const after = Number(req.headers["last-event-id"] ?? 0);
    return host.feed.stream(res, id, {
      after: Number.isSafeInteger(after) && after > 0 ? after : 0,
      isActive: () => host.isActive(id),
    });
  } else if (part === "approvals" && approvalId && req.method === "POST") {
    const body = (await readJson(req)) as { approve?: unknown; argumentsHash?: unknown } | null;
    if (typeof body?.approve !== "boolean")
      return send(res, 400, error("invalid_request", 'Send {"approve": true|false, "argumentsHash": "…"}.'));
    // The hash the operator was shown binds the answer to that call: another one approves nothing.
    const answered = await host.approvals.resolve(id, approvalId, {
      approve: body.approve,
      ...(typeof body.argumentsHash === "string" ? { argumentsHash: body.argumentsHash } : {}),
      decidedBy: "http-frontend",
    });
    if (!answered.ok) {
      const status = answered.refused === "not_found" ? 404 : 409;
      return send(res, status, error(`approval_${answered.refused}`, answered.message));
    }
    return send(res, 200, { approvalId, approved: body.approve, tool: answered.approval.tool });
  }
  return send(res, 405, error("method_not_allowed", `${req.method} ${pathname} is not served here.`));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT)
      throw Object.assign(new Error("The body is over 1 MiB."), { code: "body_too_large" });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    throw Object.assign(new Error("The body is not valid JSON."), { code: "invalid_json" });
  }
}

function error(code: string, message: string) {
  return { error: { code, message } };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
  });
  res.end(json);
}

// Run directly: serve the current directory's workspace until Ctrl-C.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const frontend = await startFrontend({ port: Number(process.env.PORT ?? 7788) });
  console.log(`listening on ${frontend.url} — token ${frontend.token}`);
  process.once("SIGINT", () => void frontend.close().then(() => process.exit(0)));
}
