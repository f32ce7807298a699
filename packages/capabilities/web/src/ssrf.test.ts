import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, webContext } from "./test-context.js";
import { startTestServer, type TestServer } from "./test-server.js";

// The network guard as the web tools apply it: every address a model could use to reach
// the host, the cloud metadata service or the private network is refused before any
// connection, and a redirect from an allowed server cannot lead there either.
let server: TestServer;
let inner: TestServer; // stands for a private service that must never be reached
beforeAll(async () => {
  server = await startTestServer();
  inner = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await inner.close();
});

describe("web tools refuse SSRF targets", () => {
  const targets = (port: number): string[] => [
    `http://127.0.0.1:${port}/article`, // loopback without allowHosts
    `http://localhost:${port}/article`, // a name resolving to loopback
    "http://169.254.169.254/latest/meta-data/", // cloud metadata (link-local)
    "http://10.0.0.1/",
    "http://10.255.255.254:8080/",
    "http://172.16.0.1/",
    "http://172.31.255.1/",
    "http://192.168.1.1/",
    "http://0.0.0.0/",
    `http://2130706433:${port}/`, // decimal 127.0.0.1
    `http://0x7f000001:${port}/`, // hex
    `http://0177.0.0.1:${port}/`, // octal
    `http://127.1:${port}/`, // short form
    "http://0xa9.0xfe.0xa9.0xfe/", // hex 169.254.169.254
    `http://[::ffff:127.0.0.1]:${port}/`, // IPv4-mapped IPv6
    "http://[::ffff:a9fe:a9fe]/", // mapped metadata address
    `http://[::1]:${port}/`,
    "http://[fd00::1]/", // unique local
    "http://[fe80::1]/", // link-local
  ];

  it.each(["web.fetch", "web.request"])(
    "%s: refuses every private spelling as policy_denied",
    async (tool) => {
      for (const url of targets(server.port)) {
        const args = tool === "web.fetch" ? { url } : { method: "GET", url };
        await expect(call(tool, args, webContext()), url).rejects.toMatchObject({
          code: "policy_denied",
          property: "url",
        });
      }
      expect(server.hits.size).toBe(0);
    },
  );

  it("names the address and how to allow it on purpose", async () => {
    await expect(
      call("web.fetch", { url: `http://0x7f000001:${server.port}/` }, webContext()),
    ).rejects.toThrow(
      new RegExp(
        `host '127\\.0\\.0\\.1' \\(written '0x7f000001'\\) is loopback.*Add "127\\.0\\.0\\.1:${server.port}" to the web policy's allowHosts`,
      ),
    );
    await expect(call("web.fetch", { url: "http://169.254.169.254/" }, webContext())).rejects.toThrow(
      /linkLocal/,
    );
  });

  it("refuses file:, ftp: and other schemes by schema, before any policy", async () => {
    for (const url of [
      "file:///etc/passwd",
      "ftp://example.com/",
      "gopher://127.0.0.1/",
      "javascript:alert(1)",
    ]) {
      await expect(call("web.fetch", { url }, webContext()), url).rejects.toMatchObject({
        code: "invalid_arguments",
        property: "url",
      });
    }
  });

  it("allowHosts opens exactly the listed host and port", async () => {
    const ctx = webContext({ allowHosts: [`127.0.0.1:${server.port}`] });
    const ok = await call("web.fetch", { url: `${server.url}/plain.txt` }, ctx);
    expect(ok.success).toBe(true);
    // Another port on the same loopback address stays closed.
    await expect(call("web.fetch", { url: `${inner.url}/plain.txt` }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
    });
    expect(inner.hits.size).toBe(0);
  });

  const redirectTargets = (): string[] => [
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/admin",
    "http://192.168.0.1/",
    `${inner.url}/plain.txt`, // loopback on a port that is not allowed
    `http://[::ffff:127.0.0.1]:${inner.port}/`,
    "file:///etc/passwd",
  ];

  it.each(["web.fetch", "web.request"])(
    "%s: a redirect from the allowed server to a private address is refused, and nothing reaches it",
    async (tool) => {
      const ctx = webContext({ allowHosts: [`127.0.0.1:${server.port}`] });
      for (const to of redirectTargets()) {
        const url = `${server.url}/redirect?to=${encodeURIComponent(to)}`;
        const args = tool === "web.fetch" ? { url } : { method: "GET", url };
        await expect(call(tool, args, ctx), to).rejects.toMatchObject({
          code: "policy_denied",
          property: "url",
        });
        await expect(call(tool, args, ctx), to).rejects.toThrow(/^redirect to .* refused: /);
      }
      expect(inner.hits.size).toBe(0);
    },
  );
});
