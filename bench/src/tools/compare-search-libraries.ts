import { analyze, createTextIndex } from "@capgate/registry";
import type { CapabilityManifest } from "@capgate/schema";
import { create, insert, search } from "@orama/orama";
import { Document } from "flexsearch";
import MiniSearch from "minisearch";
import { loadMetaTool, metatoolManifests } from "../lib/metatool.js";
import { percentile } from "../lib/random.js";
import { score } from "../lib/retrieval.js";
import { syntheticManifests, syntheticQueries } from "../lib/synthetic.js";

/**
 * The measurement behind the choice of search library (docs/search.md): the same documents,
 * the same analysis (@capgate/registry's tokenizer, stop words and stemmer) and the same
 * field weights in each engine; MetaTool R@5 (199 tools, every query) and query latency on
 * 1,000 manifests / 10,000 tools. Run: pnpm --filter @capgate/bench compare-search
 */

type Flat = {
  id: string;
  name: string;
  tools: string;
  toolDescriptions: string;
  description: string;
};

const WEIGHTS = { name: 3, tools: 3, toolDescriptions: 1.5, description: 1 } as const;
const FIELDS = Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>;

function flat(m: CapabilityManifest): Flat {
  return {
    id: m.name,
    name: m.name,
    tools: m.tools.map((t) => t.name.slice(t.name.indexOf(".") + 1)).join(" "),
    toolDescriptions: m.tools.map((t) => t.description).join(" "),
    description: m.description,
  };
}

interface Engine {
  add(doc: Flat): void;
  search(query: string, limit: number): string[];
}

function minisearchEngine(): Engine {
  const idx = createTextIndex<Flat>({
    id: (d) => d.id,
    fields: Object.fromEntries(FIELDS.map((f) => [f, (d: Flat) => d[f]])),
    weights: { ...WEIGHTS },
    prefix: false,
    fuzzy: false,
  });
  return { add: (d) => idx.add(d), search: (q, limit) => idx.search(q, limit).map((h) => h.id) };
}

/** MiniSearch's own BM25+ ranking (× words matched), without the registry's coordination. */
function minisearchPlainEngine(): Engine {
  const mini = new MiniSearch<Flat>({
    fields: [...FIELDS],
    tokenize: (text) => analyze(text),
    processTerm: (term) => term,
    searchOptions: { boost: { ...WEIGHTS }, combineWith: "OR" },
  });
  return {
    add: (d) => mini.add(d),
    search: (q, limit) =>
      mini
        .search(q)
        .slice(0, limit)
        .map((r) => String(r.id)),
  };
}

function oramaEngine(): Engine {
  const db = create({
    schema: { name: "string", tools: "string", toolDescriptions: "string", description: "string" } as const,
    components: {
      tokenizer: {
        language: "english",
        normalizationCache: new Map(),
        tokenize: (raw: string) => analyze(raw),
      },
    },
  });
  return {
    add: (d) => {
      insert(db, d);
    },
    search: (q, limit) => {
      const res = search(db, { term: q, boost: { ...WEIGHTS }, limit, threshold: 1 });
      if (res instanceof Promise) throw new Error("orama returned a promise for a plain full-text search");
      return res.hits.map((h) => h.id);
    },
  };
}

function flexsearchEngine(): Engine {
  const index = new Document<Flat>({
    document: {
      id: "id",
      index: FIELDS.map((field) => ({
        field,
        tokenize: "strict" as const,
        encode: (text: string) => analyze(text),
      })),
    },
  });
  return {
    add: (d) => {
      index.add(d);
    },
    // FlexSearch ranks ids per field without scores: fuse the fields by weighted reciprocal rank.
    search: (q, limit) => {
      const perField = index.search(q, { suggest: true, limit: Math.max(limit, 50) }) as Array<{
        field: keyof typeof WEIGHTS;
        result: Array<string | number>;
      }>;
      const score = new Map<string, number>();
      for (const { field, result } of perField) {
        result.forEach((id, rank) => {
          score.set(String(id), (score.get(String(id)) ?? 0) + WEIGHTS[field] / (10 + rank));
        });
      }
      return [...score.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(([id]) => id);
    },
  };
}

const ENGINES: Record<string, () => Engine> = {
  "minisearch (library ranking)": minisearchPlainEngine,
  "minisearch + IDF-weighted coordination (the registry's index)": minisearchEngine,
  "@orama/orama": oramaEngine,
  flexsearch: flexsearchEngine,
};

function metatoolR5(make: () => Engine): number | undefined {
  const data = loadMetaTool();
  if ("missing" in data) return undefined;
  const { manifests, capabilityOf } = metatoolManifests(data);
  const engine = make();
  for (const m of manifests) engine.add(flat(m));
  const queries = data.queries.map(({ query, tool }) => ({
    query,
    capabilities: new Set([capabilityOf.get(tool)!]),
  }));
  // The bench's one scoring loop (R@k/MRR), so this R@5 means what the search bench's does.
  return score(
    queries,
    (q) => engine.search(q, 5),
    (q) => q.capabilities,
  ).r5;
}

function latency(make: () => Engine): { buildMs: number; p50: number; p99: number } {
  const manifests = syntheticManifests(1000, 10);
  const queries = syntheticQueries(manifests, 400);
  const engine = make();
  const t0 = performance.now();
  for (const m of manifests) engine.add(flat(m));
  const buildMs = performance.now() - t0;
  for (const q of queries.slice(0, 50)) engine.search(q, 5);
  const samples = queries.map((q) => {
    const t = performance.now();
    engine.search(q, 5);
    return performance.now() - t;
  });
  return { buildMs, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

console.log("| engine | MetaTool R@5 | build 10k tools (ms) | query p50 (ms) | query p99 (ms) |");
console.log("|---|---|---|---|---|");
for (const [name, make] of Object.entries(ENGINES)) {
  const r5 = metatoolR5(make);
  const { buildMs, p50, p99 } = latency(make);
  console.log(
    `| ${name} | ${r5 === undefined ? "n/a" : r5.toFixed(3)} | ${buildMs.toFixed(0)} | ${p50.toFixed(3)} | ${p99.toFixed(3)} |`,
  );
}
