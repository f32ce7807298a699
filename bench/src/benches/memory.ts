// Shared memory on PostgreSQL: `tsvector` + `ts_rank` (what PgMemoryStore does) against the
// registry's ranker (the file store's TextIndex: BM25+ with stemming, prefix and typo
// matching), which a node would keep in memory and refresh on NOTIFY. Side by side in one
// run, on the same entries: quality on a labelled set built from real text, and query
// latency with 1,000 and 10,000 entries. Skips with a message without PostgreSQL.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MemoryStore } from "@capgate/loop";
import { openDatabase, PgMemoryStore } from "@capgate/postgres";
import { findPostgresBin, startTestCluster } from "@capgate/test-postgres";
import type { MemoryService } from "@capgate/tools";
import type { Figure } from "../figure.js";
import { percentile, seededRandom, shuffled } from "../lib/random.js";

export const name = "memory";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SIZES = [1_000, 10_000];
const LATENCY_PASSES = 5;

interface Labelled {
  notes: string[];
  distractors: string[];
  queries: Array<{ query: string; note: number }>;
}

/**
 * Filler entries from the repository's own prose: sentences of its Markdown, its source
 * comments and its test names — real technical English about the same subjects as the
 * labelled notes, so they are fair distractors.
 */
function prosePool(): string[] {
  const files = execFileSync("git", ["ls-files", "*.md", "*.ts"], { cwd: repoRoot, encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "" && !f.includes("CHANGELOG") && !f.startsWith("bench/data/"));
  const out = new Set<string>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(join(repoRoot, file), "utf8");
    } catch {
      continue;
    }
    if (file.endsWith(".md")) {
      for (const s of text.replace(/```[\s\S]*?```/g, " ").split(/(?<=[.!?])\s+|\n\s*\n/)) add(out, s);
    } else {
      for (const m of text.matchAll(/^\s*(?:\/\/|\*)\s+(.+)$/gm)) add(out, m[1] as string);
      for (const m of text.matchAll(/\bit\("([^"]{30,300})"/g)) add(out, m[1] as string);
    }
  }
  return [...out];
}

function add(out: Set<string>, raw: string): void {
  const s = raw.replace(/\s+/g, " ").trim();
  if (s.length >= 40 && s.length <= 400 && /[a-z]{3}/.test(s)) out.add(s);
}

/** `size` entries: the labelled notes, the other commit subjects, then prose (numbered copies past its end). */
function corpus(labelled: Labelled, pool: string[], size: number): string[] {
  const fill = shuffled(pool, seededRandom(size));
  const out = [...labelled.notes, ...labelled.distractors];
  for (let i = 0; out.length < size; i++) {
    const base = fill[i % fill.length] as string;
    const round = Math.floor(i / fill.length);
    out.push(round === 0 ? base : `${base} (run ${round})`);
  }
  return out.slice(0, size);
}

async function fill(store: MemoryService, texts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < texts.length; i += 50) {
    const batch = texts.slice(i, i + 50);
    const entries = await Promise.all(
      batch.map((text) => store.remember({ text, tags: [], source: "run_summary" })),
    );
    ids.push(...entries.map((e) => e.id));
  }
  return ids;
}

interface Quality {
  r1: number;
  r5: number;
  mrr: number;
}

async function quality(store: MemoryService, labelled: Labelled, noteIds: string[]): Promise<Quality> {
  let r1 = 0;
  let r5 = 0;
  let mrr = 0;
  for (const q of labelled.queries) {
    const hits = await store.search(q.query, 10);
    const rank = hits.findIndex((h) => h.id === noteIds[q.note]);
    if (rank < 0) continue;
    if (rank === 0) r1++;
    if (rank < 5) r5++;
    mrr += 1 / (rank + 1);
  }
  const n = labelled.queries.length;
  return { r1: r1 / n, r5: r5 / n, mrr: mrr / n };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export async function run(): Promise<Figure[]> {
  if (!findPostgresBin()) {
    console.log("memory: skipped: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin");
    return [];
  }
  const labelled = JSON.parse(
    readFileSync(join(repoRoot, "bench", "data", "memory-labelled.json"), "utf8"),
  ) as Labelled;
  const pool = prosePool();
  const figures: Figure[] = [{ key: "memory.prose_entries", value: pool.length }];
  const cluster = await startTestCluster();
  const root = mkdtempSync(join(tmpdir(), "capgate-bench-memory-"));
  try {
    for (const size of SIZES) {
      const texts = corpus(labelled, pool, size);
      const db = await openDatabase({ url: await cluster.createDatabase(`memory${size}`) });
      try {
        const systems: Array<[string, MemoryService]> = [
          ["tsvector", new PgMemoryStore(db)],
          ["ranker", new MemoryStore(join(root, `file-${size}`))],
        ];
        const ids = new Map<string, string[]>();
        for (const [system, store] of systems) ids.set(system, await fill(store, texts));
        // What "refresh on NOTIFY" costs a node: read every entry back and index it.
        const t0 = performance.now();
        const rebuilt = new MemoryStore(join(root, `file-${size}`));
        const buildMs = performance.now() - t0;
        if (rebuilt.size !== size) throw new Error(`rebuilt index has ${rebuilt.size} of ${size} entries`);
        figures.push({ key: `memory.${size}.ranker_build_ms`, value: Math.round(buildMs) });

        const noteCount = labelled.notes.length;
        for (const [system, store] of systems) {
          const q = await quality(store, labelled, (ids.get(system) as string[]).slice(0, noteCount));
          figures.push(
            { key: `memory.${size}.${system}.r1`, value: round3(q.r1) },
            { key: `memory.${size}.${system}.r5`, value: round3(q.r5) },
            { key: `memory.${size}.${system}.mrr`, value: round3(q.mrr) },
          );
        }
        // Latency: the same queries, the two systems alternated so machine noise hits both alike.
        const times = new Map<string, number[]>(systems.map(([s]) => [s, []]));
        for (let pass = 0; pass < LATENCY_PASSES; pass++) {
          for (const { query } of labelled.queries) {
            for (const [system, store] of systems) {
              const start = performance.now();
              await store.search(query, 5);
              times.get(system)?.push(performance.now() - start);
            }
          }
        }
        for (const [system] of systems) {
          const samples = times.get(system) as number[];
          figures.push(
            { key: `memory.${size}.${system}.p50_ms`, value: round3(percentile(samples, 50)) },
            { key: `memory.${size}.${system}.p99_ms`, value: round3(percentile(samples, 99)) },
          );
        }
      } finally {
        await db.close();
      }
    }
  } finally {
    await cluster.destroy();
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}
