import { request } from "node:http";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GuardEvent, type GuardProxy, startGuardProxy } from "./guard-proxy.js";
import { type PageServer, startPageServer } from "./test-server.js";

// The proxy every browser connection goes through, driven by a plain HTTP client the way
// Chromium uses it: absolute-URL requests for http:, CONNECT tunnels for https: and wss:.
let target: PageServer;
let inner: PageServer;
let proxy: GuardProxy;
const events: GuardEvent[] = [];

beforeAll(async () => {
  target = await startPageServer();
  inner = await startPageServer();
  proxy = await startGuardProxy({
    allowHosts: () => [`127.0.0.1:${target.port}`],
    onEvent: (e) => events.push(e),
  });
});
afterAll(async () => {
  await proxy.close();
  await target.close();
  await inner.close();
});

const proxyPort = () => proxy.port;

function viaProxy(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: proxyPort(), path: url, headers: { host: new URL(url).host } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function connectVia(authority: string): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: proxyPort(), method: "CONNECT", path: authority });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on("error", reject);
    req.end();
  });
}

function httpOver(socket: Socket, host: string, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (text += c));
    socket.on("end", () => resolve(text));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe("guard proxy", () => {
  it("forwards plain HTTP to an allowed host and refuses a private one with an explaining page", async () => {
    const ok = await viaProxy(`${target.url}/about`);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain("About this test site.");
    const refused = await viaProxy("http://10.1.2.3/secret");
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("Blocked by capgate's network guard");
    expect(refused.body).toContain("host '10.1.2.3' is private");
    expect(events).toContainEqual(
      expect.objectContaining({ url: "http://10.1.2.3/secret", kind: "blocked" }),
    );
  });

  it("opens CONNECT tunnels only to allowed or public addresses", async () => {
    const ok = await connectVia(`127.0.0.1:${target.port}`);
    expect(ok.status).toBe(200);
    expect(await httpOver(ok.socket, `127.0.0.1:${target.port}`, "/about")).toContain(
      "About this test site.",
    );
    for (const authority of [
      `127.0.0.1:${inner.port}`,
      "169.254.169.254:443",
      "[::ffff:127.0.0.1]:443",
      "2130706433:443",
    ]) {
      const refused = await connectVia(authority);
      expect(refused.status, authority).toBe(403);
      refused.socket.destroy();
    }
    expect(inner.hits.size).toBe(0);
    expect(events).toContainEqual(
      expect.objectContaining({ url: "https://169.254.169.254/", kind: "blocked" }),
    );
  });

  it("answers 502 and records a failure for a host that does not resolve", async () => {
    const failed = await connectVia("no-such-host.invalid:443");
    expect(failed.status).toBe(502);
    failed.socket.destroy();
    expect(events).toContainEqual(
      expect.objectContaining({
        url: "https://no-such-host.invalid/",
        kind: "failed",
        reason: expect.stringMatching(/could not resolve/),
      }),
    );
  });

  it("reads allowHosts on every request", async () => {
    let allow: string[] = [];
    const live = await startGuardProxy({ allowHosts: () => allow, onEvent: () => undefined });
    try {
      const port = Number(new URL(live.url).port);
      const get = (): Promise<number> =>
        new Promise((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port, path: `${target.url}/about` }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on("error", reject);
          req.end();
        });
      expect(await get()).toBe(403);
      allow = [`127.0.0.1:${target.port}`];
      expect(await get()).toBe(200);
    } finally {
      await live.close();
    }
  });
});
