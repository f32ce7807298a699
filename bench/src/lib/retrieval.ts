import type { CapabilityManifest } from "@capgate/schema";

/** A tool-retrieval set: manifests, and queries each with the capabilities and tools that answer it. */
export interface RetrievalSet {
  name: string;
  manifests: CapabilityManifest[];
  queries: Array<{ query: string; capabilities: ReadonlySet<string>; tools?: ReadonlySet<string> }>;
  /**
   * When the set is MCP servers' tool lists: registered with `registerMcpServer` as a host
   * registers configured servers (`manifests` then holds their `mcp:<server>` manifests, for BM25).
   */
  mcpServers?: Array<{ name: string; tools: readonly unknown[]; instructions?: string }>;
  note?: string;
}

export interface RetrievalScores {
  r1: number;
  r5: number;
  r10: number;
  /** Mean reciprocal rank over the whole ranked list (0 when nothing right is returned). */
  mrr: number;
  queries: number;
}

/** A system under test: ranked ids (capability or tool names) for a query. */
export type Retriever = (query: string) => readonly string[];

/** R@k: the share of queries with a right id among the first k; MRR over the first right one. */
export function score(
  queries: RetrievalSet["queries"],
  retrieve: Retriever,
  targetsOf: (q: RetrievalSet["queries"][number]) => ReadonlySet<string> | undefined,
): RetrievalScores {
  let r1 = 0;
  let r5 = 0;
  let r10 = 0;
  let mrr = 0;
  let n = 0;
  for (const q of queries) {
    const targets = targetsOf(q);
    if (!targets || targets.size === 0) continue;
    n++;
    const rank = retrieve(q.query).findIndex((id) => targets.has(id));
    if (rank < 0) continue;
    if (rank < 1) r1++;
    if (rank < 5) r5++;
    if (rank < 10) r10++;
    mrr += 1 / (rank + 1);
  }
  const d = Math.max(1, n);
  return { r1: r1 / d, r5: r5 / d, r10: r10 / d, mrr: mrr / d, queries: n };
}
