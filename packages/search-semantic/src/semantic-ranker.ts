import type { SearchRanker } from "@capgate/registry";
import { createEmbedder, type Embedder } from "./embed.js";
import { createVectorIndex } from "./vector-index.js";
import { shippedVectorTable, type VectorTable } from "./vector-table.js";

/**
 * Share of the similarity in the blend. Measured 0.5 / 0.65 / 0.8 on MetaTool (all and the
 * 50-tool subsets) and both SGD splits: more weight helps the subsets and SGD, 0.8 starts to
 * cost on all 199; 0.7 sits between (see docs/search.md).
 */
const DEFAULT_WEIGHT = 0.7;

/**
 * Least similarity for a hit only this ranker finds. Measured: 0.2 and 0.35 the same, 0.5
 * loses 5 points of R@5 on the MetaTool subsets; so 0.35, the highest that costs nothing.
 */
const DEFAULT_MIN_SIMILARITY = 0.35;

/**
 * Pseudo-relevance feedback: 5 documents, weight 0.5. Chosen on the tuning half of MetaTool
 * and SGD dev (3/0.3, 3/0.5, 5/0.5, 5/0.8 measured), and read on the held-out half and SGD
 * test only afterwards (docs/search.md).
 */
const DEFAULT_FEEDBACK = { docs: 5, weight: 0.5 };

export interface SemanticRankerOptions {
  /** Word vectors (default: the table shipped in this package). */
  table?: VectorTable;
  /** Share of the semantic similarity in the blended score (default 0.7). */
  weight?: number;
  /** Least similarity for a hit the lexical index did not find (default 0.35). */
  minSimilarity?: number;
  /**
   * Pseudo-relevance feedback: the query vector moves towards the mean of its `docs`
   * nearest documents by `weight` (default 5 documents, weight 0.5; `false` turns it off).
   */
  feedback?: { docs: number; weight: number } | false;
}

/**
 * A ranker for `new Registry({ ranker })`: cosine similarity of SIF-weighted static word
 * vectors (GloVe-derived, 100 dimensions, 50,000 words, shipped as data), offline and on
 * the CPU. Each registry index it creates keeps one vector per document.
 */
export function createSemanticRanker(options: SemanticRankerOptions = {}): SearchRanker {
  // The shipped table is parsed when the first index is made (the registry makes its
  // indexes on its first search), not when the ranker is: a process that never searches
  // never reads it.
  let embedder: Embedder | undefined;
  const embedderOnce = () => {
    embedder ??= createEmbedder(options.table ?? shippedVectorTable());
    return embedder;
  };
  const feedback = options.feedback === undefined ? DEFAULT_FEEDBACK : options.feedback;
  return {
    name: "semantic-sif-glove100",
    weight: options.weight ?? DEFAULT_WEIGHT,
    minSimilarity: options.minSimilarity ?? DEFAULT_MIN_SIMILARITY,
    createIndex: () => createVectorIndex(embedderOnce(), feedback ? { feedback } : {}),
  };
}
