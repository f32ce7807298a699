import { escapeText, newMemoryEntry, unescapeText } from "@capgate/loop";
import type { MemoryEntry, MemoryService } from "@capgate/tools";
import type { Database } from "./database.js";

/**
 * Memory shared by every node in `capgate.memory`, searched with PostgreSQL full-text
 * search: the note's text and tags (tags weighted higher, as the file store weights them)
 * in a `tsvector` with a GIN index, a query matching any of its terms, ranked with
 * `ts_rank`. Runs on different workers remember into, and find, the same entries.
 */
export class PgMemoryStore implements MemoryService {
  constructor(private readonly db: Database) {}

  async remember(input: {
    text: string;
    tags?: string[];
    source?: MemoryEntry["source"];
    runId?: string;
  }): Promise<MemoryEntry> {
    const entry = newMemoryEntry(input);
    await this.db.pool.query(
      `INSERT INTO capgate.memory (id, text, tags, source, run_id, created_at, tsv)
       VALUES ($1, $2, $3, $4, $5, $6,
         setweight(to_tsvector('english', array_to_string($3::text[], ' ')), 'A') || setweight(to_tsvector('english', $2), 'B'))`,
      [
        entry.id,
        escapeText(entry.text),
        entry.tags.map(escapeText),
        entry.source,
        entry.runId ?? null,
        entry.createdAt,
      ],
    );
    return entry;
  }

  async forget(id: string): Promise<boolean> {
    const r = await this.db.pool.query("DELETE FROM capgate.memory WHERE id = $1", [id]);
    return (r.rowCount ?? 0) > 0;
  }

  async list(limit: number): Promise<MemoryEntry[]> {
    const { rows } = await this.db.pool.query<MemoryRow>(
      "SELECT id, text, tags, source, run_id, created_at FROM capgate.memory ORDER BY created_at DESC, id DESC LIMIT $1",
      [limit],
    );
    return rows.map(toEntry);
  }

  async search(query: string, limit: number): Promise<Array<MemoryEntry & { score: number }>> {
    // Any term of the query may match (the recall rule of the registry's search); the
    // terms are the query's own lexemes, quoted, so no query syntax reaches to_tsquery.
    const { rows } = await this.db.pool.query<MemoryRow & { score: number }>(
      `WITH q AS (
         SELECT array_to_string(array(SELECT quote_literal(l) FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l), ' | ') AS terms)
       SELECT id, text, tags, source, run_id, created_at, ts_rank(tsv, q.terms::tsquery) AS score
       FROM capgate.memory, q
       WHERE q.terms <> '' AND tsv @@ q.terms::tsquery
       ORDER BY score DESC, created_at DESC
       LIMIT $2`,
      [escapeText(query), limit],
    );
    return rows.map((r) => ({ ...toEntry(r), score: Number(r.score) }));
  }
}

interface MemoryRow {
  id: string;
  text: string;
  tags: string[];
  source: MemoryEntry["source"];
  run_id: string | null;
  created_at: Date;
}

function toEntry(r: MemoryRow): MemoryEntry {
  return {
    id: r.id,
    text: unescapeText(r.text),
    tags: r.tags.map(unescapeText),
    source: r.source,
    createdAt: r.created_at.toISOString(),
    ...(r.run_id ? { runId: r.run_id } : {}),
  };
}
