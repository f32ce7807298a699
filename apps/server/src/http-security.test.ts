import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  partialRequest,
  rawRequest,
  type ServerProcess,
  startServerProcess,
} from "./test-support/server-process.js";

interface ErrorJson {
  error: { code: string; message: string; property?: string };
}

let server: ServerProcess;
let host: string;

beforeAll(async () => {
  server = await startServerProcess({ files: { "hello.txt": "hello\n" }, options: { log: false } });
  host = `127.0.0.1:${server.port}`;
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

describe("authentication", () => {
  it("serves /healthz without a token", async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("refuses a data route without a token, with a JSON error and a Bearer challenge", async () => {
    const response = await fetch(`${server.url}/capabilities`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = (await response.json()) as ErrorJson;
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toContain("Authorization: Bearer");
  });

  it("refuses a wrong token, including one that is a prefix of the right one", async () => {
    for (const wrong of ["nope", server.token.slice(0, -1), `${server.token}x`, server.token.toUpperCase()]) {
      const response = await fetch(`${server.url}/capabilities`, {
        headers: { authorization: `Bearer ${wrong}` },
      });
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorJson).error.code).toBe("unauthorized");
    }
  });

  it("does not accept the token in a query string", async () => {
    for (const query of [`token=${server.token}`, `access_token=${server.token}`]) {
      const response = await fetch(`${server.url}/capabilities?${query}`);
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorJson).error.message).toContain("not accepted");
    }
  });

  it("accepts the right token", async () => {
    const response = await server.api("/capabilities");
    expect(response.status).toBe(200);
    const manifests = (await response.json()) as Array<{ name: string }>;
    expect(manifests.map((m) => m.name)).toContain("fs");
  });

  it("asks for a token on unknown routes before saying they do not exist", async () => {
    const anonymous = await fetch(`${server.url}/nope`);
    expect(anonymous.status).toBe(401);
    const known = await server.api("/nope");
    expect(known.status).toBe(404);
    expect(((await known.json()) as ErrorJson).error.code).toBe("not_found");
  });
});

describe("Host and Origin (DNS rebinding)", () => {
  it("refuses an evil Host with 403, even on /healthz and the viewer", async () => {
    for (const path of ["/healthz", "/", "/capabilities", "/mcp"]) {
      const response = await rawRequest(server.url, {
        path,
        headers: { host: `evil.example.com:${server.port}`, authorization: `Bearer ${server.token}` },
      });
      expect(response.status).toBe(403);
      expect(response.json<ErrorJson>().error.code).toBe("forbidden_host");
    }
  });

  it("accepts the local names with the bound port", async () => {
    for (const name of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`]) {
      const response = await rawRequest(server.url, { path: "/healthz", headers: { host: name } });
      expect(response.status).toBe(200);
    }
    const otherPort = await rawRequest(server.url, { path: "/healthz", headers: { host: "127.0.0.1:1" } });
    expect(otherPort.status).toBe(403);
  });

  it("refuses a foreign Origin and the null Origin, and accepts its own", async () => {
    const headers = { host, authorization: `Bearer ${server.token}` };
    const evil = await rawRequest(server.url, {
      path: "/capabilities",
      headers: { ...headers, origin: "http://evil.example.com" },
    });
    expect(evil.status).toBe(403);
    expect(evil.json<ErrorJson>().error.code).toBe("forbidden_origin");
    const nul = await rawRequest(server.url, {
      path: "/capabilities",
      headers: { ...headers, origin: "null" },
    });
    expect(nul.status).toBe(403);
    expect(nul.json<ErrorJson>().error.code).toBe("forbidden_origin");
    const own = await rawRequest(server.url, {
      path: "/capabilities",
      headers: { ...headers, origin: `http://${host}` },
    });
    expect(own.status).toBe(200);
  });

  it("answers 403 before reading the body: an evil Host with a 2 MiB body that never arrives", async () => {
    const response = await partialRequest(server.url, {
      path: "/tools/call",
      headers: {
        host: "evil.example.com",
        authorization: `Bearer ${server.token}`,
        "content-type": "application/json",
      },
      declaredBytes: 2 * 1024 * 1024,
    });
    expect(response.status).toBe(403);
    expect(response.json<ErrorJson>().error.code).toBe("forbidden_host");
  });

  it("answers 401 before reading the body of an unauthenticated request", async () => {
    const response = await partialRequest(server.url, {
      path: "/tools/call",
      headers: { "content-type": "application/json" },
      declaredBytes: 100_000,
    });
    expect(response.status).toBe(401);
    // … and closes the connection, so a body that never arrives holds no socket.
    expect(response.headers.connection).toBe("close");
  });
});

