import { lookup } from "node:dns/promises";
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type CheckedUrl, checkUrl, type HostResolver, type ResolvedAddress } from "@capgate/net-guard";
import { CapgateError } from "@capgate/schema";

/** A request the guard refused or could not complete, for the next tool result. */
export interface GuardEvent {
  url: string;
  /** "blocked": refused by the network guard; "failed": the host did not resolve or answer. */
  kind: "blocked" | "failed";
  reason: string;
}

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for the browser context's `proxy.server`. */
  readonly url: string;
  /** Its loopback port. */
  readonly port: number;
  close(): Promise<void>;
}

export interface GuardProxyOptions {
  /** Read on every request, so a later call's policy applies to the open browser. */
  allowHosts: () => readonly string[];
  onEvent: (event: GuardEvent) => void;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
const IDLE_MS = 60_000;
const DNS_TTL_MS = 30_000;

/**
 * An HTTP proxy on 127.0.0.1 that the browser context sends **every** connection through
 * (Playwright proxies loopback too): plain HTTP requests and CONNECT tunnels (HTTPS,
 * WebSockets). Each target is checked with the tools' `checkUrl` — http/https only,
 * private, loopback, link-local, mapped and non-canonical addresses refused unless in
 * `allowHosts` — and the proxy connects only to the address that check resolved, so DNS
 * cannot answer differently for the browser. This covers what request interception cannot
 * see: redirects (each hop is a new proxied request), subresources, fetch/XHR, WebSockets,
 * popups and service workers.
 */
export async function startGuardProxy(options: GuardProxyOptions): Promise<GuardProxy> {
  const sockets = new Set<Duplex>();
  const resolve = cachedResolver();
  const check = (url: string) => checkUrl(url, { allowHosts: options.allowHosts(), resolve });

  const server = createServer((req, res) => {
    void forwardHttp(req, res, check, options.onEvent);
  });
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    void tunnel(req, client, head, check, options.onEvent, sockets);
  });
  // A plain-HTTP WebSocket through a proxy arrives as an upgrade; only tunnels are supported.
  server.on("upgrade", (_req: IncomingMessage, client: Duplex) => {
    client.end("HTTP/1.1 501 Not Implemented\r\nconnection: close\r\n\r\n");
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => ready());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
  };
}

type Check = (url: string) => Promise<CheckedUrl>;

async function forwardHttp(
  req: IncomingMessage,
  res: ServerResponse,
  check: Check,
  onEvent: (e: GuardEvent) => void,
): Promise<void> {
  const target = req.url ?? "";
  if (!/^http:\/\//i.test(target)) {
    res
      .writeHead(400, { "content-type": "text/plain" })
      .end("capgate guard proxy: absolute http:// URLs only\n");
    return;
  }
  const checked = await guard(target, check, onEvent);
  if ("refusal" in checked) {
    const { status, reason } = checked.refusal;
    res
      .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
      .end(refusalPage(target, reason, status));
    return;
  }
  const { url, addresses, port } = checked;
  const upstream = httpRequest(
    {
      host: addresses[0]!.address,
      family: addresses[0]!.family,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: forwardHeaders(req.headers, url.host),
      agent: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardHeaders(answer.headers));
      answer.pipe(res);
    },
  );
  upstream.setTimeout(IDLE_MS, () => upstream.destroy(new Error("upstream timed out")));
  upstream.on("error", (error) => {
    onEvent({ url: target, kind: "failed", reason: error.message });
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end();
  });
  // The browser gave up on the response (navigated away, closed): stop the upstream request too.
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

async function tunnel(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  check: Check,
  onEvent: (e: GuardEvent) => void,
  sockets: Set<Duplex>,
): Promise<void> {
  sockets.add(client);
  client.on("close", () => sockets.delete(client));
  client.on("error", () => client.destroy());
  const authority = req.url ?? "";
  // The scheme only names the check; a tunnel carries whatever the browser speaks (TLS, wss).
  const shown = authority.endsWith(":443") ? `https://${authority.slice(0, -4)}/` : `http://${authority}/`;
  const checked = await guard(`http://${authority}/`, check, onEvent, shown);
  if ("refusal" in checked) {
    const { status } = checked.refusal;
    client.end(
      `HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : "Bad Gateway"}\r\nconnection: close\r\n\r\n`,
    );
    return;
  }
  const address = checked.addresses[0]!;
  const upstream = connect({ host: address.address, port: checked.port, family: address.family });
  sockets.add(upstream);
  upstream.setTimeout(IDLE_MS, () => upstream.destroy());
  upstream.on("close", () => {
    sockets.delete(upstream);
    client.destroy();
  });
  client.on("close", () => upstream.destroy());
  upstream.on("error", (error) => {
    onEvent({ url: shown, kind: "failed", reason: error.message });
    client.end("HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n");
  });
  upstream.on("connect", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
}

/** Run the guard; a refusal or resolution failure becomes a status and a recorded event. */
async function guard(
  url: string,
  check: Check,
  onEvent: (e: GuardEvent) => void,
  shown = url,
): Promise<CheckedUrl | { refusal: { status: number; reason: string } }> {
  try {
    return await check(url);
  } catch (error) {
    const blocked = CapgateError.isInstance(error) && error.code === "policy_denied";
    const reason = (error as Error).message.replace(/^url /, "");
    onEvent({ url: shown, kind: blocked ? "blocked" : "failed", reason });
    return { refusal: { status: blocked ? 403 : 502, reason } };
  }
}

function forwardHeaders(headers: IncomingHttpHeaders, host?: string): IncomingHttpHeaders {
  const listed = String(headers.connection ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase());
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && !listed.includes(name)) out[name] = value;
  }
  if (host) out.host = host;
  return out;
}

function refusalPage(url: string, reason: string, status: number): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const title = status === 403 ? "Blocked by capgate's network guard" : "Could not reach the site";
  return `<!doctype html><title>${title}</title><h1>${title}</h1><p>${esc(url)}</p><p>${esc(reason)}</p>\n`;
}

/**
 * The system resolver with a short cache: a page loads many resources from few hosts. The
 * proxy connects only to the addresses that were checked, so caching never lets an
 * unchecked address through.
 */
function cachedResolver(): HostResolver {
  const cache = new Map<string, { until: number; addresses: Promise<ResolvedAddress[]> }>();
  return (hostname) => {
    const now = Date.now();
    const hit = cache.get(hostname);
    if (hit && hit.until > now) return hit.addresses;
    const addresses = lookup(hostname, { all: true, verbatim: true }).then((found) =>
      found.map((a): ResolvedAddress => ({ address: a.address, family: a.family === 6 ? 6 : 4 })),
    );
    cache.set(hostname, { until: now + DNS_TTL_MS, addresses });
    addresses.catch(() => cache.delete(hostname));
    return addresses;
  };
}
