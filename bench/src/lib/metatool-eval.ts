import type { Registry } from "@capgate/registry";
import type { MetaToolData } from "./metatool.js";

export interface RetrievalScores {
  r1: number;
  r5: number;
  r10: number;
  /** Mean reciprocal rank over the whole ranked list (0 when the tool is not returned). */
  mrr: number;
  queries: number;
}

/** Run every query whose label is indexed and score where the labelled tool's capability ranks. */
export function scoreRetrieval(
  registry: Registry,
  data: MetaToolData,
  capabilityOf: ReadonlyMap<string, string>,
): RetrievalScores {
  let r1 = 0;
  let r5 = 0;
  let r10 = 0;
  let mrr = 0;
  let n = 0;
  const depth = registry.size;
  for (const { query, tool } of data.queries) {
    const target = capabilityOf.get(tool);
    if (target === undefined || !registry.has(target)) continue;
    n++;
    const rank = registry.search(query, { limit: depth }).findIndex((h) => h.capability === target);
    if (rank < 0) continue;
    if (rank < 1) r1++;
    if (rank < 5) r5++;
    if (rank < 10) r10++;
    mrr += 1 / (rank + 1);
  }
  const d = Math.max(1, n);
  return { r1: r1 / d, r5: r5 / d, r10: r10 / d, mrr: mrr / d, queries: n };
}
