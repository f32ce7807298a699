// Tuning runs for search, with a held-back split: `pnpm --filter @capgate/bench tune-search
// [json-options]`. MetaTool queries are split by a seeded shuffle (seed 11) into a tuning
// half and a held-out half; constants are chosen on the tuning half and SGD dev, and only
// then read on the held-out half, SGD test and the full sets (eval-search / pnpm bench).
// `--held-out` prints the held-out figures; without it only the tuning figures are printed.

import { readFileSync } from "node:fs";
import { Registry, type RegistryOptions } from "@capgate/registry";
import { createSemanticRanker, parseVectorTable, type SemanticRankerOptions } from "@capgate/search-semantic";
import { seededRandom, shuffled } from "../lib/random.js";
import { type RetrievalSet, score } from "../lib/retrieval.js";
import { DEPTH, metatoolSets, sgdSets } from "../lib/search-eval.js";

const args = process.argv.slice(2);
const heldOut = args.includes("--held-out");
const json = args.find((a) => a.startsWith("{"));
const { weights, tablePath, ...options } = (json ? JSON.parse(json) : {}) as SemanticRankerOptions & {
  weights?: RegistryOptions["weights"];
  /** A CGVT vector table to try in place of the shipped one. */
  tablePath?: string;
};
if (tablePath) options.table = parseVectorTable(readFileSync(tablePath));
const SPLIT_SEED = 11;

function split(set: RetrievalSet): RetrievalSet {
  const order = shuffled(
    set.queries.map((_, i) => i),
    seededRandom(SPLIT_SEED),
  );
  const half = new Set(order.slice(0, Math.floor(order.length / 2)));
  return { ...set, queries: set.queries.filter((_, i) => half.has(i) !== heldOut) };
}

const f = (x: number) => x.toFixed(3);
const ranker = createSemanticRanker(options);
const rows: string[] = [];
const sub: number[][] = [];
for (const set of [
  ...metatoolSets().map(split),
  ...sgdSets().filter((s) => s.name === (heldOut ? "sgd-test" : "sgd-dev")),
]) {
  const r = new Registry({ ranker, ...(weights ? { weights } : {}) });
  for (const m of set.manifests) r.register(m);
  const cap = score(
    set.queries,
    (q) => r.search(q, { limit: DEPTH }).map((h) => h.capability),
    (q) => q.capabilities,
  );
  if (set.name.startsWith("metatool50")) sub.push([cap.r1, cap.r5]);
  else rows.push(`${set.name} cap ${f(cap.r1)}/${f(cap.r5)}`);
  if (set.queries.some((q) => q.tools)) {
    const tool = score(
      set.queries,
      (q) => r.search(q, { limit: DEPTH, level: "tool" }).map((h) => h.tool ?? ""),
      (q) => q.tools,
    );
    rows.push(`${set.name} tool ${f(tool.r1)}/${f(tool.r5)}`);
  }
}
if (sub.length > 0) {
  const m = (i: number) => sub.reduce((a, s) => a + s[i]!, 0) / sub.length;
  rows.splice(1, 0, `metatool50 cap ${f(m(0))}/${f(m(1))} (${sub.map((s) => f(s[1]!)).join(" ")})`);
}
console.log(`${json ?? "{}"}${heldOut ? " HELD-OUT" : ""} | ${rows.join(" | ")}`);
