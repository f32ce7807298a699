import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./index.js";

// In-process servers with small injected slow-client timeouts (no timing assertions: a
// slow client must simply get closed), plus the minor request-level holes of issue 9.

interface ErrorJson {
  error: { code: string; message: string; property?: string };
}

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-hardening-")));
const workspace = join(root, "ws");
const scripts = join(root, "scripts");
mkdirSync(workspace);
mkdirSync(scripts);
writeFileSync(join(workspace, "hello.txt"), "hello\n");
writeFileSync(join(root, "secret.json"), '["root:x:0:0:secret-line"]');
writeFileSync(
  join(scripts, "finish.json"),
  JSON.stringify([JSON.stringify({ name: "finish", arguments: { summary: "done" } })]),
);

let server: RunningServer;
let host: string;

beforeAll(async () => {
  server = await startServer({
    port: 0,
    workspace,
    stateDir: join(root, "state"),
    env: {},
    config: {},
    scriptedModelsDir: scripts,
    timeouts: { headersMs: 300, requestMs: 600 },
  });
  host = `127.0.0.1:${server.port}`;
}, 60_000);

afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A raw TCP client: what it received and a promise that settles when the server closes the connection. */
function rawClient(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, "127.0.0.1");
  let data = "";
  socket.setEncoding("utf8").on("data", (d: string) => {
    data += d;
  });
  const closed = new Promise<void>((resolve) => {
    socket.once("close", () => resolve());
    socket.once("error", () => resolve());
  });
  return { socket, received: () => data, closed };
}

/** Write `chunk` every `everyMs` until the socket closes. */
function dribble(socket: Socket, chunk: string, everyMs: number): () => void {
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write(chunk);
  }, everyMs);
  return () => clearInterval(timer);
}

describe("slow clients are cut off", () => {
  it("a client that never finishes its headers is closed", async () => {
    const client = rawClient(server.port);
    client.socket.write(`GET /capabilities HTTP/1.1\r\nHost: ${host}\r\n`);
    // One header line after another, never the blank line that ends them.
    const stop = dribble(client.socket, "X-Slow: a\r\n", 40);
    await client.closed;
    stop();
    expect(client.received()).not.toMatch(/^HTTP\/1\.1 200/);
  }, 20_000);

  it("a client that sends its body slowly is closed before the body is complete", async () => {
    const client = rawClient(server.port);
    client.socket.write(
      `POST /tools/call HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"tool":"fs.read","arguments":{"path":"`,
    );
    const stop = dribble(client.socket, "a", 40);
    await client.closed;
    stop();
    expect(client.received()).not.toMatch(/^HTTP\/1\.1 200/);
    // Answered in the documented error shape before the close.
    const received = client.received();
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4))).toMatchObject({
      error: { code: "request_timeout" },
    });
  }, 20_000);

  it("an ordinary request on the same server is unaffected", async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
  });
});

/** One raw request; resolves with the status line and body once the server answers. */
async function rawExchange(request: string): Promise<{ status: number; body: string }> {
  const client = rawClient(server.port);
  client.socket.write(request);
  await new Promise<void>((resolve) => {
    const check = () => {
      if (/\r\n\r\n[\s\S]*\}/.test(client.received())) resolve();
    };
    client.socket.on("data", check);
    void client.closed.then(() => resolve());
  });
  client.socket.destroy();
  const text = client.received();
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
    body: text.slice(text.indexOf("\r\n\r\n") + 4),
  };
}

