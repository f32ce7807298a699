import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTextIndex, type TextIndex } from "@capgate/registry";
import type { MemoryEntry, MemoryService } from "@capgate/tools";

type Line = { op: "add"; entry: MemoryEntry } | { op: "forget"; id: string; at: string };

const MAX_TEXT = 10_000;

/**
 * A new memory entry from what memory.remember (or a run) gives: text trimmed and capped,
 * tags deduplicated, a fresh id and time. Shared by every MemoryService implementation.
 * @throws Error when the text is empty.
 */
export function newMemoryEntry(input: {
  text: string;
  tags?: string[];
  source?: MemoryEntry["source"];
  runId?: string;
}): MemoryEntry {
  const text = input.text.trim().slice(0, MAX_TEXT);
  if (text === "") throw new Error("a memory note needs some text");
  return {
    id: `m-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`,
    text,
    tags: [...new Set(input.tags ?? [])],
    source: input.source ?? "remember",
    createdAt: new Date().toISOString(),
    ...(input.runId ? { runId: input.runId } : {}),
  };
}

/**
 * The memory behind memory.* and memory_search: remembered notes, goal notes and run
 * summaries, appended to `<stateDir>/memory.jsonl` (forgetting appends a tombstone, so
 * the file is only ever appended to) and searched with the registry's ranked index.
 */
export class MemoryStore implements MemoryService {
  readonly path: string;
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #index: TextIndex<MemoryEntry>;

  constructor(stateDir: string) {
    this.path = join(stateDir, "memory.jsonl");
    this.#index = createTextIndex<MemoryEntry>({
      id: (e) => e.id,
      fields: { text: (e) => e.text, tags: (e) => e.tags },
      weights: { text: 1, tags: 2 },
    });
    this.#load();
  }

  #load(): void {
    if (!existsSync(this.path)) return;
    for (const raw of readFileSync(this.path, "utf8").split("\n")) {
      if (raw.trim() === "") continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a torn last line after a crash
      }
      if (line.op === "add" && line.entry && typeof line.entry.id === "string") this.#put(line.entry);
      else if (line.op === "forget") this.#drop(line.id);
    }
  }

  #put(entry: MemoryEntry): void {
    if (this.#entries.has(entry.id)) this.#drop(entry.id);
    this.#entries.set(entry.id, entry);
    this.#index.add(entry);
  }

  #drop(id: string): boolean {
    if (!this.#entries.delete(id)) return false;
    this.#index.remove(id);
    return true;
  }

  #append(line: Line): void {
    mkdirSync(join(this.path, ".."), { recursive: true });
    appendFileSync(this.path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  }

  async remember(input: {
    text: string;
    tags?: string[];
    source?: MemoryEntry["source"];
    runId?: string;
  }): Promise<MemoryEntry> {
    const entry = newMemoryEntry(input);
    this.#append({ op: "add", entry });
    this.#put(entry);
    return entry;
  }

  async forget(id: string): Promise<boolean> {
    if (!this.#entries.has(id)) return false;
    this.#append({ op: "forget", id, at: new Date().toISOString() });
    return this.#drop(id);
  }

  async list(limit: number): Promise<MemoryEntry[]> {
    return [...this.#entries.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)).slice(0, limit);
  }

  async search(query: string, limit: number): Promise<Array<MemoryEntry & { score: number }>> {
    return this.#index
      .search(query, limit)
      .map((hit) => {
        const entry = this.#entries.get(hit.id);
        return entry ? { ...entry, score: hit.score } : undefined;
      })
      .filter((e): e is MemoryEntry & { score: number } => e !== undefined);
  }

  get size(): number {
    return this.#entries.size;
  }
}
