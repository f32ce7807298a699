/**
 * An optional second ranking signal for the registry (for example semantic similarity from
 * word vectors, as `@capgate/search-semantic` provides). The registry stays data-free: it
 * only calls this interface, and without a ranker it ranks lexically alone.
 */

/** A capability or one tool, as the registry hands it to a ranker. */
export interface RankerDocument {
  id: string;
  /** Its texts, most important first: names (identifiers, e.g. `create_issue`) then descriptions. */
  texts: readonly string[];
}

/** One query, prepared once and asked about many documents. */
export interface RankerQuery {
  /** Similarity of an indexed document to the query, in [-1, 1]; undefined for an id not indexed. */
  similarity(id: string): number | undefined;
  /** Up to `k` indexed documents most similar to the query, best first (an index may answer approximately). */
  nearest(k: number): Array<{ id: string; similarity: number }>;
}

export interface RankerQueryOptions {
  /** Default true: the query may be refined from the index (e.g. pseudo-relevance feedback). */
  refine?: boolean;
}

/** A set of documents a ranker can score; updated one document at a time. */
export interface RankerIndex {
  add(doc: RankerDocument): void;
  remove(id: string): boolean;
  readonly size: number;
  /**
   * Prepare a query; undefined when the ranker can make nothing of it (no word it knows).
   * `options.refine: false` says the caller only compares a few known documents, so work
   * over the whole index (such as pseudo-relevance feedback) may be skipped.
   */
  query(text: string, options?: RankerQueryOptions): RankerQuery | undefined;
}

export interface SearchRanker {
  /** Shown in diagnostics, e.g. `semantic-sif-glove100`. */
  readonly name: string;
  /** A new, empty index. The registry keeps one for capabilities and one for tools. */
  createIndex(): RankerIndex;
  /**
   * Share of the ranker's similarity in the blended score, 0–1 (the lexical score, scaled
   * to the best lexical hit, has the rest). Default 0.5. The registry gives a query less of
   * it the more of the query its best lexical hit covers: `weight · (1 − coverage⁴)`.
   */
  readonly weight?: number;
  /**
   * A document the lexical index did not find is returned only when its similarity is at
   * least this (default 0.5): below it the ranker is guessing, and a guess is no answer.
   */
  readonly minSimilarity?: number;
}
