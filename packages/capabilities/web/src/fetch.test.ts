import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchData } from "./fetch-tool.js";
import { call, webContext } from "./test-context.js";
import { BIG_BYTES, startTestServer, type TestServer } from "./test-server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const allowed = () => webContext({ allowHosts: [`127.0.0.1:${server.port}`] });

describe("web.fetch through a real local server", () => {
  it("turns an article into Markdown with its title, absolute links and a table, without scripts or navigation", async () => {
    const result = await call("web.fetch", { url: `${server.url}/article` }, allowed());
    expect(result.success).toBe(true);
    const data = result.data as FetchData;
    expect(data.kind).toBe("html");
    expect(data.extraction).toBe("article");
    expect(data.title).toBe("Gatekeeping Tools for Agents");
    expect(result.summary).toMatch(
      /^200 OK · http:\/\/127\.0\.0\.1:\d+\/article · text\/html · [\d,]+ bytes$/m,
    );
    expect(result.summary).toContain("Title: Gatekeeping Tools for Agents\nBy: Ada Example\n");
    // Links kept, relative ones made absolute; a same-page jump and a javascript: link keep only their text.
    expect(result.summary).toContain(`[protocol notes](${server.url}/docs/protocol)`);
    expect(result.summary).toContain("[external specification](https://example.org/spec?x=1)");
    expect(result.summary).toContain("Jump to the limits.");
    expect(result.summary).toContain("Click me is not a real link.");
    expect(result.summary).not.toContain("javascript:");
    expect(result.summary).toMatch(/## Limits that hold/);
    expect(result.summary).toMatch(/\| Limit \| Default \|/);
    expect(result.summary).toMatch(/\| fetch bytes \| 2 MiB \|/);
    // Scripts, styles and page furniture are gone.
    expect(result.summary).not.toContain("tracker");
    expect(result.summary).not.toContain("color: red");
    expect(result.summary).not.toContain("Copyright footer");
    expect(result.summary).not.toContain("About us");
    expect(data.links?.map((l) => l.url)).toEqual([
      `${server.url}/docs/protocol`,
      "https://example.org/spec?x=1",
    ]);
  });

  it("decodes the charset the server declares", async () => {
    const result = await call("web.fetch", { url: `${server.url}/latin1` }, allowed());
    expect(result.success).toBe(true);
    expect(result.summary).toContain("Title: Café");
    expect(result.summary).toContain("Crème brûlée");
  });

  it("pretty-prints JSON, including a gzip-compressed body", async () => {
    const result = await call("web.fetch", { url: `${server.url}/data.json` }, allowed());
    expect(result.success).toBe(true);
    expect((result.data as FetchData).kind).toBe("json");
    expect(result.summary).toContain('{\n  "name": "capgate",\n  "tools": [\n    "fetch",');
    const gz = await call("web.fetch", { url: `${server.url}/gzip.json` }, allowed());
    expect(gz.summary).toContain('"compressed": true');
  });

  it("returns plain text as it is", async () => {
    const result = await call("web.fetch", { url: `${server.url}/plain.txt` }, allowed());
    expect(result.success).toBe(true);
    expect(result.summary.endsWith("\n\nline one\n  line two with *stars* and <tags>\n")).toBe(true);
  });

  it("describes binary content instead of dumping it", async () => {
    const png = await call("web.fetch", { url: `${server.url}/image.png` }, allowed());
    expect(png.success).toBe(true);
    expect((png.data as FetchData).kind).toBe("binary");
    expect(png.summary).toMatch(/binary content not shown: PNG image, 640×480 px, 93 bytes/);
    expect(png.summary).not.toContain("IHDR");
    const unknown = await call("web.fetch", { url: `${server.url}/mystery` }, allowed());
    expect(unknown.summary).toMatch(/binary content not shown: application\/octet-stream data, 8 bytes/);
  });

  it("stops reading a 20 MB body at the size limit and says so", async () => {
    const ctx = allowed();
    const result = await call("web.fetch", { url: `${server.url}/big`, max_bytes: 100_000 }, ctx);
    expect(result.success).toBe(true);
    const data = result.data as FetchData;
    expect(data.truncated).toBe(true);
    expect(data.bytes).toBe(100_000);
    expect(result.summary).toContain("Truncated: reading stopped at 100,000 bytes");
    expect(result.summary).toContain("…[download stopped at 100,000 bytes]");
    // The summary itself fits the output limit, cut in the middle with the shared marker.
    expect(Buffer.byteLength(result.summary)).toBeLessThanOrEqual(ctx.limits.outputBytes);
    expect(result.summary).toMatch(/…\[\d+ bytes truncated\]…/);
    // Without max_bytes the default 2 MiB applies.
    const byDefault = await call("web.fetch", { url: `${server.url}/big` }, ctx);
    expect((byDefault.data as FetchData).bytes).toBe(2 * 1024 * 1024);
    expect(byDefault.summary).toContain("Truncated: reading stopped at 2,097,152 bytes");
    // The host's fetch limit wins over a larger max_bytes.
    const capped = await call(
      "web.fetch",
      { url: `${server.url}/big`, max_bytes: 10_000_000 },
      webContext({ allowHosts: [`127.0.0.1:${server.port}`], limits: { fetchBytes: 50_000 } }),
    );
    expect((capped.data as FetchData).bytes).toBe(50_000);
    // The client hung up: the server never got to write the whole 20 MB.
    expect(server.bigBytesSent()).toBeLessThan(BIG_BYTES);
  }, 30_000);

  it("gives up on a server that never answers, and on one that trickles, with a timeout failure", async () => {
    const ctx = webContext({ allowHosts: [`127.0.0.1:${server.port}`], limits: { timeoutMs: 1_000 } });
    const silent = await call("web.fetch", { url: `${server.url}/slow` }, ctx);
    expect(silent.success).toBe(false);
    expect(silent.summary).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/slow failed: .*timed out after 900 ms/);
    expect(silent.data).toMatchObject({ error: "timeout" });
    const drip = await call("web.fetch", { url: `${server.url}/drip` }, ctx);
    expect(drip.success).toBe(false);
    expect(drip.summary).toMatch(/timed out after 900 ms/);
  }, 20_000);

  it("follows redirects and reports the final URL", async () => {
    const result = await call(
      "web.fetch",
      { url: `${server.url}/redirect?to=/article&status=301` },
      allowed(),
    );
    expect(result.success).toBe(true);
    const data = result.data as FetchData;
    expect(data.finalUrl).toBe(`${server.url}/article`);
    expect(data.redirects).toEqual([`${server.url}/article`]);
    expect(result.summary).toMatch(/^200 OK · http:\/\/127\.0\.0\.1:\d+\/article /);
    expect(result.summary).toContain(
      `Redirected from ${server.url}/redirect?to=/article&status=301 (1 hop).`,
    );
  });

  it("fails on a redirect loop", async () => {
    const result = await call("web.fetch", { url: `${server.url}/loop` }, allowed());
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(/more than 5 redirects.*redirects in a loop/);
  });

  it("is a failure that still shows the page for a non-2xx status", async () => {
    const result = await call("web.fetch", { url: `${server.url}/missing` }, allowed());
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(/^HTTP 404: the server answered with an error\.\n404 Not Found · /);
    expect(result.summary).toContain("No page here.");
  });

  it("reports a host that does not exist as a failure", async () => {
    const result = await call("web.fetch", { url: "http://no-such-host.invalid/" }, allowed());
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(/could not resolve host 'no-such-host\.invalid'/);
  });
});
