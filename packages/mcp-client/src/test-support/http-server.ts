import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export interface HttpMcpServer {
  url: string;
  /** "METHOD path" of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

function mcpServer(req: IncomingMessage): Server {
  const server = new Server({ name: "http-test", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "echo",
        description: "Echo text.",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
      },
      { name: "whoami", description: "The Authorization header seen.", inputSchema: { type: "object" } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === "whoami")
      return { content: [{ type: "text", text: String(req.headers.authorization ?? "none") }] };
    return { content: [{ type: "text", text: `echo:${String(request.params.arguments?.text ?? "")}` }] };
  });
  return server;
}

/**
 * A real MCP server on 127.0.0.1: `streamable` speaks Streamable HTTP at /mcp; `sse` only
 * the legacy HTTP+SSE transport (GET /mcp opens the stream, POST /messages), and answers a
 * POST to /mcp with 404 as old servers do. `token` requires `Authorization: Bearer <token>`.
 */
export async function startHttpMcpServer(
  mode: "streamable" | "sse",
  options: { token?: string; port?: number } = {},
): Promise<HttpMcpServer> {
  const token = options.token;
  const requests: string[] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const servers: Server[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0];
    requests.push(`${req.method} ${path}`);
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end("unauthorized");
      return;
    }
    if (mode === "streamable" && path === "/mcp") {
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? streamable.get(id) : undefined;
      if (!transport) {
        if (req.method !== "POST" || id !== undefined) {
          res.writeHead(id === undefined ? 405 : 404).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            streamable.set(sid, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) streamable.delete(created.sessionId);
        };
        const server = mcpServer(req);
        servers.push(server);
        await server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
      return;
    }
    if (mode === "sse" && req.method === "GET" && path === "/mcp") {
      const transport = new SSEServerTransport("/messages", res);
      sse.set(transport.sessionId, transport);
      res.on("close", () => sse.delete(transport.sessionId));
      const server = mcpServer(req);
      servers.push(server);
      await server.connect(transport);
      return;
    }
    if (mode === "sse" && req.method === "POST" && path === "/messages") {
      const sid = new URL(req.url ?? "", "http://x").searchParams.get("sessionId") ?? "";
      const transport = sse.get(sid);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end("not found");
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: async () => {
      await Promise.all(servers.map((s) => s.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
