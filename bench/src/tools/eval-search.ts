// Quality of every search configuration on every retrieval set available (no timings):
// `pnpm --filter @capgate/bench eval-search [set-name-prefix …]`. The search bench module
// reports the same figures.
import { evaluateSet, mcpEvalsSets, metatoolSets, sgdSets } from "../lib/search-eval.js";

const only = process.argv.slice(2);
const wanted = (name: string) => only.length === 0 || only.some((p) => name.startsWith(p));
const f = (x: number) => x.toFixed(3);
const sets = [
  ...(only.length === 0 || only.some((p) => p.startsWith("metatool")) ? metatoolSets() : []),
  ...sgdSets(),
  ...mcpEvalsSets(),
];
for (const set of sets.filter((s) => wanted(s.name))) {
  const s = evaluateSet(set);
  for (const [level, scores] of Object.entries({ capability: s.capability, tool: s.tool })) {
    if (!scores) continue;
    for (const [system, r] of Object.entries(scores)) {
      console.log(
        `${set.name.padEnd(22)} ${level.padEnd(10)} ${system.padEnd(8)} R@1 ${f(r.r1)} R@5 ${f(r.r5)} R@10 ${f(r.r10)} MRR ${f(r.mrr)} (${r.queries} q)`,
      );
    }
  }
}
