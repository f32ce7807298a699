import { loadavg } from "node:os";
import { createDefaultRegistry } from "@capgate/harness";
import { Registry } from "@capgate/registry";
import type { Figure } from "../figure.js";
import { percentile } from "../lib/random.js";
import type { RetrievalScores } from "../lib/retrieval.js";
import { evaluateSet, mcpEvalsSets, metatoolSets, type SetScores, sgdSets } from "../lib/search-eval.js";
import { syntheticManifests, syntheticQueries } from "../lib/synthetic.js";

export const name = "search";

const round = (x: number, digits = 4): number => Number(x.toFixed(digits));

function figures(prefix: string, scores: Record<string, RetrievalScores>): Figure[] {
  const out: Figure[] = [];
  for (const [system, r] of Object.entries(scores)) {
    const key = `${prefix}.${system}`;
    out.push(
      { key: `${key}.r1`, value: round(r.r1) },
      { key: `${key}.r5`, value: round(r.r5) },
      { key: `${key}.mrr`, value: round(r.mrr) },
    );
  }
  return out;
}

/**
 * Quality on every set available, each system beside textbook BM25 in the same run:
 * `bm25` (textbook), `lexical` (new Registry()), `default` (createDefaultRegistry(): what the
 * CLI and server use). MetaTool: all 199 tools and the mean of three 50-tool subsets; SGD
 * (the extract in bench/data/sgd) and mcp-evals (bench/data/mcp-evals): capability and tool level.
 */
function quality(): Figure[] {
  const out: Figure[] = [];
  const subsets: SetScores[] = [];
  for (const set of metatoolSets()) {
    const s = evaluateSet(set);
    console.log(`search.${set.name}: ${set.manifests.length} tools, ${set.queries.length} queries`);
    if (set.name === "metatool") out.push(...figures("search.metatool", s.capability));
    else subsets.push(s);
  }
  if (subsets.length > 0) {
    const mean: Record<string, RetrievalScores> = {};
    for (const system of Object.keys(subsets[0]!.capability)) {
      const rows = subsets.map((s) => s.capability[system as keyof SetScores["capability"]]);
      const avg = (f: (r: RetrievalScores) => number) => rows.reduce((a, r) => a + f(r), 0) / rows.length;
      mean[system] = {
        r1: avg((r) => r.r1),
        r5: avg((r) => r.r5),
        r10: avg((r) => r.r10),
        mrr: avg((r) => r.mrr),
        queries: avg((r) => r.queries),
      };
    }
    out.push(...figures("search.metatool50", mean));
  }
  for (const set of sgdSets()) {
    const s = evaluateSet(set);
    console.log(
      `search.${set.name}: ${set.manifests.length} services, ${set.queries.length} queries (${set.note})`,
    );
    out.push(...figures(`search.${set.name}.capability`, s.capability));
    if (s.tool) out.push(...figures(`search.${set.name}.tool`, s.tool));
  }
  // Real MCP servers' tool lists with their maintainers' requests: one capability per server
  // and one per tool; the per-server subsets (`mcp-evals.pagerduty`, …) are printed too.
  for (const set of mcpEvalsSets()) {
    const s = evaluateSet(set);
    console.log(`search.${set.name}: ${set.manifests.length} servers, ${set.queries.length} queries`);
    out.push(...figures(`search.${set.name}.capability`, s.capability));
    if (s.tool) out.push(...figures(`search.${set.name}.tool`, s.tool));
  }
  return out;
}

/** A naive linear scan: the seed's substring rule over prebuilt lowercased haystacks. */
function naiveSearch(haystacks: ReadonlyArray<[string, string]>, query: string, limit: number): string[] {
  const whole = query.toLowerCase().trim();
  const words = whole.split(/\s+/).filter((w) => w !== "");
  const out: string[] = [];
  for (const [name, hay] of haystacks) {
    if (hay.includes(whole) || words.some((w) => hay.includes(w))) {
      out.push(name);
      if (out.length >= limit) break;
    }
  }
  return out;
}

/** Time `a` and `b` on each query, alternating, so machine noise hits both alike. */
function timeBoth(
  queries: readonly string[],
  a: (q: string) => unknown,
  b: (q: string) => unknown,
): [number[], number[]] {
  for (const q of queries.slice(0, 50)) {
    a(q);
    b(q);
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (const q of queries) {
    let t0 = performance.now();
    a(q);
    ta.push(performance.now() - t0);
    t0 = performance.now();
    b(q);
    tb.push(performance.now() - t0);
  }
  return [ta, tb];
}

/** Median of a function's time over the queries (ms), with a warm-up. */
function timeOne(queries: readonly string[], f: (q: string) => unknown): number[] {
  for (const q of queries.slice(0, 50)) f(q);
  const t: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    f(q);
    t.push(performance.now() - t0);
  }
  return t;
}

