import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from "node:http";
import { connect, createServer as createNetServer, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkUrl } from "@capgate/net-guard";
import { CapgateError } from "@capgate/schema";

/** `guarded`: the web.* address rules apply; `full`: any destination (the operator chose it). */
export type ProxyMode = "guarded" | "full";

/** The host-side end of a sandbox's only way out: a unix socket speaking HTTP proxy (forward + CONNECT) and SOCKS5. */
export interface EgressProxy {
  readonly socketPath: string;
  readonly mode: ProxyMode;
  close(): Promise<void>;
}

const IDLE_MS = 10 * 60_000;
const proxies = new Map<string, Promise<EgressProxy>>();

/**
 * The proxy for `mode` and `allowHosts`, started on first use and shared by every sandbox
 * of this process with the same rules. It never keeps the process alive (unref'd); the
 * socket lives in a private 0700 directory that is removed on close.
 */
export function egressProxy(mode: ProxyMode, allowHosts: readonly string[] = []): Promise<EgressProxy> {
  const key = `${mode}\n${[...allowHosts].sort().join("\n")}`;
  let proxy = proxies.get(key);
  if (!proxy) {
    proxy = startProxy(mode, [...allowHosts]);
    proxies.set(key, proxy);
    proxy.catch(() => proxies.delete(key));
  }
  return proxy;
}

/** Close every proxy of this process (tests). */
export async function closeEgressProxies(): Promise<void> {
  const all = [...proxies.values()];
  proxies.clear();
  await Promise.all(all.map((p) => p.then((x) => x.close()).catch(() => undefined)));
}

/**
 * X11 display ports refused in every mode: 6000 + display for displays :0–:99 (IANA assigns
 * 6000–6063; Xvfb's :99 and ssh's forwarded :10 and up sit in this span too).
 */
export const X11_PORTS = { first: 6000, last: 6099 } as const;

/**
 * Whether `port` is an X11 display's: in the IANA range, or 6000 + N for a display N this
 * host runs (its socket in /tmp/.X11-unix; Xvfb's :99 is above the range).
 */
function isX11Port(port: number): boolean {
  if (port >= X11_PORTS.first && port <= X11_PORTS.last) return true;
  if (port < X11_PORTS.first) return false;
  try {
    return readdirSync("/tmp/.X11-unix").includes(`X${port - X11_PORTS.first}`);
  } catch {
    return false;
  }
}

interface Target {
  /** The address (or, in full mode, host name) to connect to — for guarded, one that passed the check. */
  host: string;
  port: number;
}

/** Decide where a request for host:port may go; throws with the reason a refusal is reported with. */
async function decide(mode: ProxyMode, allowHosts: string[], host: string, port: number): Promise<Target> {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port ${port} is not valid`);
  // X11 over TCP: display :N listens on 6000 + N. No mode reaches a desktop, "full" included
  // (an X server started with -listen tcp is one hop away on the host's loopback).
  if (isX11Port(port)) {
    throw new Error(
      `port ${port} is an X11 display port (display :${port - X11_PORTS.first}: 6000 + the display number); the sandbox never reaches a desktop, in any shell.network mode`,
    );
  }
  if (mode === "full") return { host: bare, port };
  const urlHost = isIP(bare) === 6 ? `[${bare}]` : bare;
  // The same check web.fetch makes: every resolved address judged, the connection pinned to one that passed.
  const checked = await checkUrl(`http://${urlHost}:${port}/`, { allowHosts, property: "request" });
  const first = checked.addresses[0];
  if (!first) throw new Error(`host '${bare}' has no addresses`);
  return { host: first.address, port };
}

function refusalText(mode: ProxyMode, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `capgate sandbox network (shell.network "${mode}"): ${message}`;
}

