import { Registry } from "@capgate/registry";
import type { Figure } from "../figure.js";
import { loadMetaTool, metatoolManifests } from "../lib/metatool.js";
import { scoreRetrieval } from "../lib/metatool-eval.js";
import { percentile, seededRandom, shuffled } from "../lib/random.js";
import { syntheticManifests, syntheticQueries } from "../lib/synthetic.js";

export const name = "search";

const SUBSET_SEEDS = [1, 2, 3];
const SUBSET_SIZE = 50;

const round = (x: number, digits = 4): number => Number(x.toFixed(digits));

function quality(): Figure[] {
  const data = loadMetaTool();
  if ("missing" in data) {
    console.log(`search.metatool: skipped: ${data.missing}`);
    return [];
  }
  const { manifests, capabilityOf } = metatoolManifests(data);
  const registry = new Registry();
  for (const m of manifests) registry.register(m);
  const all = scoreRetrieval(registry, data, capabilityOf);
  console.log(`search.metatool: ${manifests.length} tools, ${all.queries} queries`);

  const plugins = [...data.tools.keys()].sort();
  const subsetR5: number[] = [];
  for (const seed of SUBSET_SEEDS) {
    const subset = new Set(shuffled(plugins, seededRandom(seed)).slice(0, SUBSET_SIZE));
    const sub = new Registry();
    for (const m of metatoolManifests(data, subset).manifests) sub.register(m);
    const scores = scoreRetrieval(sub, data, capabilityOf);
    console.log(`search.metatool50 seed ${seed}: R@5 ${scores.r5.toFixed(3)} over ${scores.queries} queries`);
    subsetR5.push(scores.r5);
  }
  const mean = subsetR5.reduce((a, b) => a + b, 0) / subsetR5.length;
  return [
    { key: "search.metatool.r1", value: round(all.r1) },
    { key: "search.metatool.r5", value: round(all.r5), target: "≥ 0.65; plain BM25 0.550" },
    { key: "search.metatool.r10", value: round(all.r10) },
    { key: "search.metatool.mrr", value: round(all.mrr) },
    { key: "search.metatool50.r5", value: round(mean), target: "≥ 0.76" },
  ];
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

function scale(): Figure[] {
  const manifests = syntheticManifests(1000, 10);
  const queries = syntheticQueries(manifests, 400);
  // First registration compiles every distinct input schema with ajv (validateManifest's
  // "does it compile" check, cached per process); the index build is timed on a second,
  // fresh registry once those validators exist.
  let t0 = performance.now();
  const cold = new Registry();
  for (const m of manifests) cold.register(m);
  const coldMs = performance.now() - t0;
  const registry = new Registry();
  t0 = performance.now();
  for (const m of manifests) registry.register(m);
  const buildMs = performance.now() - t0;

  const haystacks: Array<[string, string]> = manifests.map((m) => [
    m.name,
    [m.name, m.description, ...m.profileFit, ...m.tools.flatMap((t) => [t.name, t.description])]
      .join("\n")
      .toLowerCase(),
  ]);
  const [ranked, naive] = timeBoth(
    queries,
    (q) => registry.search(q, { limit: 5 }),
    (q) => naiveSearch(haystacks, q, Number.POSITIVE_INFINITY),
  );
  const tools = manifests.reduce((n, m) => n + m.tools.length, 0);
  console.log(`search.scale: ${manifests.length} manifests, ${tools} tools, ${queries.length} queries`);
  return [
    { key: "search.scale.build_ms", value: round(buildMs, 1) },
    { key: "search.scale.register_cold_ms", value: round(coldMs, 1) },
    { key: "search.scale.query_p50_ms", value: round(percentile(ranked, 50), 3), target: "≤ 5 ms, < naive" },
    { key: "search.scale.query_p99_ms", value: round(percentile(ranked, 99), 3) },
    { key: "search.scale.naive_p50_ms", value: round(percentile(naive, 50), 3) },
  ];
}

export async function run(): Promise<Figure[]> {
  return [...quality(), ...scale()];
}
