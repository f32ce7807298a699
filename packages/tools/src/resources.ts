import type { HostResources } from "./types.js";

interface Entry {
  value: Promise<unknown>;
  dispose: (value: never) => Promise<void> | void;
  /** Set once creation succeeded, so peek() can answer synchronously. */
  ready?: { value: unknown };
}

/**
 * The default HostResources: one resource per key, created on first use (concurrent
 * first uses share one creation), disposed newest-first on closeAll. A failed creation
 * is forgotten so the next call can try again.
 */
export function createHostResources(): HostResources {
  const entries = new Map<string, Entry>();
  let closing = false;

  const disposeEntry = async (entry: Entry): Promise<void> => {
    let value: unknown;
    try {
      value = await entry.value;
    } catch {
      return;
    }
    await entry.dispose(value as never);
  };

  return {
    async acquire<T>(
      key: string,
      create: () => Promise<T> | T,
      dispose: (value: T) => Promise<void> | void,
    ): Promise<T> {
      if (closing) throw new Error(`host is shutting down; '${key}' is not available`);
      const existing = entries.get(key);
      if (existing) return (await existing.value) as T;
      const entry: Entry = {
        value: Promise.resolve().then(create),
        dispose: dispose as (value: never) => Promise<void> | void,
      };
      entries.set(key, entry);
      try {
        const value = (await entry.value) as T;
        entry.ready = { value };
        return value;
      } catch (error) {
        if (entries.get(key) === entry) entries.delete(key);
        throw error;
      }
    },
    peek<T>(key: string): T | undefined {
      return entries.get(key)?.ready?.value as T | undefined;
    },
    async release(key: string): Promise<void> {
      const entry = entries.get(key);
      if (!entry) return;
      entries.delete(key);
      await disposeEntry(entry);
    },
    async closeAll(): Promise<void> {
      closing = true;
      const all = [...entries.values()].reverse();
      entries.clear();
      const results = await Promise.allSettled(all.map(disposeEntry));
      closing = false;
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    },
  };
}
