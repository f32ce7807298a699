import type pg from "pg";
import type { Database } from "./database.js";

type Handler = (payload: string) => void;

/**
 * One LISTEN connection per process, shared by the run store and the approvals. NOTIFY
 * payloads carry only ids; readers fetch rows by id. When the connection drops it is
 * re-opened with backoff and `onReconnect` handlers run, so whoever waits re-reads
 * what it may have missed meanwhile.
 */
export class Notifier {
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #reconnect = new Set<() => void>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #closed = false;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Database) {}

  /** Listen on a channel (connecting on first use); resolves once LISTEN is in effect. */
  async listen(channel: string, handler: Handler): Promise<() => void> {
    let set = this.#handlers.get(channel);
    const fresh = !set;
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
    }
    set.add(handler);
    await this.#ensure();
    if (fresh && this.#client) await this.#client.query(`LISTEN ${channel}`).catch(() => undefined);
    return () => {
      set.delete(handler);
    };
  }

  /** Called after the LISTEN connection was lost and re-established. */
  onReconnect(handler: () => void): () => void {
    this.#reconnect.add(handler);
    return () => this.#reconnect.delete(handler);
  }

  #ensure(): Promise<void> {
    if (this.#client) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    const client = this.db.client();
    client.on("notification", (message) => {
      for (const h of this.#handlers.get(message.channel) ?? []) {
        try {
          h(message.payload ?? "");
        } catch {
          // A handler's failure stays its own.
        }
      }
    });
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    await client.connect();
    for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    this.#retry(100);
  }

  #retry(delayMs: number): void {
    if (this.#closed || this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#ensure().then(
        () => {
          for (const h of this.#reconnect) h();
        },
        () => this.#retry(Math.min(delayMs * 2, 2_000)),
      );
    }, delayMs);
    this.#retryTimer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    await this.#connecting?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }
}
