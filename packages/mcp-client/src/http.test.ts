import { afterEach, describe, expect, it } from "vitest";
import { McpClientError } from "./errors.js";
import { McpPool } from "./pool.js";
import type { McpPoolEvent } from "./pool-types.js";
import { type HttpMcpServer, startHttpMcpServer } from "./test-support/http-server.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(mode: "streamable" | "sse", token?: string): Promise<HttpMcpServer> {
  const server = await startHttpMcpServer(mode, token ? { token } : {});
  cleanup.push(() => server.close());
  return server;
}

function pool(...args: ConstructorParameters<typeof McpPool>): McpPool {
  const p = new McpPool(...args);
  cleanup.push(() => p.close());
  return p;
}

describe("HTTP servers (root entry, no stdio factory needed)", () => {
  it("speaks Streamable HTTP to a url server, with the configured headers", async () => {
    const server = await serve("streamable", "s3cret");
    const events: McpPoolEvent[] = [];
    const p = pool(
      { remote: { url: server.url, headers: { Authorization: "Bearer s3cret" } } },
      { onEvent: (e) => events.push(e) },
    );
    expect((await p.listTools("remote")).map((t) => t.qualifiedName)).toEqual([
      "remote/echo",
      "remote/whoami",
    ]);
    expect((await p.callTool("remote", "echo", { text: "over http" })).summary).toBe("echo:over http");
    expect((await p.callTool("remote", "whoami", {})).summary).toBe("Bearer s3cret");
    expect(events).toContainEqual({ type: "connected", server: "remote", transport: "streamable-http" });
    expect(server.requests[0]).toBe("POST /mcp");
  }, 30_000);

  it("ends the HTTP session with DELETE on close", async () => {
    const server = await serve("streamable");
    const p = new McpPool({ remote: { url: server.url } });
    await p.callTool("remote", "echo", { text: "x" });
    await p.close();
    expect(server.requests).toContain("DELETE /mcp");
  }, 30_000);

  it("falls back to legacy SSE when the endpoint has no Streamable HTTP", async () => {
    const server = await serve("sse");
    const events: McpPoolEvent[] = [];
    const p = pool({ legacy: { url: server.url } }, { onEvent: (e) => events.push(e) });
    expect((await p.callTool("legacy", "echo", { text: "via sse" })).summary).toBe("echo:via sse");
    expect(events).toContainEqual({ type: "connected", server: "legacy", transport: "sse" });
    expect(server.requests.slice(0, 2)).toEqual(["POST /mcp", "GET /mcp"]);
  }, 30_000);

  it("goes straight to SSE with type: sse, and never falls back with type: http", async () => {
    const server = await serve("sse");
    const direct = pool({ legacy: { type: "sse", url: server.url } });
    expect((await direct.callTool("legacy", "echo", { text: "direct" })).summary).toBe("echo:direct");
    expect(server.requests[0]).toBe("GET /mcp");
    const strict = pool({ strict: { type: "http", url: server.url } });
    const error = await strict.callTool("strict", "echo", {}).catch((e: unknown) => e);
    expect(McpClientError.isInstance(error) && error.code).toBe("mcp_connect_failed");
    expect((error as Error).message).toContain("MCP server 'strict'");
  }, 30_000);

  it("does not fall back on 401: the auth error names the server", async () => {
    const server = await serve("streamable", "right");
    const p = pool({ remote: { url: server.url, headers: { Authorization: "Bearer wrong" } } });
    const error = await p.listTools("remote").catch((e: unknown) => e);
    // A 401 is an auth problem, and says how OAuth would be switched on.
    expect(McpClientError.isInstance(error) && error.code).toBe("mcp_auth_required");
    expect((error as Error).message).toContain("MCP server 'remote'");
    expect((error as Error).message).toContain('add "oauth": {} to mcpServers.remote');
    expect(server.requests.filter((r) => r.startsWith("GET"))).toEqual([]);
  }, 30_000);

  it("fails calls clearly when the server goes away, and reconnects on the next call", async () => {
    let server = await serve("streamable");
    const url = server.url;
    const p = pool({ remote: { url } });
    await p.callTool("remote", "echo", { text: "1" });
    await server.close();
    const error = await p.callTool("remote", "echo", { text: "2" }).catch((e: unknown) => e);
    expect(McpClientError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("MCP server 'remote'");
    // Same port again: the next call opens a new session.
    const port = Number(new URL(url).port);
    server = await startOn(port);
    cleanup.push(() => server.close());
    expect((await p.callTool("remote", "echo", { text: "3" })).summary).toBe("echo:3");
  }, 30_000);

  it("refuses a stdio server when no stdio factory was given, saying where to get one", async () => {
    const p = pool({ local: { command: "node" } });
    const error = await p.callTool("local", "x", {}).catch((e: unknown) => e);
    expect(McpClientError.isInstance(error) && error.code).toBe("mcp_unavailable");
    expect((error as Error).message).toContain("@capgate/mcp-client/stdio");
  });
});

async function startOn(port: number): Promise<HttpMcpServer> {
  for (let i = 0; ; i++) {
    try {
      return await startHttpMcpServer("streamable", { port });
    } catch (error) {
      if (i > 40) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
