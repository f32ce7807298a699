import { randomUUID } from "node:crypto";
import type { GateSession, Harness } from "@capgate/harness";
import { createGateServer } from "@capgate/mcp-client";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { OriginPolicy } from "./security.js";

interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  gate: GateSession;
  lastSeen: number;
}

export interface McpEndpointOptions {
  harness: Harness;
  policy: () => OriginPolicy;
  version: string;
  /** Sessions open at once (default 64); an initialize beyond it gets 503. */
  maxSessions?: number;
  /** Close a session nobody used for this long (default 30 minutes). */
  idleMs?: number;
}

/** A JSON-RPC error body: what MCP clients expect from the transport's own failures. */
function rpcError(code: number, message: string) {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

/**
 * `/mcp`: the gate as a Streamable HTTP MCP server. Each MCP session (an initialize
 * without `Mcp-Session-Id`) gets its own gate session — its own router, so capabilities
 * it loads stay loaded for that client — over the SDK's StreamableHTTPServerTransport
 * with its DNS-rebinding protection on (behind the server's own Host/Origin and bearer
 * checks, which run first).
 */
export class McpEndpoint {
  readonly #sessions = new Map<string, McpSession>();
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(private readonly options: McpEndpointOptions) {
    const idleMs = options.idleMs ?? 30 * 60_000;
    this.#sweeper = setInterval(
      () => {
        const now = Date.now();
        for (const [id, s] of this.#sessions) if (now - s.lastSeen > idleMs) void this.#closeSession(id);
      },
      Math.min(idleMs, 60_000),
    );
    this.#sweeper.unref();
  }

  count(): number {
    return this.#sessions.size;
  }

  register(app: FastifyInstance): void {
    app.route({
      method: ["GET", "POST", "DELETE"],
      url: "/mcp",
      handler: (request, reply) => this.#handle(request, reply),
    });
  }

  async #handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers["mcp-session-id"];
    const sessionId = typeof header === "string" ? header : undefined;
    let session: McpSession | undefined;
    let opened = false;
    if (sessionId !== undefined) {
      session = this.#sessions.get(sessionId);
      if (!session) {
        // 404 tells a client its session is gone and it should initialize again.
        await reply.code(404).send(rpcError(-32001, "Session not found; send initialize again."));
        return;
      }
    } else if (request.method === "POST" && isInitializeRequest(request.body)) {
      if (this.#closed) {
        await reply.code(503).send(rpcError(-32000, "The server is shutting down."));
        return;
      }
      if (this.#sessions.size >= (this.options.maxSessions ?? 64)) {
        await reply
          .code(503)
          .send(rpcError(-32000, "Too many MCP sessions are open; close one (DELETE /mcp) first."));
        return;
      }
      session = await this.#open();
      opened = true;
    } else {
      await reply
        .code(400)
        .send(
          rpcError(-32000, "Bad request: send initialize first, then the Mcp-Session-Id header it returns."),
        );
      return;
    }
    session.lastSeen = Date.now();
    reply.hijack();
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, "mcp request failed");
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { "content-type": "application/json" });
        reply.raw.end(JSON.stringify(rpcError(-32603, "Internal error while handling the MCP request.")));
      } else if (!reply.raw.writableEnded) reply.raw.end();
    }
    // An initialize that failed leaves a session nobody can name: close it now.
    if (opened && session.transport.sessionId === undefined)
      await session.server.close().catch(() => undefined);
  }

  async #open(): Promise<McpSession> {
    const policy = this.options.policy();
    const gate = this.options.harness.createGateSession();
    const server = createGateServer({
      name: "capgate",
      version: this.options.version,
      handlers: gate.handlers,
    });
    let session: McpSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts: [...policy.hosts],
      allowedOrigins: [...policy.origins],
      onsessioninitialized: (id) => {
        if (session) this.#sessions.set(id, session);
      },
    });
    session = { transport, server, gate, lastSeen: Date.now() };
    const opened = session;
    let gateClosed = false;
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === opened) this.#sessions.delete(id);
      if (gateClosed) return;
      gateClosed = true;
      gate.close();
    };
    await server.connect(transport);
    return session;
  }

  async #closeSession(id: string): Promise<void> {
    const s = this.#sessions.get(id);
    if (!s) return;
    this.#sessions.delete(id);
    await s.server.close().catch(() => undefined);
  }

  /** Close every session (each ends its gate trace). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    await Promise.allSettled([...this.#sessions.keys()].map((id) => this.#closeSession(id)));
  }
}
