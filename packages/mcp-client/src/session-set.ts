import { McpClientError } from "./errors.js";
import type { McpSession } from "./session.js";

/**
 * Sessions by server, each connected lazily on first use (concurrent callers share one
 * connect) and dropped when it closes, so the next use reconnects. The pool keeps one set
 * shared by every caller; a scope (one gate session) keeps its own for servers it does not
 * share.
 */
export class SessionSet {
  private readonly sessions = new Map<string, Promise<McpSession>>();
  /** Connected sessions, for the hot path (no promise hop per call). */
  private readonly live = new Map<string, McpSession>();
  private closed = false;

  constructor(
    private readonly open: (server: string) => Promise<McpSession>,
    private readonly onClosed: (server: string, session: McpSession) => void,
    private readonly what: string,
  ) {}

  /** The live session of a server without waiting, when there is one. */
  current(server: string): McpSession | undefined {
    const live = this.live.get(server);
    return live?.isAlive ? live : undefined;
  }

  get size(): number {
    return this.sessions.size;
  }

  async connect(server: string): Promise<McpSession> {
    if (this.closed) throw new McpClientError("mcp_unavailable", `This ${this.what} is closed.`, { server });
    const existing = this.sessions.get(server);
    if (existing) {
      const session = await existing;
      if (session.isAlive) return session;
      if (this.sessions.get(server) === existing) this.sessions.delete(server);
      return this.connect(server);
    }
    const opening = this.open(server);
    this.sessions.set(server, opening);
    let session: McpSession;
    try {
      session = await opening;
    } catch (error) {
      if (this.sessions.get(server) === opening) this.sessions.delete(server);
      throw error;
    }
    if (this.closed) {
      await session.close();
      throw new McpClientError("mcp_unavailable", `This ${this.what} was closed while connecting.`, {
        server,
      });
    }
    this.live.set(server, session);
    void session.closed.then(() => {
      if (this.sessions.get(server) === opening) this.sessions.delete(server);
      if (this.live.get(server) === session) this.live.delete(server);
      this.onClosed(server, session);
    });
    return session;
  }

  async pidOf(server: string): Promise<number | undefined> {
    const pending = this.sessions.get(server);
    if (!pending) return undefined;
    const session = await pending.catch(() => undefined);
    return session?.isAlive ? session.pid : undefined;
  }

  /**
   * Forget a server's session at once (the next use connects again) and close it; resolves
   * when it is closed (stdio servers: their process group ended).
   */
  async drop(server: string): Promise<void> {
    const pending = this.sessions.get(server);
    this.sessions.delete(server);
    this.live.delete(server);
    const session = await pending?.catch(() => undefined);
    await session?.close();
  }

  /** Close every session (stdio servers: their whole process group). The set cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.sessions.values()];
    this.sessions.clear();
    this.live.clear();
    await Promise.all(
      pending.map(async (p) => {
        const session = await p.catch(() => undefined);
        await session?.close();
      }),
    );
  }
}