describe("duplicate Host and Authorization headers", () => {
  it.each([
    [
      "two Host headers (the second foreign)",
      (h: string, t: string) => `Host: ${h}\r\nHost: evil.example\r\nAuthorization: Bearer ${t}\r\n`,
    ],
    [
      "two identical Host headers",
      (h: string, t: string) => `Host: ${h}\r\nhost: ${h}\r\nAuthorization: Bearer ${t}\r\n`,
    ],
    [
      "two Authorization headers",
      (h: string, t: string) => `Host: ${h}\r\nAuthorization: Bearer ${t}\r\nAuthorization: Bearer other\r\n`,
    ],
  ])("%s → 400 before the body is read", async (_name, headers) => {
    // Content-Length promises a body that never comes: only a refusal before reading it answers.
    const { status, body } = await rawExchange(
      `POST /tools/call HTTP/1.1\r\n${headers(host, server.token)}Content-Type: application/json\r\nContent-Length: 50\r\n\r\n`,
    );
    expect(status).toBe(400);
    expect((JSON.parse(body) as ErrorJson).error.code).toBe("duplicate_header");
  });

  it("one of each still works", async () => {
    const payload = JSON.stringify({ tool: "fs.read", arguments: { path: "hello.txt" } });
    const { status, body } = await rawExchange(
      `POST /tools/call HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
    expect(status).toBe(200);
    expect(body).toContain("hello");
  });
});

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; json: ErrorJson & { id?: string } }> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as ErrorJson & { id?: string } };
}

describe("profile names are own entries only", () => {
  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"])(
    "%s is an unknown profile on /tools/call and POST /runs",
    async (profile) => {
      const call = await post("/tools/call", { tool: "fs.read", arguments: { path: "hello.txt" }, profile });
      expect(call.status).toBe(400);
      expect(call.json.error).toMatchObject({ code: "unknown_profile", property: "profile" });
      expect(call.json.error.message).toContain("Profiles: Orchestrator, Coder");
      const run = await post("/runs", { goal: "x", profile, model: "scripted:finish.json" });
      expect(run.status).toBe(400);
      expect(run.json.error).toMatchObject({ code: "unknown_profile", property: "profile" });
    },
  );

  it("a near miss gets a did-you-mean", async () => {
    const call = await post("/tools/call", {
      tool: "fs.read",
      arguments: { path: "hello.txt" },
      profile: "Codr",
    });
    expect(call.json.error.message).toContain("Did you mean 'Coder'?");
  });
});

describe("scripted models over HTTP", () => {
  it.each([
    "scripted:/etc/passwd",
    `scripted:${join(root, "secret.json")}`,
    "scripted:../secret.json",
    "scripted:/etc/shadow",
    "scripted:nonexistent.json",
  ])("%s is refused without reading or quoting the file", async (model) => {
    const run = await post("/runs", { goal: "x", model });
    expect(run.status).toBe(400);
    expect(run.json.error).toMatchObject({ code: "scripted_model_refused", property: "model" });
    expect(run.json.error.message).not.toMatch(/root:|secret-line|ENOENT|does not exist/);
  });

  it("a file in the scripted-models directory runs", async () => {
    const run = await post("/runs", { goal: "say done", model: "scripted:finish.json" });
    expect(run.status, JSON.stringify(run.json)).toBe(202);
  });

  it("without a scripted-models directory every scripted model is refused", async () => {
    const other = await startServer({
      port: 0,
      workspace,
      stateDir: join(root, "state2"),
      env: {},
      config: {},
    });
    try {
      const response = await fetch(`${other.url}/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${other.token}`, "content-type": "application/json" },
        body: JSON.stringify({ goal: "x", model: `scripted:${join(scripts, "finish.json")}` }),
      });
      expect(response.status).toBe(400);
      const json = (await response.json()) as ErrorJson;
      expect(json.error.code).toBe("scripted_model_refused");
      expect(json.error.message).toContain("scriptedModelsDir");
    } finally {
      await other.close();
    }
  });

  it("$CAPGATE_SCRIPTED_MODELS_DIR sets the directory when the option is not given", async () => {
    const other = await startServer({
      port: 0,
      workspace,
      stateDir: join(root, "state3"),
      env: { CAPGATE_SCRIPTED_MODELS_DIR: scripts },
      config: {},
    });
    try {
      const response = await fetch(`${other.url}/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${other.token}`, "content-type": "application/json" },
        body: JSON.stringify({ goal: "say done", model: "scripted:finish.json" }),
      });
      expect(response.status).toBe(202);
    } finally {
      await other.close();
    }
  });
});
