import { createHash, randomUUID } from "node:crypto";
import type { GateSession, Harness } from "@capgate/harness";
import { createGateServer } from "@capgate/mcp-client";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SessionTable, type TrackedSession } from "./mcp-sessions.js";
import type { OriginPolicy } from "./security.js";

interface McpSession extends TrackedSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  gate: GateSession;
}

export interface McpEndpointOptions {
  harness: Harness;
  policy: () => OriginPolicy;
  version: string;
  /** Sessions open at once (default: config `gate.maxSessions`, else 64); at the cap the least recently used idle session is closed. */
  maxSessions?: number;
  /** Sessions open at once per bearer token (default: config `gate.maxSessionsPerToken`, else maxSessions). */
  maxSessionsPerToken?: number;
  /** Close a session idle (no request in flight) for this long (default: config `gate.idleMs`, else 5 minutes). */
  idleMs?: number;
}

export const DEFAULT_MCP_MAX_SESSIONS = 64;
export const DEFAULT_MCP_IDLE_MS = 5 * 60_000;

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
  readonly #sessions: SessionTable<McpSession>;
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(private readonly options: McpEndpointOptions) {
    const gate = options.harness.config.gate ?? {};
    const maxSessions = options.maxSessions ?? gate.maxSessions ?? DEFAULT_MCP_MAX_SESSIONS;
    const idleMs = options.idleMs ?? gate.idleMs ?? DEFAULT_MCP_IDLE_MS;
    this.#sessions = new SessionTable<McpSession>({
      maxSessions,
      maxPerOwner: options.maxSessionsPerToken ?? gate.maxSessionsPerToken ?? maxSessions,
      idleMs,
    });
    this.#sweeper = setInterval(
      () => {
        for (const id of this.#sessions.expired(Date.now())) void this.#closeSession(id);
      },
      Math.max(250, Math.min(Math.floor(idleMs / 2), 60_000)),
    );
    this.#sweeper.unref();
  }

  count(): number {
    return this.#sessions.size;
  }

  /** The limits in force (for /healthz and tests). */
  limits(): { maxSessions: number; maxSessionsPerToken: number; idleMs: number } {
    const l = this.#sessions.limits;
    return { maxSessions: l.maxSessions, maxSessionsPerToken: l.maxPerOwner, idleMs: l.idleMs };
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
      const owner = ownerOf(request);
      const admission = this.#sessions.admit(owner);
      if (!admission.ok) {
        await reply.code(503).send(rpcError(-32000, admission.reason));
        return;
      }
      // Idle sessions of clients that never said goodbye make room (they get 404 and re-initialize if they come back).
      for (const id of admission.evict) await this.#closeSession(id);
      session = await this.#open(owner);
      opened = true;
    } else {
      await reply
        .code(400)
        .send(
          rpcError(-32000, "Bad request: send initialize first, then the Mcp-Session-Id header it returns."),
        );
      return;
    }
    // A POST is in flight until its response ends or the client goes away. A GET (the
    // client's standing SSE stream) is not activity: a session that only listens is idle,
    // so abandoned clients that leave their stream open cannot hold a slot forever (MCP
    // clients start a new session on the 404 they get next).
    if (request.method === "GET") session.lastSeen = Date.now();
    else reply.raw.once("close", this.#sessions.begin(session, Date.now()));
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

  async #open(owner: string): Promise<McpSession> {
    const policy = this.options.policy();
    // Each /mcp session is a different client: its upstream sessions of stateful MCP servers are its own.
    const gate = this.options.harness.createGateSession({ upstream: "per-session" });
    const server = createGateServer({
      name: "capgate",
      version: this.options.version,
      handlers: gate.handlers,
      ...(gate.resources ? { resources: gate.resources } : {}),
      ...(gate.prompts ? { prompts: gate.prompts } : {}),
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
    session = { transport, server, gate, owner, lastSeen: Date.now(), active: 0 };
    const opened = session;
    let gateClosed = false;
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === opened) this.#sessions.delete(id);
      if (gateClosed) return;
      gateClosed = true;
      // Stops what the session's calls started; the server goes on meanwhile.
      void gate.close();
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
    await Promise.allSettled(this.#sessions.ids().map((id) => this.#closeSession(id)));
  }
}

/** Who opened a session, for the per-token cap: a hash of the Authorization header, never the token itself. */
function ownerOf(request: FastifyRequest): string {
  const auth = request.headers.authorization;
  return createHash("sha256")
    .update(typeof auth === "string" ? auth : "")
    .digest("base64url")
    .slice(0, 22);
}
