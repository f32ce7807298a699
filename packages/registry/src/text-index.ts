import MiniSearch from "minisearch";
import { analyze, analyzeQuery } from "./analyze.js";

/** Where a field's text comes from: one string, several, or nothing. */
export type FieldExtractor<T> = (doc: T) => string | readonly string[] | undefined;

export interface TextIndexOptions<T> {
  /** A document's unique id. */
  id: (doc: T) => string;
  /** Field name → its text in a document. */
  fields: Record<string, FieldExtractor<T>>;
  /** Field name → relative weight (default 1). A match in a field of weight 3 counts three times as much. */
  weights?: Record<string, number>;
  /**
   * Let a query word of 3+ letters that no document contains match the index words it
   * begins (`conf` → `config`), at half weight. Default true.
   */
  prefix?: boolean;
  /** Let a query word of 6+ letters that no document contains match with one typo (`serach`), at 0.3 weight. Default true. */
  fuzzy?: boolean;
  /** BM25+ parameters (k saturation, b length normalisation, d floor); MiniSearch's defaults (1.2, 0.7, 0.5) otherwise. */
  bm25?: { k: number; b: number; d: number };
}

export interface TextHit {
  id: string;
  score: number;
}

/** A ranked full-text index over documents of any shape, with incremental add and remove. */
export interface TextIndex<T> {
  /** Index a document; throws when its id is already indexed (remove it first to replace it). */
  add(doc: T): void;
  /** Forget a document; false when the id was not indexed. */
  remove(id: string): boolean;
  has(id: string): boolean;
  readonly size: number;
  /** Best first, at most `limit` (default 10) hits with a positive score; ties by id. */
  search(query: string, limit?: number): TextHit[];
  /** Every document with a positive score for the query, by id (unordered): for ranking within a known set. */
  scores(query: string): Map<string, number>;
  /**
   * Scores of just these documents (BM25 per field with the index's weights and statistics,
   * and the same coordination), without searching the whole index: for ordering a few
   * known documents. Exact words only (no prefix or typo matching).
   */
  scoresOf(query: string, ids: Iterable<string>): Map<string, number>;
  clear(): void;
}

/**
 * How strongly matching more of the query's weight lifts a document: its BM25 score is
 * multiplied by (IDF of the query words it matched ÷ mean IDF of the query words)^0.35.
 * Measured on MetaTool against MiniSearch's own "× number of words matched": rarer words
 * count for more, and the gentler power keeps one lucky common word from dominating.
 */
const COORDINATION_POWER = 0.35;

interface Analysed {
  id: string;
  /** field → analysed terms */
  fields: Map<string, string[]>;
}

function textsOf<T>(extract: FieldExtractor<T>, doc: T): string[] {
  const value = extract(doc);
  if (value === undefined) return [];
  return typeof value === "string" ? [value] : [...value];
}

