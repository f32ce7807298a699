import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GateSession, Harness } from "@capgate/harness";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { bearerToken, type OriginPolicy } from "./http-security.js";
import { SessionTable, type TrackedSession } from "./mcp-sessions.js";

interface McpSession extends TrackedSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  gate: GateSession;
  /** Frees the slot admission reserved (once the session is in the table, or gone). */
  release: () => void;
}

export interface GateSessionsOptions {
  harness: Harness;
  /** The Host and Origin values the transport accepts (known once the server listens). */
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
export interface RpcErrorBody {
  jsonrpc: "2.0";
  error: { code: number; message: string };
  id: null;
}

function rpcError(code: number, message: string): RpcErrorBody {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

/** An MCP request to answer: its method, `Mcp-Session-Id`, parsed JSON body and `Authorization` header. */
export interface GateRequest {
  method: string;
  sessionId: string | undefined;
  body: unknown;
  authorization: string | string[] | undefined;
}

/** Where a request goes: an open session (`opened` when this request made it), or a refusal to send as is. */
export type GateRoute =
  | { ok: true; session: GateSessionEntry; opened: boolean; method: string }
  | { ok: false; status: number; body: RpcErrorBody };

/** One session as a frontend holds it between routing a request and serving it. */
export interface GateSessionEntry {
  readonly owner: string;
}

/**
 * The gate as a Streamable HTTP MCP server, apart from the HTTP framework. Each MCP
 * session (an initialize without `Mcp-Session-Id`) gets its own gate session — its own
 * router, so capabilities it loads stay loaded for that client — over the SDK's
 * StreamableHTTPServerTransport with its DNS-rebinding protection on (behind the
 * frontend's own Host/Origin and bearer checks, which run first). A frontend routes a
 * request (`route`: the session, or a refusal to send), then hands the raw request and
 * response over (`serve`).
 */
export class GateSessions {
  readonly #sessions: SessionTable<McpSession>;
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(private readonly options: GateSessionsOptions) {
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

  /** The session a request belongs to (an initialize opens one), or the refusal to answer with. */
  async route(request: GateRequest): Promise<GateRoute> {
    const { sessionId } = request;
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      // 404 tells a client its session is gone and it should initialize again. A session is
      // its opener's: another token's request is told the same (the id is not confirmed).
      if (!session || session.owner !== ownerOf(request.authorization))
        return refuse(404, -32001, "Session not found; send initialize again.");
      return { ok: true, session, opened: false, method: request.method };
    }
    // The MCP SDK loads with the first request, not with the package.
    const { isInitializeRequest } = await import("@modelcontextprotocol/sdk/types.js");
    if (request.method === "POST" && isInitializeRequest(request.body)) {
      if (this.#closed) return refuse(503, -32000, "The server is shutting down.");
      const owner = ownerOf(request.authorization);
      const admission = this.#sessions.admit(owner);
      if (!admission.ok) return refuse(503, -32000, admission.reason);
      const release = this.#sessions.reserve(owner);
      try {
        // Idle sessions of clients that never said goodbye make room (they get 404 and re-initialize if they come back).
        for (const id of admission.evict) await this.#closeSession(id);
        return { ok: true, session: await this.#open(owner, release), opened: true, method: request.method };
      } catch (error) {
        release();
        throw error;
      }
    }
    return refuse(
      400,
      -32000,
      "Bad request: send initialize first, then the Mcp-Session-Id header it returns.",
    );
  }

  /**
   * Serve a routed request over its session's transport: the response is written to `res`
   * (an internal failure as a JSON-RPC error). `onError` hears about such failures.
   */
  async serve(
    route: Extract<GateRoute, { ok: true }>,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    onError?: (error: unknown) => void,
  ): Promise<void> {
    const session = route.session as McpSession;
    // A POST is in flight until its response ends or the client goes away. A GET (the
    // client's standing SSE stream) is not activity: a session that only listens is idle,
    // so abandoned clients that leave their stream open cannot hold a slot forever (MCP
    // clients start a new session on the 404 they get next).
    if (route.method === "GET") session.lastSeen = Date.now();
    else res.once("close", this.#sessions.begin(session, Date.now()));
    try {
      await session.transport.handleRequest(req, res, body);
    } catch (error) {
      onError?.(error);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify(rpcError(-32603, "Internal error while handling the MCP request.")));
      } else if (!res.writableEnded) res.end();
    }
    // An initialize that failed leaves a session nobody can name: close it now.
    if (route.opened && session.transport.sessionId === undefined) {
      session.release();
      await session.server.close().catch(() => undefined);
    }
  }

  async #open(owner: string, release: () => void): Promise<McpSession> {
    const [{ createGateServer }, { StreamableHTTPServerTransport }] = await Promise.all([
      import("@capgate/mcp-client"),
      import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    ]);
    const policy = this.options.policy();
    // Each /mcp session is a different client: its upstream sessions of stateful MCP servers are its own.
    const gate = this.options.harness.createGateSession({ upstream: "per-session" });
    const server = await createGateServer({
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
        release();
      },
    });
    session = { transport, server, gate, owner, lastSeen: Date.now(), active: 0, release };
    const opened = session;
    let gateClosed = false;
    transport.onclose = () => {
      release();
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

function refuse(status: number, code: number, message: string): GateRoute {
  return { ok: false, status, body: rpcError(code, message) };
}

/**
 * Who opened a session, for the per-token cap and the session's ownership: a hash of the
 * bearer token the header carries (however the header spells `Bearer` and its spaces),
 * never the token itself.
 */
export function ownerOf(auth: string | string[] | undefined): string {
  return createHash("sha256")
    .update(bearerToken(auth) ?? "")
    .digest("base64url")
    .slice(0, 22);
}
