import { Registry, type RegistryOptions } from "@capgate/registry";
import { createSemanticRanker } from "@capgate/search-semantic";
import { Bm25, capabilityDocs, toolDocs } from "./bm25.js";
import { mcpEvalsSets } from "./mcp-evals.js";
import { loadMetaTool, metatoolManifests } from "./metatool.js";
import { seededRandom, shuffled } from "./random.js";
import type { RetrievalScores, RetrievalSet } from "./retrieval.js";
import { score } from "./retrieval.js";
import { loadSgd } from "./sgd.js";

/** Ranked lists are read to this depth: R@10 and MRR@20. */
export const DEPTH = 20;

export const SUBSET_SEEDS = [1, 2, 3];
const SUBSET_SIZE = 50;

/** MetaTool, all 199 tools and three 50-tool subsets; empty (with a message) when the data is absent. */
export function metatoolSets(): RetrievalSet[] {
  const data = loadMetaTool();
  if ("missing" in data) {
    console.log(`search.metatool: skipped: ${data.missing}`);
    return [];
  }
  const toSet = (name: string, only?: ReadonlySet<string>): RetrievalSet => {
    const { manifests, capabilityOf } = metatoolManifests(data, only);
    const present = new Set(manifests.map((m) => m.name));
    const queries: RetrievalSet["queries"] = [];
    for (const { query, tool } of data.queries) {
      const cap = capabilityOf.get(tool);
      if (cap !== undefined && present.has(cap)) queries.push({ query, capabilities: new Set([cap]) });
    }
    return { name, manifests, queries };
  };
  const plugins = [...data.tools.keys()].sort();
  return [
    toSet("metatool"),
    ...SUBSET_SEEDS.map((seed) =>
      toSet(`metatool50.seed${seed}`, new Set(shuffled(plugins, seededRandom(seed)).slice(0, SUBSET_SIZE))),
    ),
  ];
}

/** SGD test and dev splits (human-paraphrased user turns); from bench/data/sgd (or $CAPGATE_SGD_DIR). */
export function sgdSets(): RetrievalSet[] {
  const out: RetrievalSet[] = [];
  for (const split of ["test", "dev"] as const) {
    const set = loadSgd(split);
    if ("missing" in set) {
      console.log(`search.sgd-${split}: skipped: ${set.missing}`);
      continue;
    }
    out.push(set);
  }
  return out;
}

export { mcpEvalsSets };

export type SystemName = "bm25" | "lexical" | "default";

export function registryFor(set: RetrievalSet, options: RegistryOptions): Registry {
  const r = new Registry(options);
  if (set.mcpServers) {
    for (const s of set.mcpServers) r.registerMcpServer(s.name, s.tools);
  } else {
    for (const m of set.manifests) r.register(m);
  }
  return r;
}

export interface SetScores {
  capability: Record<SystemName, RetrievalScores>;
  /** Only for sets with tool labels. */
  tool?: Record<SystemName, RetrievalScores>;
}

/** Every system on one set, capability level (and tool level when the set labels tools). */
export function evaluateSet(set: RetrievalSet, ranker = createSemanticRanker()): SetScores {
  const lexical = registryFor(set, {});
  const semantic = registryFor(set, { ranker });
  const capBm25 = new Bm25(capabilityDocs(set.manifests));
  const caps = (q: RetrievalSet["queries"][number]) => q.capabilities;
  const capability = {
    bm25: score(set.queries, (q) => capBm25.search(q, DEPTH), caps),
    lexical: score(set.queries, (q) => lexical.search(q, { limit: DEPTH }).map((h) => h.capability), caps),
    default: score(set.queries, (q) => semantic.search(q, { limit: DEPTH }).map((h) => h.capability), caps),
  };
  if (!set.queries.some((q) => q.tools)) return { capability };
  const toolBm25 = new Bm25(toolDocs(set.manifests));
  const tools = (q: RetrievalSet["queries"][number]) => q.tools;
  const toolLevel = (r: Registry) => (q: string) =>
    r.search(q, { limit: DEPTH, level: "tool" }).map((h) => h.tool ?? "");
  return {
    capability,
    tool: {
      bm25: score(set.queries, (q) => toolBm25.search(q, DEPTH), tools),
      lexical: score(set.queries, toolLevel(lexical), tools),
      default: score(set.queries, toolLevel(semantic), tools),
    },
  };
}