/** Keeps the best `size` hits seen so far (score descending, then id ascending), without sorting everything. */
class TopHits {
  readonly #size: number;
  readonly #hits: TextHit[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  static #before(a: TextHit, b: TextHit): boolean {
    return a.score > b.score || (a.score === b.score && a.id < b.id);
  }

  offer(id: string, score: number): void {
    const hits = this.#hits;
    const hit = { id, score };
    if (hits.length === this.#size && !TopHits.#before(hit, hits[hits.length - 1]!)) return;
    let i = hits.length;
    while (i > 0 && TopHits.#before(hit, hits[i - 1]!)) i--;
    hits.splice(i, 0, hit);
    if (hits.length > this.#size) hits.pop();
  }

  sorted(): TextHit[] {
    return [...this.#hits];
  }
}

const splitTerms = (text: string): string[] => (text === "" ? [] : text.split(" "));

/**
 * Create a ranked text index (BM25+ with field weights, on MiniSearch) that shares the
 * registry's analysis: identifier splitting, stop words, stemming, prefix and typo matching
 * for unknown words.
 */
export function createTextIndex<T>(options: TextIndexOptions<T>): TextIndex<T> {
  const fieldNames = Object.keys(options.fields);
  if (fieldNames.length === 0) throw new TypeError("createTextIndex: at least one field is required");
  const boost: Record<string, number> = {};
  for (const f of fieldNames) {
    const w = options.weights?.[f] ?? 1;
    if (!(Number.isFinite(w) && w >= 0)) throw new TypeError(`createTextIndex: weight of "${f}" must be ≥ 0`);
    boost[f] = w;
  }
  const docs = new Map<string, Analysed>();
  /** term → number of documents containing it, kept up to date on add and remove. */
  const df = new Map<string, number>();

  const usePrefix = options.prefix !== false;
  const useFuzzy = options.fuzzy !== false;
  // Prefix and typo matching are for query words the index does not contain ("conf",
  // "serach"): a known word is matched exactly only. That keeps ranking independent of the
  // page size and cheap, and, measured, widening known words does not improve ranking.
  const widen = {
    prefix: usePrefix ? (term: string) => term.length >= 3 && !df.has(term) : false,
    // 6+ (not 5+): a five-letter stem is usually a real word cut by Porter ("located" →
    // "locat"), and one edit away lies another word ("local").
    fuzzy: useFuzzy ? (term: string) => (term.length >= 6 && !df.has(term) ? 1 : false) : false,
  };

  // Documents arrive analysed (terms joined by spaces), so MiniSearch only splits them.
  const mini = new MiniSearch<Analysed>({
    fields: fieldNames,
    idField: "id",
    extractField: (doc, field) => (field === "id" ? doc.id : (doc.fields.get(field) ?? []).join(" ")),
    tokenize: splitTerms,
    processTerm: (term) => term,
    autoVacuum: true,
    searchOptions: {
      tokenize: splitTerms,
      processTerm: (term) => term,
      boost,
      combineWith: "OR",
      ...widen,
      weights: { fuzzy: 0.3, prefix: 0.5 },
      ...(options.bm25 ? { bm25: options.bm25 } : {}),
    },
  });

  function analyseDoc(doc: T, id: string): Analysed {
    const fields = new Map<string, string[]>();
    for (const f of fieldNames) {
      const extract = options.fields[f];
      fields.set(f, extract ? textsOf(extract, doc).flatMap(analyze) : []);
    }
    return { id, fields };
  }

  function uniqueTerms(doc: Analysed): Set<string> {
    const out = new Set<string>();
    for (const terms of doc.fields.values()) for (const t of terms) out.add(t);
    return out;
  }

  /** Sum of each field's length over all documents, for average field lengths. */
  const fieldTotals = new Map<string, number>(fieldNames.map((f) => [f, 0]));
  const bm = options.bm25 ?? { k: 1.2, b: 0.7, d: 0.5 };

  function scoreOne(
    doc: Analysed,
    terms: readonly string[],
    idfOf: Map<string, number>,
    meanIdf: number,
  ): number {
    let total = 0;
    let matched = 0;
    const seen = new Set<string>();
    for (const t of terms) {
      let termScore = 0;
      for (const f of fieldNames) {
        const fieldTerms = doc.fields.get(f)!;
        let tf = 0;
        for (const x of fieldTerms) if (x === t) tf++;
        if (tf === 0) continue;
        const avg = (fieldTotals.get(f) ?? 0) / Math.max(1, docs.size) || 1;
        const norm = tf + bm.k * (1 - bm.b + (bm.b * fieldTerms.length) / avg);
        termScore += boost[f]! * idfOf.get(t)! * (bm.d + (tf * (bm.k + 1)) / norm);
      }
      if (termScore > 0) {
        total += termScore;
        if (!seen.has(t)) {
          seen.add(t);
          matched += idfOf.get(t)!;
        }
      }
    }
    return total > 0 ? total * (matched / meanIdf) ** COORDINATION_POWER : 0;
  }

  function idf(term: string): number {
    const n = df.get(term) ?? 0;
    return Math.log(1 + (docs.size - n + 0.5) / (n + 0.5));
  }

  function scoreAll(query: string): Map<string, number> {
    const out = new Map<string, number>();
    // Repeated query words are kept: saying "price" twice is asking about price more.
    const terms = analyzeQuery(query, (t) => df.has(t));
    if (terms.length === 0 || docs.size === 0) return out;
    const idfOf = new Map<string, number>();
    for (const t of terms) if (!idfOf.has(t)) idfOf.set(t, idf(t));
    const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;
    for (const r of mini.search(terms.join(" "))) {
      let matched = 0;
      for (const t of r.queryTerms) matched += idfOf.get(t) ?? idf(t);
      // Undo MiniSearch's "× words matched" and apply the IDF-weighted coordination instead.
      const bm25 = r.score / Math.max(1, r.queryTerms.length);
      const score = bm25 * (matched / meanIdf) ** COORDINATION_POWER;
      if (score > 0) out.set(String(r.id), score);
    }
    return out;
  }

  return {
    add(doc) {
      const id = options.id(doc);
      if (typeof id !== "string") throw new TypeError("text index: a document id must be a string");
      if (docs.has(id)) throw new Error(`text index: a document with id "${id}" is already indexed`);
      const analysed = analyseDoc(doc, id);
      mini.add(analysed);
      docs.set(id, analysed);
      for (const [f, terms] of analysed.fields) fieldTotals.set(f, (fieldTotals.get(f) ?? 0) + terms.length);
      for (const t of uniqueTerms(analysed)) df.set(t, (df.get(t) ?? 0) + 1);
    },
    remove(id) {
      const doc = docs.get(id);
      if (!doc) return false;
      // discard() drops the document at once and cleans the index lazily: no rebuild.
      mini.discard(id);
      docs.delete(id);
      for (const [f, terms] of doc.fields) fieldTotals.set(f, (fieldTotals.get(f) ?? 0) - terms.length);
      for (const t of uniqueTerms(doc)) {
        const n = (df.get(t) ?? 1) - 1;
        if (n > 0) df.set(t, n);
        else df.delete(t);
      }
      return true;
    },
    has(id) {
      return docs.has(id);
    },
    get size() {
      return docs.size;
    },
    search(query, limit = 10) {
      const max = Math.max(0, Math.floor(limit));
      if (max === 0) return [];
      const top = new TopHits(max);
      for (const [id, score] of scoreAll(query)) top.offer(id, score);
      return top.sorted();
    },
    scores(query) {
      return scoreAll(query);
    },
    scoresOf(query, ids) {
      const out = new Map<string, number>();
      const terms = analyzeQuery(query, (t) => df.has(t));
      if (terms.length === 0) return out;
      const idfOf = new Map<string, number>();
      for (const t of terms) if (!idfOf.has(t)) idfOf.set(t, idf(t));
      const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;
      for (const id of ids) {
        const doc = docs.get(id);
        if (!doc) continue;
        const score = scoreOne(doc, terms, idfOf, meanIdf);
        if (score > 0) out.set(id, score);
      }
      return out;
    },
    clear() {
      mini.removeAll();
      docs.clear();
      df.clear();
      for (const f of fieldNames) fieldTotals.set(f, 0);
    },
  };
}
