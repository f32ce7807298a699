import type { SearchRanker } from "@capgate/registry";
import { createEmbedder } from "./embed.js";
import { createVectorIndex } from "./vector-index.js";
import { shippedVectorTable, type VectorTable } from "./vector-table.js";

export interface SemanticRankerOptions {
  /** Word vectors (default: the table shipped in this package). */
  table?: VectorTable;
  /** Share of the semantic similarity in the blended score (default 0.5). */
  weight?: number;
  /** Least similarity for a hit the lexical index did not find (default 0.5). */
  minSimilarity?: number;
}

/**
 * A ranker for `new Registry({ ranker })`: cosine similarity of SIF-weighted static word
 * vectors (GloVe-derived, 100 dimensions, 50,000 words, shipped as data), offline and on
 * the CPU. Each registry index it creates keeps one vector per document.
 */
export function createSemanticRanker(options: SemanticRankerOptions = {}): SearchRanker {
  const embedder = createEmbedder(options.table ?? shippedVectorTable());
  return {
    name: "semantic-sif-glove100",
    weight: options.weight ?? 0.5,
    minSimilarity: options.minSimilarity ?? 0.5,
    createIndex: () => createVectorIndex(embedder),
  };
}
