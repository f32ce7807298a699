/** One open session as the table sees it. */
export interface TrackedSession {
  /** Who opened it: a hash of the bearer token (never the token). */
  owner: string;
  lastSeen: number;
  /** Requests (including open SSE streams) in flight; a session with any is not idle. */
  active: number;
}

export interface SessionLimits {
  /** Sessions open at once. */
  maxSessions: number;
  /** Sessions open at once per owner (bearer token). */
  maxPerOwner: number;
  /** A session idle (no request in flight) this long is closed. */
  idleMs: number;
}

/** What to do with a new session: admit it (after closing `evict`, if set) or refuse it with a reason. */
export type Admission = { ok: true; evict: string[] } | { ok: false; reason: string };

/**
 * The bookkeeping behind /mcp's sessions, apart from HTTP: clients that never send DELETE
 * (the Inspector leaves one session per call, mcp-remote two) must not lock others out.
 * So idle sessions expire, and at a cap — overall or per token — the least recently used
 * idle session makes room instead of the newcomer being refused. Only when every session
 * at the cap is busy (a request in flight) is a newcomer refused.
 */
export class SessionTable<S extends TrackedSession> {
  readonly #sessions = new Map<string, S>();
  /** Owners of admitted sessions not in the table yet (their initialize is still running). */
  readonly #reserved: string[] = [];

  constructor(readonly limits: SessionLimits) {}

  /**
   * Hold the slot an admission granted until the session is in the table (or failed): call
   * it right after `admit` says ok, in the same tick, and call the returned function when the
   * session is set or gone. Without it, concurrent initializes all pass admission, because
   * a session enters the table only once its initialize has been answered.
   */
  reserve(owner: string): () => void {
    this.#reserved.push(owner);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const at = this.#reserved.indexOf(owner);
      if (at >= 0) this.#reserved.splice(at, 1);
    };
  }

  get size(): number {
    return this.#sessions.size;
  }

  get(id: string): S | undefined {
    return this.#sessions.get(id);
  }

  set(id: string, session: S): void {
    this.#sessions.set(id, session);
  }

  delete(id: string): boolean {
    return this.#sessions.delete(id);
  }

  ids(): string[] {
    return [...this.#sessions.keys()];
  }

  /** Mark a request starting on a session; call the returned function when it ends. */
  begin(session: S, now: number): () => void {
    session.active++;
    session.lastSeen = now;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      session.active--;
      session.lastSeen = Date.now();
    };
  }

  /** Sessions idle longer than `idleMs`. */
  expired(now: number): string[] {
    const out: string[] = [];
    for (const [id, s] of this.#sessions)
      if (s.active === 0 && now - s.lastSeen > this.limits.idleMs) out.push(id);
    return out;
  }

  /** Whether a new session of `owner` may open, and which idle sessions to close first. */
  admit(owner: string): Admission {
    const evict: string[] = [];
    const gone = new Set<string>();
    const lru = (filter: (s: S) => boolean): string | undefined => {
      let best: [string, S] | undefined;
      for (const entry of this.#sessions) {
        const [id, s] = entry;
        if (gone.has(id) || s.active > 0 || !filter(s)) continue;
        if (!best || s.lastSeen < best[1].lastSeen) best = entry;
      }
      return best?.[0];
    };
    // Reserved slots count, and cannot be evicted: their sessions are busy initializing.
    const count = (filter: (s: S) => boolean) => {
      let n = 0;
      for (const [id, s] of this.#sessions) if (!gone.has(id) && filter(s)) n++;
      for (const reservedOwner of this.#reserved) if (filter({ owner: reservedOwner } as S)) n++;
      return n;
    };
    const mine = (s: S) => s.owner === owner;
    while (count(mine) >= this.limits.maxPerOwner) {
      const id = lru(mine);
      if (id === undefined)
        return {
          ok: false,
          reason: `All ${this.limits.maxPerOwner} MCP sessions of this token are busy; retry when one finishes.`,
        };
      evict.push(id);
      gone.add(id);
    }
    while (count(() => true) >= this.limits.maxSessions) {
      const id = lru(() => true);
      if (id === undefined)
        return {
          ok: false,
          reason: `All ${this.limits.maxSessions} MCP sessions are busy; retry when one finishes.`,
        };
      evict.push(id);
      gone.add(id);
    }
    return { ok: true, evict };
  }
}
