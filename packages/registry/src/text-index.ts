import { analyze, analyzeQueryTerms, EXACT_MARK, indexTerms, type QueryTerm } from "./analyze.js";
import { topIndices } from "./top-k.js";

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
  /**
   * Fields whose words are also indexed in their exact form (`=policies` beside `polici`), so
   * a query word written the same way scores above its other forms there. Meant for
   * identifiers (names), where the exact form carries meaning (`list_teams` lists,
   * `get_team` gets one); prose keeps stems only. Default none.
   */
  exactFields?: readonly string[];
  /** BM25+ parameters (k saturation, b length normalisation, d floor); MiniSearch's defaults (1.2, 0.7, 0.5) otherwise. */
  bm25?: { k: number; b: number; d: number };
}

export interface TextHit {
  id: string;
  score: number;
}

/** One evaluated query: the documents it matches with their scores. */
export interface TextQuery {
  /** How many documents have a positive score. */
  readonly size: number;
  /** The highest score (0 when nothing matches). */
  readonly best: number;
  /** The best `k` hits, best first, ties by id: a heap selection, not a sort of every match. */
  top(k: number): TextHit[];
  /** A document's score (0 when it does not match or is not indexed). */
  score(id: string): number;
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
   * Evaluate a query once (only the posting lists of its terms are read) and ask it for the
   * best hits or any one document's score, as often as needed.
   */
  query(query: string): TextQuery;
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

/** Weight of a match through a prefix of an unknown query word, and through one typo (scaled by length as below). */
const PREFIX_WEIGHT = 0.5;
const FUZZY_WEIGHT = 0.3;

/**
 * Weight of a match on a query word's exact form (`=policies`), on top of its stem's: an
 * exact match counts as a second, rarer word (measured: 0.3 keeps under half the gain on the
 * provider set; 1 costs nothing elsewhere once only plural query words carry an exact form).
 */
const EXACT_WEIGHT = 1;

/** A document as indexed: its analysed fields (for `scoresOf` and for removal). */
interface Doc {
  id: string;
  slot: number;
  /** Field index → analysed terms, in order. */
  fields: string[][];
}

/**
 * One term's postings: every (document, field) it occurs in, flattened four numbers per
 * entry (slot, field, term frequency, the field's distinct-term count in that document) so
 * a query reads one array per term. Entries of removed documents stay until compaction and
 * are skipped (their slot is no longer live).
 */
interface Posting {
  entries: number[];
  /** Field index → live documents with the term in that field (the per-field IDF's count). */
  fieldDf: Int32Array;
  /** Live documents with the term in any field (the coordination's IDF). */
  df: number;
  /** The `mutations` count of the add that wrote the latest entry (so df counts a document once, however many fields hold the term). */
  lastAdd: number;
}

const STRIDE = 4;

/** A distinct query stem: how many times the query says it, and in which exact forms. */
interface QueryWord {
  count: number;
  exact: Map<string, number>;
}

/** A query term and what it reaches in the index: itself, and for unknown words the terms it is a prefix of or one typo from. */
interface Expansion {
  term: string;
  weight: number;
}

function textsOf<T>(extract: FieldExtractor<T>, doc: T): string[] {
  const value = extract(doc);
  if (value === undefined) return [];
  return typeof value === "string" ? [value] : [...value];
}

/**
 * Recently analysed texts. A registration hands the same text to more than one index and
 * field (a tool's description is in the capability's document and in the tool's own; a
 * capability's description in each of its tools'), so this halves the analysis of a build.
 * Bounded: emptied when full. Entries are never mutated.
 */
const recentAnalyses = new Map<string, readonly string[]>();
const recentExact = new Map<string, readonly string[]>();
const RECENT_ANALYSES_MAX = 4096;

function analyseCached(text: string, exact: boolean): readonly string[] {
  const cache = exact ? recentExact : recentAnalyses;
  let terms = cache.get(text);
  if (terms === undefined) {
    terms = exact ? indexTerms(text) : analyze(text);
    if (cache.size >= RECENT_ANALYSES_MAX) cache.clear();
    cache.set(text, terms);
  }
  return terms;
}

function splitFieldTexts<T>(extract: FieldExtractor<T> | undefined, doc: T, exact: boolean): string[] {
  if (!extract) return [];
  const out: string[] = [];
  for (const text of textsOf(extract, doc)) for (const term of analyseCached(text, exact)) out.push(term);
  return out;
}

/** Whether two strings are at most one insertion, deletion or substitution apart (Levenshtein ≤ 1). */
function withinOneEdit(a: string, b: string): boolean {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > 1) return false;
  let i = 0;
  while (i < la && i < lb && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (la === lb) return a.slice(i + 1) === b.slice(i + 1);
  return la > lb ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

const EMPTY_QUERY: TextQuery = Object.freeze({
  size: 0,
  best: 0,
  top: () => [],
  score: () => 0,
});

/**
 * Create a ranked text index (BM25+ per field with field weights, an own inverted index)
 * that shares the registry's analysis: identifier splitting, stop words, stemming, prefix
 * and typo matching for unknown words. A query reads only the posting lists of its terms
 * (term at a time into a score accumulator) and picks its best hits with a heap; adding and
 * removing a document touch only that document's terms.
 *
 * Scoring (the numbers MiniSearch 7, which this index replaced, gives for the same options):
 * for each query word w and each index term t it reaches (t = w, weight 1; for an unknown w
 * the terms it prefixes, weight 0.5·|t|/(|t| + 0.3·(|t|−|w|)), and those one edit away,
 * 0.3·|t|/(|t|+1)), and each field f holding t,
 *   weight · boost_f · idf_f(t) · (d + tf·(k+1) / (tf + k·(1 − b + b·len_f/avglen_f)))
 * with idf_f(t) = ln(1 + (N − n_f(t) + 0.5)/(n_f(t) + 0.5)) over the documents holding t in
 * field f, len_f the field's number of distinct terms; summed, then multiplied by the
 * IDF-weighted coordination (COORDINATION_POWER above).
 */
export function createTextIndex<T>(options: TextIndexOptions<T>): TextIndex<T> {
  const fieldNames = Object.keys(options.fields);
  if (fieldNames.length === 0) throw new TypeError("createTextIndex: at least one field is required");
  const fieldCount = fieldNames.length;
  const boost = new Float64Array(fieldCount);
  fieldNames.forEach((f, i) => {
    const w = options.weights?.[f] ?? 1;
    if (!(Number.isFinite(w) && w >= 0)) throw new TypeError(`createTextIndex: weight of "${f}" must be ≥ 0`);
    boost[i] = w;
  });
  const extractors = fieldNames.map((f) => options.fields[f]);
  const exactField = fieldNames.map((f) => (options.exactFields ?? []).includes(f));
  const bm = options.bm25 ?? { k: 1.2, b: 0.7, d: 0.5 };
  const usePrefix = options.prefix !== false;
  const useFuzzy = options.fuzzy !== false;

  const docs = new Map<string, Doc>();
  const postings = new Map<string, Posting>();
  /** Slot → its live document, undefined once removed. */
  let bySlot: Array<Doc | undefined> = [];
  /** Slots of removed documents whose entries are still in postings; reusable after compaction. */
  let deadSlots: number[] = [];
  const freeSlots: number[] = [];
  let deadEntries = 0;
  let liveEntries = 0;
  /** Field → sum over documents of its distinct-term count (BM25's average length), and of its term count (for scoresOf). */
  const uniqueTotals = new Float64Array(fieldCount);
  const termTotals = new Float64Array(fieldCount);
  /** Sorted vocabulary for prefix and typo expansion of unknown words; rebuilt lazily after the vocabulary changes. */
  let vocabulary: string[] | undefined;

  // Per-slot scratch for evaluating a query, reused between queries (grown by doubling).
  let acc = new Float64Array(64);
  let matchedIdf = new Float64Array(64);
  let queryStamp = new Float64Array(64);
  let termStamp = new Float64Array(64);
  /** Slot → final score of the latest query (valid where queryStamp is that query's). */
  let finalScore = new Float64Array(64);
  let queries = 0;
  /** Bumped on every add and remove: a query's scratch scores are stale once it moves. */
  let mutations = 0;
  let termRounds = 0;

  function ensureScratch(slots: number): void {
    if (slots <= acc.length) return;
    let size = acc.length;
    while (size < slots) size *= 2;
    const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    acc = grow(acc);
    matchedIdf = grow(matchedIdf);
    queryStamp = grow(queryStamp);
    termStamp = grow(termStamp);
    finalScore = grow(finalScore);
  }

  function idf(term: string): number {
    const n = postings.get(term)?.df ?? 0;
    return Math.log(1 + (docs.size - n + 0.5) / (n + 0.5));
  }

  function sortedVocabulary(): string[] {
    // Exact forms (`=word`) are not words a prefix or a typo should reach.
    vocabulary ??= [...postings.keys()].filter((t) => !t.startsWith(EXACT_MARK)).sort();
    return vocabulary;
  }

  /** What a query word reaches: itself if indexed; if unknown, the words it begins (3+ letters) and those one typo away (6+). */
  function expand(word: string): Expansion[] {
    const out: Expansion[] = [];
    if (postings.has(word)) {
      // A known word is matched exactly only: cheap, and independent of the page size.
      out.push({ term: word, weight: 1 });
      return out;
    }
    const prefixed = new Set<string>();
    if (usePrefix && word.length >= 3) {
      const vocab = sortedVocabulary();
      let lo = 0;
      let hi = vocab.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (vocab[mid]! < word) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < vocab.length && vocab[i]!.startsWith(word); i++) {
        const term = vocab[i]!;
        const distance = term.length - word.length;
        prefixed.add(term);
        out.push({ term, weight: (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance) });
      }
    }
    // 6+ (not 5+): a five-letter stem is usually a real word cut by Porter ("located" →
    // "locat"), and one edit away lies another word ("local").
    if (useFuzzy && word.length >= 6) {
      for (const term of sortedVocabulary()) {
        if (prefixed.has(term) || term === word || !withinOneEdit(word, term)) continue;
        out.push({ term, weight: (FUZZY_WEIGHT * term.length) / (term.length + 1) });
      }
    }
    return out;
  }

  /** A query's words: each stem once with how often it was asked, and the exact forms it was asked in. */
  function queryWords(query: string): { words: Map<string, QueryWord>; terms: QueryTerm[] } {
    // Repeated query words are kept: saying "price" twice is asking about price more.
    const terms = analyzeQueryTerms(query, (t) => postings.has(t));
    const words = new Map<string, QueryWord>();
    for (const { term, exact } of terms) {
      let w = words.get(term);
      if (!w) {
        w = { count: 0, exact: new Map() };
        words.set(term, w);
      }
      w.count++;
      if (exact !== undefined) w.exact.set(exact, (w.exact.get(exact) ?? 0) + 1);
    }
    return { words, terms };
  }

  function evaluate(query: string): TextQuery {
    const { words: occurrences, terms: queryTerms } = queryWords(query);
    const terms = queryTerms.map((t) => t.term);
    const n = docs.size;
    if (terms.length === 0 || n === 0) return EMPTY_QUERY;
    const idfOf = new Map<string, number>();
    for (const t of occurrences.keys()) idfOf.set(t, idf(t));
    const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;

    ensureScratch(bySlot.length);
    const stamp = ++queries;
    const touched: number[] = [];
    const { k, b, d } = bm;
    const kFixed = k * (1 - b);
    const kPerLength = new Float64Array(fieldCount);
    for (let f = 0; f < fieldCount; f++) kPerLength[f] = (k * b) / (uniqueTotals[f]! / n);
    const fieldFactor = new Float64Array(fieldCount);

    for (const [word, { count, exact }] of occurrences) {
      const round = ++termRounds;
      const wordIdf = idfOf.get(word)!;
      const reach = expand(word).map(({ term, weight }) => ({ term, weight: weight * count }));
      for (const [form, times] of exact)
        if (postings.has(form)) reach.push({ term: form, weight: EXACT_WEIGHT * times });
      for (const { term, weight } of reach) {
        const posting = postings.get(term)!;
        for (let f = 0; f < fieldCount; f++) {
          const nf = posting.fieldDf[f]!;
          fieldFactor[f] = weight * boost[f]! * Math.log(1 + (n - nf + 0.5) / (nf + 0.5));
        }
        const entries = posting.entries;
        for (let e = 0; e < entries.length; e += STRIDE) {
          const slot = entries[e]!;
          if (bySlot[slot] === undefined) continue;
          const f = entries[e + 1]!;
          const factor = fieldFactor[f]!;
          // A field weighted 0 does not take part at all (no score, no coordination credit).
          if (factor === 0) continue;
          const tf = entries[e + 2]!;
          const contribution =
            factor * (d + (tf * (k + 1)) / (tf + kFixed + kPerLength[f]! * entries[e + 3]!));
          if (queryStamp[slot] !== stamp) {
            queryStamp[slot] = stamp;
            acc[slot] = 0;
            matchedIdf[slot] = 0;
            touched.push(slot);
          }
          acc[slot]! += contribution;
          if (termStamp[slot] !== round) {
            termStamp[slot] = round;
            matchedIdf[slot]! += wordIdf;
          }
        }
      }
    }

    const slots: number[] = [];
    const scores: number[] = [];
    let best = 0;
    for (const slot of touched) {
      const total = acc[slot]!;
      finalScore[slot] = 0;
      if (!(total > 0)) continue;
      const score = total * (matchedIdf[slot]! / meanIdf) ** COORDINATION_POWER;
      if (!(score > 0)) continue;
      finalScore[slot] = score;
      slots.push(slot);
      scores.push(score);
      if (score > best) best = score;
    }
    if (slots.length === 0) return EMPTY_QUERY;
    const ids = slots.map((s) => bySlot[s]!.id);
    const version = mutations;
    let byId: Map<string, number> | undefined;
    const before = (x: number, y: number): boolean =>
      scores[x]! > scores[y]! || (scores[x] === scores[y] && ids[x]! < ids[y]!);
    return {
      size: ids.length,
      best,
      top(count) {
        return topIndices(ids.length, count, before).map((i) => ({ id: ids[i]!, score: scores[i]! }));
      },
      score(id) {
        // While no other query and no change ran since, the scratch still holds this query's scores.
        if (queries === stamp && mutations === version) {
          const slot = docs.get(id)?.slot;
          return slot !== undefined && queryStamp[slot] === stamp ? finalScore[slot]! : 0;
        }
        if (!byId) {
          byId = new Map();
          for (let i = 0; i < ids.length; i++) byId.set(ids[i]!, scores[i]!);
        }
        return byId.get(id) ?? 0;
      },
    };
  }

  /** Drop the entries of removed documents from every posting list, so their slots can be reused. */
  function compact(): void {
    const dead = new Set(deadSlots);
    for (const posting of postings.values()) {
      const kept: number[] = [];
      const entries = posting.entries;
      for (let e = 0; e < entries.length; e += STRIDE) {
        if (dead.has(entries[e]!)) continue;
        kept.push(entries[e]!, entries[e + 1]!, entries[e + 2]!, entries[e + 3]!);
      }
      posting.entries = kept;
    }
    freeSlots.push(...deadSlots);
    deadSlots = [];
    deadEntries = 0;
  }

  function scoreOne(
    doc: Doc,
    words: ReadonlyMap<string, QueryWord>,
    idfOf: Map<string, number>,
    meanIdf: number,
  ): number {
    let total = 0;
    let matched = 0;
    const fieldScore = (t: string, idfT: number): number => {
      let out = 0;
      for (let f = 0; f < fieldCount; f++) {
        const fieldTerms = doc.fields[f]!;
        let tf = 0;
        for (const x of fieldTerms) if (x === t) tf++;
        if (tf === 0) continue;
        const avg = termTotals[f]! / Math.max(1, docs.size) || 1;
        const norm = tf + bm.k * (1 - bm.b + (bm.b * fieldTerms.length) / avg);
        out += boost[f]! * idfT * (bm.d + (tf * (bm.k + 1)) / norm);
      }
      return out;
    };
    for (const [t, { count, exact }] of words) {
      let termScore = count * fieldScore(t, idfOf.get(t)!);
      if (termScore > 0) {
        for (const [form, times] of exact) termScore += EXACT_WEIGHT * times * fieldScore(form, idf(form));
        total += termScore;
        matched += idfOf.get(t)!;
      }
    }
    return total > 0 ? total * (matched / meanIdf) ** COORDINATION_POWER : 0;
  }

  const termCounts = new Map<string, number>();
  const index: TextIndex<T> = {
    add(doc) {
      const id = options.id(doc);
      if (typeof id !== "string") throw new TypeError("text index: a document id must be a string");
      if (docs.has(id)) throw new Error(`text index: a document with id "${id}" is already indexed`);
      mutations++;
      const fields = extractors.map((extract, f) => splitFieldTexts(extract, doc, exactField[f]!));
      const slot = freeSlots.pop() ?? bySlot.length;
      const entry: Doc = { id, slot, fields };
      docs.set(id, entry);
      bySlot[slot] = entry;
      for (let f = 0; f < fieldCount; f++) {
        // One map for every field of every add: a registration adds thousands of documents.
        const tfs = termCounts;
        tfs.clear();
        for (const t of fields[f]!) tfs.set(t, (tfs.get(t) ?? 0) + 1);
        uniqueTotals[f]! += tfs.size;
        termTotals[f]! += fields[f]!.length;
        for (const [term, tf] of tfs) {
          let posting = postings.get(term);
          if (!posting) {
            posting = { entries: [], fieldDf: new Int32Array(fieldCount), df: 0, lastAdd: -1 };
            postings.set(term, posting);
            vocabulary = undefined;
          }
          posting.entries.push(slot, f, tf, tfs.size);
          posting.fieldDf[f]!++;
          liveEntries++;
          // Counted once per document, however many of its fields hold the term.
          if (posting.lastAdd !== mutations) {
            posting.lastAdd = mutations;
            posting.df++;
          }
        }
      }
    },
    remove(id) {
      const doc = docs.get(id);
      if (!doc) return false;
      mutations++;
      docs.delete(id);
      bySlot[doc.slot] = undefined;
      deadSlots.push(doc.slot);
      const terms = new Set<string>();
      for (let f = 0; f < fieldCount; f++) {
        const unique = new Set(doc.fields[f]);
        uniqueTotals[f]! -= unique.size;
        termTotals[f]! -= doc.fields[f]!.length;
        for (const term of unique) {
          postings.get(term)!.fieldDf[f]!--;
          liveEntries--;
          deadEntries++;
          terms.add(term);
        }
      }
      for (const term of terms) {
        const posting = postings.get(term)!;
        if (--posting.df === 0) {
          postings.delete(term);
          vocabulary = undefined;
        }
      }
      // Dead entries cost a skip per query: purge them once they are a fifth of all entries.
      if (deadEntries > 4096 && deadEntries * 4 > liveEntries) compact();
      return true;
    },
    has(id) {
      return docs.has(id);
    },
    get size() {
      return docs.size;
    },
    search(query, limit = 10) {
      return evaluate(query).top(limit);
    },
    query(query) {
      return evaluate(query);
    },
    scores(query) {
      const q = evaluate(query);
      return new Map(q.top(q.size).map((h) => [h.id, h.score]));
    },
    scoresOf(query, ids) {
      const out = new Map<string, number>();
      const { words, terms: queryTerms } = queryWords(query);
      const terms = queryTerms.map((t) => t.term);
      if (terms.length === 0) return out;
      const idfOf = new Map<string, number>();
      for (const t of terms) if (!idfOf.has(t)) idfOf.set(t, idf(t));
      const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;
      for (const id of ids) {
        const doc = docs.get(id);
        if (!doc) continue;
        const score = scoreOne(doc, words, idfOf, meanIdf);
        if (score > 0) out.set(id, score);
      }
      return out;
    },
    clear() {
      mutations++;
      docs.clear();
      postings.clear();
      bySlot = [];
      deadSlots = [];
      freeSlots.length = 0;
      deadEntries = 0;
      liveEntries = 0;
      uniqueTotals.fill(0);
      termTotals.fill(0);
      vocabulary = undefined;
    },
  };
  return index;
}