function scale(): Figure[] {
  const manifests = syntheticManifests(1000, 10);
  const queries = syntheticQueries(manifests, 400);
  // First registration compiles every distinct input schema with ajv (validateManifest's
  // "does it compile" check, cached per process); the index build is timed on fresh
  // registries once those validators exist.
  let t0 = performance.now();
  const cold = new Registry();
  for (const m of manifests) cold.register(m);
  const coldMs = performance.now() - t0;
  const loadBefore = loadavg()[0]!;
  const registry = new Registry();
  // CPU time beside wall time: on a shared machine the wall clock also counts other processes' turns.
  let cpu0 = process.cpuUsage();
  t0 = performance.now();
  for (const m of manifests) registry.register(m);
  const buildMs = performance.now() - t0;
  const buildCpu = process.cpuUsage(cpu0);
  const semantic = createDefaultRegistry();
  cpu0 = process.cpuUsage();
  t0 = performance.now();
  for (const m of manifests) semantic.register(m);
  // The approximate vector index trains its cells on the first query: count it in the build.
  semantic.search("warm up the vector index");
  const semanticBuildMs = performance.now() - t0;
  const semanticBuildCpu = process.cpuUsage(cpu0);
  const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

  // The same text the registry indexes: names, descriptions, profile fit, and each tool's
  // argument names and descriptions.
  const argumentText = (schema: unknown): string[] =>
    Object.entries(
      (schema as { properties?: Record<string, { description?: unknown }> }).properties ?? {},
    ).map(([name, p]) => (typeof p?.description === "string" ? `${name}: ${p.description}` : name));
  const haystacks: Array<[string, string]> = manifests.map((m) => [
    m.name,
    [
      m.name,
      m.description,
      ...m.profileFit,
      ...m.tools.flatMap((t) => [t.name, t.description, ...argumentText(t.inputSchema)]),
    ]
      .join("\n")
      .toLowerCase(),
  ]);
  const [ranked, naive] = timeBoth(
    queries,
    (q) => registry.search(q, { limit: 5 }),
    (q) => naiveSearch(haystacks, q, Number.POSITIVE_INFINITY),
  );
  const withSemantic = timeOne(queries, (q) => semantic.search(q, { limit: 5 }));
  const toolLevel = timeOne(queries, (q) => semantic.search(q, { limit: 5, level: "tool" }));
  const tools = manifests.reduce((n, m) => n + m.tools.length, 0);
  const distinct = new Set(haystacks.flatMap(([, h]) => h.split(/[^a-z0-9]+/))).size;
  console.log(
    `search.scale: ${manifests.length} manifests, ${tools} tools, ${distinct} distinct words, ${queries.length} queries`,
  );
  const lexicalP50 = percentile(ranked, 50);
  const naiveP50 = percentile(naive, 50);
  return [
    { key: "search.scale.build_ms", value: round(buildMs, 1), target: "≤ 1000" },
    { key: "search.scale.default_build_ms", value: round(semanticBuildMs, 1), target: "≤ 1000" },
    { key: "search.scale.build_cpu_ms", value: round(cpuMs(buildCpu), 1) },
    { key: "search.scale.default_build_cpu_ms", value: round(cpuMs(semanticBuildCpu), 1) },
    { key: "search.scale.register_cold_ms", value: round(coldMs, 1) },
    { key: "search.scale.query_p50_ms", value: round(lexicalP50, 3) },
    { key: "search.scale.query_p99_ms", value: round(percentile(ranked, 99), 3) },
    { key: "search.scale.naive_p50_ms", value: round(naiveP50, 3) },
    { key: "search.scale.naive_over_lexical", value: round(naiveP50 / lexicalP50, 2), target: "≥ 5" },
    {
      key: "search.scale.default_query_p50_ms",
      value: round(percentile(withSemantic, 50), 3),
      target: "≤ 1.5",
    },
    { key: "search.scale.default_query_p99_ms", value: round(percentile(withSemantic, 99), 3) },
    { key: "search.scale.default_tool_query_p50_ms", value: round(percentile(toolLevel, 50), 3) },
    // The machine's 1-minute load average before and after the timings: read the times with it.
    { key: "search.scale.load_average_before", value: round(loadBefore, 2) },
    { key: "search.scale.load_average_after", value: round(loadavg()[0]!, 2) },
  ];
}

export async function run(): Promise<Figure[]> {
  return [...quality(), ...scale()];
}
