import { createSemanticRanker } from "@capgate/search-semantic";
import { evaluateSet, metatoolSets, sgdSets } from "./src/lib/search-eval.js";
const sets = [...metatoolSets(), ...sgdSets()].map((s) => s.name.startsWith("metatool") && s.name === "metatool" ? { ...s, queries: s.queries.filter((_, i) => i % 4 === 0) } : s);
const grid = (process.env.GRID ?? "0.5:0.5").split(",").map((p) => p.split(":").map(Number));
for (const [w, m] of grid) {
  const ranker = createSemanticRanker({ weight: w, minSimilarity: m });
  const row: string[] = [];
  for (const set of sets) {
    const s = evaluateSet(set, ranker);
    const d = set.name.startsWith("sgd") ? s.tool!.default : s.capability.default;
    row.push(`${set.name} ${d.r1.toFixed(3)}/${d.r5.toFixed(3)}`);
  }
  console.log(`w ${w} min ${m}: ${row.join("  ")}`);
}
