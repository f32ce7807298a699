import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestData } from "./request-tool.js";
import { call, webContext } from "./test-context.js";
import { startTestServer, type TestServer } from "./test-server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const allowed = () => webContext({ allowHosts: [`127.0.0.1:${server.port}`] });

interface Echo {
  method: string;
  headers: Record<string, string>;
  body: string;
}

describe("web.request through a real local server", () => {
  it("sends method, headers and a JSON body as given, and returns status, selected headers and the body", async () => {
    const body = '{"name": "x",  "n": 1}';
    const result = await call(
      "web.request",
      {
        method: "POST",
        url: `${server.url}/echo?status=201`,
        headers: { Authorization: "Bearer t0k", "X-Trace-Id": "abc" },
        body,
      },
      allowed(),
    );
    expect(result.success).toBe(true);
    const data = result.data as RequestData;
    expect(data.status).toBe(201);
    const echoed = JSON.parse(data.body) as Echo;
    expect(echoed.method).toBe("POST");
    expect(echoed.body).toBe(body); // byte for byte, not re-serialised
    expect(echoed.headers["content-type"]).toBe("application/json"); // labelled because it parses as JSON
    expect(echoed.headers.authorization).toBe("Bearer t0k");
    expect(echoed.headers["x-trace-id"]).toBe("abc");
    expect(echoed.headers.host).toBe(`127.0.0.1:${server.port}`);
    expect(result.summary).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/echo\?status=201 → 201 Created · [\d,]+ bytes$/m,
    );
    expect(result.summary).toContain("\ncontent-type: application/json\n");
    expect(result.summary).toContain("\nx-ratelimit-remaining: 41\n");
    expect(result.summary).not.toContain("x-internal-noise"); // not a selected header…
    expect(data.headers["x-internal-noise"]).toBe("not shown"); // …but programs get it
  });

  it("labels a non-JSON body text/plain unless a Content-Type is given", async () => {
    const plain = await call(
      "web.request",
      { method: "PUT", url: `${server.url}/echo`, body: "hello" },
      allowed(),
    );
    expect((JSON.parse((plain.data as RequestData).body) as Echo).headers["content-type"]).toBe(
      "text/plain; charset=utf-8",
    );
    const given = await call(
      "web.request",
      {
        method: "PATCH",
        url: `${server.url}/echo`,
        body: "a=1",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      },
      allowed(),
    );
    const echoed = JSON.parse((given.data as RequestData).body) as Echo;
    expect(echoed.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(echoed.body).toBe("a=1");
  });

  it("hides Set-Cookie values and keeps no cookie jar", async () => {
    const ctx = allowed();
    const first = await call("web.request", { method: "GET", url: `${server.url}/echo` }, ctx);
    expect(first.summary).toContain("set-cookie: session=…, theme=…");
    expect(first.summary).not.toContain("secret-token");
    expect(JSON.stringify(first.data)).not.toContain("secret-token");
    const second = await call("web.request", { method: "GET", url: `${server.url}/echo` }, ctx);
    expect((JSON.parse((second.data as RequestData).body) as Echo).headers.cookie).toBeUndefined();
    // An explicit Cookie header is the caller's choice and is sent.
    const withCookie = await call(
      "web.request",
      { method: "GET", url: `${server.url}/echo`, headers: { Cookie: "a=b" } },
      ctx,
    );
    expect((JSON.parse((withCookie.data as RequestData).body) as Echo).headers.cookie).toBe("a=b");
  });

  it("is a failure for a non-2xx status, with the body shown", async () => {
    const result = await call(
      "web.request",
      { method: "DELETE", url: `${server.url}/echo?status=422` },
      allowed(),
    );
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(
      /^HTTP 422: the server answered with an error\.\nDELETE .* → 422 Unprocessable Entity/,
    );
    expect(result.summary).toContain('"method":"DELETE"');
  });

  it("handles HEAD (no body) and follows redirects, re-checking them", async () => {
    const head = await call("web.request", { method: "HEAD", url: `${server.url}/echo` }, allowed());
    expect(head.success).toBe(true);
    expect(head.summary).toMatch(/\n\n\(no body\)$/);
    const moved = await call(
      "web.request",
      { method: "GET", url: `${server.url}/redirect?to=/data.json&status=307` },
      allowed(),
    );
    expect(moved.success).toBe(true);
    expect((moved.data as RequestData).finalUrl).toBe(`${server.url}/data.json`);
    expect(moved.summary).toContain('{"name":"capgate"'); // returned as sent, not reformatted
  });

  it("describes a binary body", async () => {
    const result = await call("web.request", { method: "GET", url: `${server.url}/image.png` }, allowed());
    expect(result.summary).toMatch(/\(binary body not shown: PNG image, 640×480 px, 93 bytes\)$/);
  });

  const refused: [Record<string, string>, string, string][] = [
    [{ Host: "internal.example" }, "headers.Host", "policy_denied"],
    [{ "Transfer-Encoding": "chunked" }, "headers.Transfer-Encoding", "policy_denied"],
    [{ Connection: "keep-alive" }, "headers.Connection", "policy_denied"],
    [{ Upgrade: "websocket" }, "headers.Upgrade", "policy_denied"],
    [{ "Content-Length": "5" }, "headers.Content-Length", "policy_denied"],
    [{ "Proxy-Authorization": "Basic x" }, "headers.Proxy-Authorization", "policy_denied"],
    [{ "Accept-Encoding": "zstd" }, "headers.Accept-Encoding", "policy_denied"],
    [{ "X-Evil": "a\r\nHost: other" }, "headers.X-Evil", "invalid_arguments"],
    [{ Accept: "a", accept: "b" }, "headers.accept", "invalid_arguments"],
  ];
  it.each(refused)("refuses headers %j before sending anything (%s)", async (headers, property, code) => {
    const before = server.hits.get("/echo") ?? 0;
    await expect(
      call("web.request", { method: "GET", url: `${server.url}/echo`, headers }, allowed()),
    ).rejects.toMatchObject({ code, property });
    expect(server.hits.get("/echo") ?? 0).toBe(before);
  });
});
