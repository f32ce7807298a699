import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  rawRequest,
  type ServerProcess,
  startServerProcess,
  waitFor,
} from "./test-support/server-process.js";

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({ files: { "notes.txt": "the gate works over HTTP\n" } });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

async function connect(token = server.token): Promise<Client> {
  const client = new Client({ name: "capgate-server-test", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? "").join("\n");
}

describe("/mcp (Streamable HTTP)", () => {
  it("serves the four gate tools, and a session keeps what it loaded", async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        "capability_search",
        "capability_load",
        "capability_call",
        "memory_search",
      ]);
      const search = await client.callTool({ name: "capability_search", arguments: { query: "read files" } });
      expect(text(search)).toContain("fs");
      const load = await client.callTool({ name: "capability_load", arguments: { name: "fs" } });
      expect(text(load)).toContain("fs.read(");
      const read = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "notes.txt" } },
      });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toContain("the gate works over HTTP");
      const bad = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { paht: "x" } },
      });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toContain("path");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("gives each MCP session its own router", async () => {
    const one = await connect();
    const two = await connect();
    try {
      await one.callTool({ name: "capability_load", arguments: { name: "fs" } });
      const other = await two.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "notes.txt" } },
      });
      expect(other.isError).toBe(true);
      expect(text(other)).toContain("not loaded");
    } finally {
      await one.close();
      await two.close();
    }
  }, 30_000);

  it("closes a session on DELETE and ends its gate trace", async () => {
    const sessions = async () =>
      ((await (await server.api("/status")).json()) as { mcpSessions: number }).mcpSessions;
    const client = await connect();
    const open = await sessions();
    const transport = client.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId;
    expect(sessionId).toBeTruthy();
    await transport.terminateSession();
    await client.close();
    await waitFor(async () => ((await sessions()) === open - 1 ? true : undefined), "the session to close");
    // Its gate trace ended (listed as a chat-kind run).
    const runs = (await (await server.api("/runs")).json()) as Array<{ kind?: string; status: string }>;
    expect(runs.some((r) => r.kind === "chat" && r.status === "ended")).toBe(true);
  }, 30_000);

  it("needs the bearer token", async () => {
    await expect(connect("wrong-token-wrong-token")).rejects.toThrow();
    const response = await rawRequest(server.url, {
      method: "POST",
      path: "/mcp",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    });
    expect(response.status).toBe(401);
  });

  it("refuses a rebinding Host or Origin with 403", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${server.token}`,
    };
    const evilHost = await rawRequest(server.url, {
      method: "POST",
      path: "/mcp",
      headers: { ...headers, host: "evil.example.com" },
      body: initialize,
    });
    expect(evilHost.status).toBe(403);
    const evilOrigin = await rawRequest(server.url, {
      method: "POST",
      path: "/mcp",
      headers: { ...headers, origin: "http://evil.example.com" },
      body: initialize,
    });
    expect(evilOrigin.status).toBe(403);
  });

  it("answers an unknown session id with 404 so the client can start over", async () => {
    const response = await server.api("/mcp", {
      body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
      headers: { "mcp-session-id": "no-such-session", accept: "application/json, text/event-stream" },
    });
    expect(response.status).toBe(404);
  });
});