describe("bodies", () => {
  const call = (body: string | Buffer, contentType = "application/json") =>
    rawRequest(server.url, {
      method: "POST",
      path: "/tools/call",
      headers: {
        host,
        authorization: `Bearer ${server.token}`,
        "content-type": contentType,
        "content-length": String(Buffer.byteLength(body)),
      },
      body,
    });

  it("refuses a 2 MiB body with 413, from its Content-Length, without reading it", async () => {
    const response = await partialRequest(server.url, {
      path: "/tools/call",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      declaredBytes: 2 * 1024 * 1024,
    });
    expect(response.status).toBe(413);
    expect(response.json<ErrorJson>().error.code).toBe("body_too_large");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("refuses a 2 MiB body sent in full with 413", async () => {
    const big = JSON.stringify({ tool: "fs.read", arguments: { path: "x".repeat(2 * 1024 * 1024) } });
    const response = await fetch(`${server.url}/tools/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: big,
    }).catch(() => undefined);
    // The server may close the connection while the upload is still going; if an answer arrived it is 413.
    if (response) {
      expect(response.status).toBe(413);
      expect(((await response.json()) as ErrorJson).error.code).toBe("body_too_large");
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("refuses invalid JSON with 400 invalid_json", async () => {
    const response = await call('{"tool": "fs.read",');
    expect(response.status).toBe(400);
    expect(response.json<ErrorJson>().error.code).toBe("invalid_json");
  });

  it("refuses prototype poisoning in the body", async () => {
    const response = await call('{"tool":"fs.read","arguments":{"__proto__":{"polluted":true}}}');
    expect(response.status).toBe(400);
    expect(response.json<ErrorJson>().error).toHaveProperty("code");
  });

  it("refuses a wrong content type with 415", async () => {
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]) {
      const response = await call('{"tool":"fs.read","arguments":{"path":"hello.txt"}}', type);
      expect(response.status).toBe(415);
      expect(response.json<ErrorJson>().error.code).toBe("unsupported_media_type");
    }
  });

  it("names the property of a malformed request body", async () => {
    const response = await call(JSON.stringify({ tool: "fs.read", args: { path: "hello.txt" } }));
    expect(response.status).toBe(400);
    const body = response.json<ErrorJson>();
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.property).toBe("args");
    expect(body.error.message).toContain("arguments");
  });
});

describe("logging", () => {
  it("never writes the token or the Authorization header to the log", async () => {
    const logged = await startServerProcess({ options: { log: { level: "trace" } } });
    try {
      await logged.api("/capabilities");
      await fetch(`${logged.url}/capabilities?token=${logged.token}`);
      await fetch(`${logged.url}/capabilities`, { headers: { authorization: `Bearer ${logged.token}x` } });
      await logged.api("/tools/call", { body: { tool: "nope.nothing" } });
      await logged.stop();
      const output = `${logged.stdout()}\n${logged.stderr()}`;
      // The log is there (so the check below means something) and holds no credential.
      expect(output).toContain('"statusCode":401');
      expect(output).not.toContain(logged.token);
      expect(output.toLowerCase()).not.toContain("bearer");
      expect(output.toLowerCase()).not.toContain("authorization");
    } finally {
      logged.cleanup();
    }
  }, 60_000);

  it("prints nothing at all without a logger", () => {
    // Only the entry script's ready line.
    expect(server.stdout().trim().split("\n")).toHaveLength(1);
    expect(server.stderr()).toBe("");
  });
});
