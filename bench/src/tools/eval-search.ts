// Quality of every search configuration on every retrieval set available (no timings):
// `pnpm --filter @capgate/bench eval-search`. The search bench module reports the same figures.
import { evaluateSet, metatoolSets, sgdSets } from "../lib/search-eval.js";

const f = (x: number) => x.toFixed(3);
for (const set of [...metatoolSets(), ...sgdSets()]) {
  const s = evaluateSet(set);
  for (const [level, scores] of Object.entries({ capability: s.capability, tool: s.tool })) {
    if (!scores) continue;
    for (const [system, r] of Object.entries(scores)) {
      console.log(
        `${set.name.padEnd(20)} ${level.padEnd(10)} ${system.padEnd(8)} R@1 ${f(r.r1)} R@5 ${f(r.r5)} R@10 ${f(r.r10)} MRR ${f(r.mrr)} (${r.queries} q)`,
      );
    }
  }
}