function dial(target: Target): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port });
    socket.once("connect", () => {
      socket.removeListener("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

function splice(a: Socket, b: Socket): void {
  a.setTimeout(IDLE_MS, () => a.destroy());
  b.setTimeout(IDLE_MS, () => b.destroy());
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

/** host and port of a CONNECT authority (`example.com:443`, `[::1]:8080`). */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!m?.[1] || !m[2]) return undefined;
  return { host: m[1], port: Number(m[2]) };
}

const HOP_HEADERS = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive"]);

async function startProxy(mode: ProxyMode, allowHosts: string[]): Promise<EgressProxy> {
  const dir = mkdtempSync(join(tmpdir(), "capgate-egress-"));
  const socketPath = join(dir, "proxy.sock");

  const http = createHttpServer();
  http.on("request", (req: IncomingMessage, res) => {
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? "");
      } catch {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end("capgate sandbox proxy: expected an absolute http:// URL\n");
        return;
      }
      if (url.protocol !== "http:") {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end("capgate sandbox proxy: only http:// is forwarded; https goes through CONNECT\n");
        return;
      }
      let target: Target;
      try {
        target = await decide(mode, allowHosts, url.hostname, url.port ? Number(url.port) : 80);
      } catch (error) {
        res.writeHead(403, { "content-type": "text/plain" }).end(`${refusalText(mode, error)}\n`);
        return;
      }
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
      }
      headers.connection = "close";
      const upstream = httpRequest(
        {
          host: target.host,
          port: target.port,
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
          setHost: false,
          agent: false,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.rawHeaders as unknown as Record<string, string>);
          up.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(`capgate sandbox proxy: ${error.message}\n`);
      });
      req.pipe(upstream);
    })();
  });
  http.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    void (async () => {
      client.on("error", () => client.destroy());
      const authority = parseAuthority(req.url ?? "");
      if (!authority) {
        client.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
        return;
      }
      let upstream: Socket;
      try {
        upstream = await dial(await decide(mode, allowHosts, authority.host, authority.port));
      } catch (error) {
        const body = `${refusalText(mode, error)}\n`;
        client.end(
          `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      splice(client, upstream);
    })();
  });

  const server = createNetServer((socket) => {
    socket.on("error", () => socket.destroy());
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      if (chunk[0] === 0x05) {
        void socks5(socket, chunk, mode, allowHosts);
        return;
      }
      socket.unshift(chunk);
      http.emit("connection", socket);
      socket.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
  server.unref();
  let closed = false;
  return {
    socketPath,
    mode,
    close: async () => {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Read exactly `n` more bytes from a paused socket, with what was already buffered. */
function reader(socket: Socket, initial: Buffer) {
  let buffered = initial;
  let waiting: (() => void) | undefined;
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  socket.on("close", () => {
    ended = true;
    waiting?.();
  });
  socket.resume();
  return {
    async take(n: number): Promise<Buffer> {
      while (buffered.length < n) {
        if (ended) throw new Error("client closed");
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
        waiting = undefined;
      }
      const out = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      return out;
    },
    rest(): Buffer {
      socket.removeAllListeners("data");
      socket.pause();
      return buffered;
    },
  };
}

/** SOCKS5 (RFC 1928), no authentication, CONNECT only — the same rules as the HTTP side. */
async function socks5(socket: Socket, first: Buffer, mode: ProxyMode, allowHosts: string[]): Promise<void> {
  const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
  const r = reader(socket, first);
  try {
    const [, nMethods = 0] = await r.take(2);
    const methods = await r.take(nMethods);
    if (!methods.includes(0)) {
      socket.end(Buffer.from([5, 0xff]));
      return;
    }
    socket.write(Buffer.from([5, 0]));
    const [ver, cmd, , atyp] = await r.take(4);
    if (ver !== 5 || cmd !== 1) {
      socket.end(reply(7)); // command not supported
      return;
    }
    let host: string;
    if (atyp === 1) host = [...(await r.take(4))].join(".");
    else if (atyp === 3) host = (await r.take((await r.take(1))[0] ?? 0)).toString("latin1");
    else if (atyp === 4) {
      const b = await r.take(16);
      host = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16)).join(":");
    } else {
      socket.end(reply(8)); // address type not supported
      return;
    }
    const port = (await r.take(2)).readUInt16BE(0);
    let upstream: Socket;
    try {
      upstream = await dial(await decide(mode, allowHosts, host, port));
    } catch (error) {
      // 2: connection not allowed by ruleset; 4: host unreachable.
      socket.end(reply(CapgateError.isInstance(error) && error.code === "policy_denied" ? 2 : 4));
      return;
    }
    socket.write(reply(0));
    const rest = r.rest();
    if (rest.length > 0) upstream.write(rest);
    splice(socket, upstream);
  } catch {
    socket.destroy();
  }
}
