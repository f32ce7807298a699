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
  /**
   * Query word → the index words it also asks for (`show` → `list`, `get`), matched at
   * `SYNONYM_WEIGHT` as other forms of that word: a document holding either earns the word's
   * coordination credit and coverage once, and a synonym the query also says itself is not
   * added again. Keys and values are words; they are analysed (stemmed) like any text.
   * Default none.
   */
  synonyms?: Readonly<Record<string, readonly string[]>>;
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
  /**
   * How much of the query the best hit matched, 0–1: the IDF of the query words it matched
   * (through any field, a prefix or a typo included) over the IDF of all of them. 1 says the
   * request is all in that document's words; 0 when nothing matches.
   */
  readonly coverage: number;
  /** The best `k` hits, best first, ties by id: a heap selection, not a sort of every match. */
  top(k: number): TextHit[];
  /** A document's score (0 when it does not match or is not indexed). */
  score(id: string): number;
}

/** Scores of a few known documents (`scoresOf`), by id; only positive scores are kept. */
export interface TextScores extends Map<string, number> {
  /** `TextQuery.coverage` among these documents: how much of the query the best of them holds. */
  readonly coverage: number;
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
  scoresOf(query: string, ids: Iterable<string>): TextScores;
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
 * Weight of a match through a synonym (`TextIndexOptions.synonyms`): a form of the word, as
 * uncertain as a prefix. Measured 0.5 and 1 with the registry's table: equal on the MCP and
 * SGD sets, and 1 costs MetaTool's lexical search up to a point of R@1 where 0.5 costs nothing.
 */
const SYNONYM_WEIGHT = 0.5;

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
  /** Field index → analysed terms, in order (the document's own arrays). */
  fields: ReadonlyArray<readonly string[]>;
}

/**
 * One term's postings: every (document, field) it occurs in, flattened four numbers per
 * entry (slot, field, term frequency, the field's distinct-term count in that document) so
 * a query reads one array per term. Entries of removed documents stay until compaction and
 * are skipped (their slot is no longer live).
 */
interface Posting {
  /** This index's number for the term: a slot in the per-field term counting scratch (`IndexState.tfScratch`). */
  id: number;
  /** Grown by doubling; only the first `length` numbers are entries. */
  entries: Int32Array<ArrayBuffer>;
  length: number;
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

/**
 * A text as one index counts it: its analysed terms, and each distinct term's posting with
 * the number of times the text says it (first occurrences first). Cached per index and text
 * (`IndexState.textTerms`), so a text that is in many documents (a capability's name and
 * description are in every one of its tools' documents) is analysed, counted and looked up
 * in the postings once, not once per document.
 */
interface TextTerms {
  terms: readonly string[];
  postings: Posting[];
  tfs: Int32Array;
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
  coverage: 0,
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
  const settings = settingsOf(options);
  const state = emptyState(settings.fieldCount);
  const scratch = emptyScratch();
  return {
    add(doc) {
      const id = options.id(doc);
      if (typeof id !== "string") throw new TypeError("text index: a document id must be a string");
      if (state.docs.has(id)) throw new Error(`text index: a document with id "${id}" is already indexed`);
      addDocument(state, settings, id, doc);
    },
    remove: (id) => removeDocument(state, id),
    has: (id) => state.docs.has(id),
    get size() {
      return state.docs.size;
    },
    search: (query, limit = 10) => evaluate(state, settings, scratch, query).top(limit),
    query: (query) => evaluate(state, settings, scratch, query),
    scores(query) {
      const q = evaluate(state, settings, scratch, query);
      return new Map(q.top(q.size).map((h) => [h.id, h.score]));
    },
    scoresOf: (query, ids) => scoresOf(state, settings, query, ids),
    clear: () => clearState(state),
  };
}

/** What the options fix for the index's life: fields and their weights, BM25's parameters, expansion. */
interface Settings<T> {
  fieldCount: number;
  boost: Float64Array;
  extractors: Array<FieldExtractor<T> | undefined>;
  exactField: boolean[];
  bm: { k: number; b: number; d: number };
  usePrefix: boolean;
  useFuzzy: boolean;
  /** Stem → the stems it also asks for. */
  synonyms: ReadonlyMap<string, readonly string[]>;
}

function settingsOf<T>(options: TextIndexOptions<T>): Settings<T> {
  const fieldNames = Object.keys(options.fields);
  if (fieldNames.length === 0) throw new TypeError("createTextIndex: at least one field is required");
  const fieldCount = fieldNames.length;
  const boost = new Float64Array(fieldCount);
  fieldNames.forEach((f, i) => {
    const w = options.weights?.[f] ?? 1;
    if (!(Number.isFinite(w) && w >= 0)) throw new TypeError(`createTextIndex: weight of "${f}" must be ≥ 0`);
    boost[i] = w;
  });
  return {
    fieldCount,
    boost,
    extractors: fieldNames.map((f) => options.fields[f]),
    exactField: fieldNames.map((f) => (options.exactFields ?? []).includes(f)),
    bm: options.bm25 ?? { k: 1.2, b: 0.7, d: 0.5 },
    usePrefix: options.prefix !== false,
    useFuzzy: options.fuzzy !== false,
    synonyms: synonymStems(options.synonyms),
  };
}

/** A synonym table by stems: `display` → `displa` → [`list`, `get`]; a word's own stem is dropped. */
function synonymStems(table: TextIndexOptions<unknown>["synonyms"]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [word, others] of Object.entries(table ?? {})) {
    if (!Array.isArray(others))
      throw new TypeError(`createTextIndex: synonyms of "${word}" must be an array of words`);
    for (const key of analyze(word)) {
      const list = out.get(key) ?? [];
      for (const other of others) {
        if (typeof other !== "string")
          throw new TypeError(`createTextIndex: synonyms of "${word}" must be words`);
        for (const t of analyze(other)) if (t !== key && !list.includes(t)) list.push(t);
      }
      if (list.length > 0) out.set(key, list);
    }
  }
  return out;
}

/** The inverted index: documents by id and by slot, posting lists, and the per-field totals BM25 needs. */
interface IndexState {
  readonly fieldCount: number;
  readonly docs: Map<string, Doc>;
  readonly postings: Map<string, Posting>;
  /** Slot → its live document, undefined once removed. */
  bySlot: Array<Doc | undefined>;
  /** Slots of removed documents whose entries are still in postings; reusable after compaction. */
  deadSlots: number[];
  readonly freeSlots: number[];
  deadEntries: number;
  liveEntries: number;
  /** Field → sum over documents of its distinct-term count (BM25's average length), and of its term count (for scoresOf). */
  readonly uniqueTotals: Float64Array;
  readonly termTotals: Float64Array;
  /** Sorted vocabulary for prefix and typo expansion of unknown words; rebuilt lazily after the vocabulary changes. */
  vocabulary: string[] | undefined;
  /** Bumped on every add and remove: a query's scratch scores are stale once it moves. */
  mutations: number;
  /**
   * Texts this index has counted (`TextTerms`), by the exact flag of the field: per index,
   * because they hold its postings. Bounded: emptied when full, and whenever a posting is
   * deleted (an entry may hold it).
   */
  readonly textTerms: [Map<string, TextTerms>, Map<string, TextTerms>];
  /** Posting id → how often the field being added says the term (zero between adds), for fields of several texts. */
  tfScratch: Int32Array<ArrayBuffer>;
  /** The postings with a count in `tfScratch`, in first-occurrence order. */
  readonly touched: Posting[];
  /** Posting ids of deleted postings, for reuse; ids stay below the vocabulary's largest size. */
  readonly freeIds: number[];
  nextId: number;
  /** Terms whose postings the add in progress created (taken back should it fail). */
  readonly created: string[];
  /** Field being added → the `TextTerms` of its texts (reused by every add). */
  readonly fieldTexts: TextTerms[][];
}

function emptyState(fieldCount: number): IndexState {
  return {
    fieldCount,
    docs: new Map(),
    postings: new Map(),
    bySlot: [],
    deadSlots: [],
    freeSlots: [],
    deadEntries: 0,
    liveEntries: 0,
    uniqueTotals: new Float64Array(fieldCount),
    termTotals: new Float64Array(fieldCount),
    vocabulary: undefined,
    mutations: 0,
    textTerms: [new Map(), new Map()],
    tfScratch: new Int32Array(64),
    touched: [],
    freeIds: [],
    nextId: 0,
    created: [],
    fieldTexts: Array.from({ length: fieldCount }, () => []),
  };
}

/** Per-slot scratch for evaluating a query, reused between queries (grown by doubling). */
interface Scratch {
  acc: Float64Array<ArrayBuffer>;
  matchedIdf: Float64Array<ArrayBuffer>;
  queryStamp: Float64Array<ArrayBuffer>;
  termStamp: Float64Array<ArrayBuffer>;
  /** Slot → final score of the latest query (valid where queryStamp is that query's). */
  finalScore: Float64Array<ArrayBuffer>;
  queries: number;
  termRounds: number;
}

function emptyScratch(): Scratch {
  return {
    acc: new Float64Array(64),
    matchedIdf: new Float64Array(64),
    queryStamp: new Float64Array(64),
    termStamp: new Float64Array(64),
    finalScore: new Float64Array(64),
    queries: 0,
    termRounds: 0,
  };
}

function ensureScratch(scratch: Scratch, slots: number): void {
  if (slots <= scratch.acc.length) return;
  let size = scratch.acc.length;
  while (size < slots) size *= 2;
  const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
    const b = new Float64Array(size);
    b.set(a);
    return b;
  };
  scratch.acc = grow(scratch.acc);
  scratch.matchedIdf = grow(scratch.matchedIdf);
  scratch.queryStamp = grow(scratch.queryStamp);
  scratch.termStamp = grow(scratch.termStamp);
  scratch.finalScore = grow(scratch.finalScore);
}

function idf(state: IndexState, term: string): number {
  const n = state.postings.get(term)?.df ?? 0;
  return Math.log(1 + (state.docs.size - n + 0.5) / (n + 0.5));
}

function sortedVocabulary(state: IndexState): string[] {
  // Exact forms (`=word`) are not words a prefix or a typo should reach.
  state.vocabulary ??= [...state.postings.keys()].filter((t) => !t.startsWith(EXACT_MARK)).sort();
  return state.vocabulary;
}

/** What a query word reaches: itself if indexed; if unknown, the words it begins (3+ letters) and those one typo away (6+). */
function expand<T>(state: IndexState, settings: Settings<T>, word: string): Expansion[] {
  const out: Expansion[] = [];
  if (state.postings.has(word)) {
    // A known word is matched exactly only: cheap, and independent of the page size.
    out.push({ term: word, weight: 1 });
    return out;
  }
  const prefixed = new Set<string>();
  if (settings.usePrefix && word.length >= 3) {
    const vocab = sortedVocabulary(state);
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
  if (settings.useFuzzy && word.length >= 6) {
    for (const term of sortedVocabulary(state)) {
      if (prefixed.has(term) || term === word || !withinOneEdit(word, term)) continue;
      out.push({ term, weight: (FUZZY_WEIGHT * term.length) / (term.length + 1) });
    }
  }
  return out;
}

/** A query's words: each stem once with how often it was asked, and the exact forms it was asked in. */
function queryWords(state: IndexState, query: string): { words: Map<string, QueryWord>; terms: QueryTerm[] } {
  // Repeated query words are kept: saying "price" twice is asking about price more.
  const terms = analyzeQueryTerms(query, (t) => state.postings.has(t));
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

/** Score every document a query reaches, term at a time into the scratch accumulator. */
function evaluate<T>(state: IndexState, settings: Settings<T>, scratch: Scratch, query: string): TextQuery {
  const { docs, postings, fieldCount } = state;
  const { words: occurrences, terms: queryTerms } = queryWords(state, query);
  const terms = queryTerms.map((t) => t.term);
  const n = docs.size;
  if (terms.length === 0 || n === 0) return EMPTY_QUERY;
  const idfOf = new Map<string, number>();
  for (const t of occurrences.keys()) idfOf.set(t, idf(state, t));
  const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;

  ensureScratch(scratch, state.bySlot.length);
  const { acc, matchedIdf, queryStamp, termStamp, finalScore } = scratch;
  const { bySlot } = state;
  const stamp = ++scratch.queries;
  const touched: number[] = [];
  const { k, b, d } = settings.bm;
  const boost = settings.boost;
  const kFixed = k * (1 - b);
  const kPerLength = new Float64Array(fieldCount);
  for (let f = 0; f < fieldCount; f++) kPerLength[f] = (k * b) / (state.uniqueTotals[f]! / n);
  const fieldFactor = new Float64Array(fieldCount);

  for (const [word, { count, exact }] of occurrences) {
    const round = ++scratch.termRounds;
    const wordIdf = idfOf.get(word)!;
    const reach = expand(state, settings, word).map(({ term, weight }) => ({ term, weight: weight * count }));
    for (const other of settings.synonyms.get(word) ?? [])
      if (!occurrences.has(other) && postings.has(other) && !reach.some((r) => r.term === other))
        reach.push({ term: other, weight: SYNONYM_WEIGHT * count });
    for (const [form, times] of exact)
      if (postings.has(form)) reach.push({ term: form, weight: EXACT_WEIGHT * times });
    for (const { term, weight } of reach) {
      const posting = postings.get(term)!;
      for (let f = 0; f < fieldCount; f++) {
        const nf = posting.fieldDf[f]!;
        fieldFactor[f] = weight * boost[f]! * Math.log(1 + (n - nf + 0.5) / (nf + 0.5));
      }
      const { entries, length } = posting;
      for (let e = 0; e < length; e += STRIDE) {
        const slot = entries[e]!;
        if (bySlot[slot] === undefined) continue;
        const f = entries[e + 1]!;
        const factor = fieldFactor[f]!;
        // A field weighted 0 does not take part at all (no score, no coordination credit).
        if (factor === 0) continue;
        const tf = entries[e + 2]!;
        const contribution = factor * (d + (tf * (k + 1)) / (tf + kFixed + kPerLength[f]! * entries[e + 3]!));
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
  let bestMatched = 0;
  for (const slot of touched) {
    const total = acc[slot]!;
    finalScore[slot] = 0;
    if (!(total > 0)) continue;
    const score = total * (matchedIdf[slot]! / meanIdf) ** COORDINATION_POWER;
    if (!(score > 0)) continue;
    finalScore[slot] = score;
    slots.push(slot);
    scores.push(score);
    // Of hits tied for best, the one matching more (so coverage does not depend on their order).
    if (score > best || (score === best && matchedIdf[slot]! > bestMatched)) {
      best = score;
      bestMatched = matchedIdf[slot]!;
    }
  }
  if (slots.length === 0) return EMPTY_QUERY;
  let queryIdf = 0;
  for (const v of idfOf.values()) queryIdf += v;
  const coverage = queryIdf > 0 ? Math.min(1, bestMatched / queryIdf) : 0;
  return rankedQuery(state, scratch, stamp, slots, scores, best, coverage);
}

/** A query's hits: the best `count` picked with a heap, and any document's score. */
function rankedQuery(
  state: IndexState,
  scratch: Scratch,
  stamp: number,
  slots: number[],
  scores: number[],
  best: number,
  coverage: number,
): TextQuery {
  const ids = slots.map((s) => state.bySlot[s]!.id);
  const version = state.mutations;
  let byId: Map<string, number> | undefined;
  const before = (x: number, y: number): boolean =>
    scores[x]! > scores[y]! || (scores[x] === scores[y] && ids[x]! < ids[y]!);
  return {
    size: ids.length,
    best,
    coverage,
    top(count) {
      return topIndices(ids.length, count, before).map((i) => ({ id: ids[i]!, score: scores[i]! }));
    },
    score(id) {
      // While no other query and no change ran since, the scratch still holds this query's scores.
      if (scratch.queries === stamp && state.mutations === version) {
        const slot = state.docs.get(id)?.slot;
        return slot !== undefined && scratch.queryStamp[slot] === stamp ? scratch.finalScore[slot]! : 0;
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
function compact(state: IndexState): void {
  const dead = new Set(state.deadSlots);
  for (const posting of state.postings.values()) {
    const { entries, length } = posting;
    let kept = 0;
    for (let e = 0; e < length; e += STRIDE) {
      if (dead.has(entries[e]!)) continue;
      entries.copyWithin(kept, e, e + STRIDE);
      kept += STRIDE;
    }
    posting.length = kept;
  }
  state.freeSlots.push(...state.deadSlots);
  state.deadSlots = [];
  state.deadEntries = 0;
}

/** Scores of the given documents only, each computed from its own analysed fields, not by searching. */
function scoresOf<T>(
  state: IndexState,
  settings: Settings<T>,
  query: string,
  ids: Iterable<string>,
): TextScores {
  const out = new Map<string, number>();
  const { words, terms: queryTerms } = queryWords(state, query);
  const terms = queryTerms.map((t) => t.term);
  if (terms.length === 0) return Object.assign(out, { coverage: 0 });
  const idfOf = new Map<string, number>();
  for (const t of terms) if (!idfOf.has(t)) idfOf.set(t, idf(state, t));
  const meanIdf = terms.reduce((sum, t) => sum + idfOf.get(t)!, 0) / terms.length || 1;
  let best = 0;
  let bestMatched = 0;
  for (const id of ids) {
    const doc = state.docs.get(id);
    if (!doc) continue;
    const { score, matched } = scoreOne(state, settings, doc, words, idfOf, meanIdf);
    if (!(score > 0)) continue;
    out.set(id, score);
    if (score > best || (score === best && matched > bestMatched)) {
      best = score;
      bestMatched = matched;
    }
  }
  let queryIdf = 0;
  for (const v of idfOf.values()) queryIdf += v;
  return Object.assign(out, { coverage: queryIdf > 0 ? Math.min(1, bestMatched / queryIdf) : 0 });
}

/** BM25+ of one term over a document's fields, with the index's field weights and statistics. */
function fieldScore<T>(state: IndexState, settings: Settings<T>, doc: Doc, t: string, idfT: number): number {
  const { bm, boost } = settings;
  let out = 0;
  for (let f = 0; f < state.fieldCount; f++) {
    const fieldTerms = doc.fields[f]!;
    let tf = 0;
    for (let i = 0; i < fieldTerms.length; i++) if (fieldTerms[i] === t) tf++;
    if (tf === 0) continue;
    const avg = state.termTotals[f]! / Math.max(1, state.docs.size) || 1;
    const norm = tf + bm.k * (1 - bm.b + (bm.b * fieldTerms.length) / avg);
    out += boost[f]! * idfT * (bm.d + (tf * (bm.k + 1)) / norm);
  }
  return out;
}

function scoreOne<T>(
  state: IndexState,
  settings: Settings<T>,
  doc: Doc,
  words: ReadonlyMap<string, QueryWord>,
  idfOf: Map<string, number>,
  meanIdf: number,
): { score: number; matched: number } {
  let total = 0;
  let matched = 0;
  for (const [t, { count, exact }] of words) {
    let termScore = count * fieldScore(state, settings, doc, t, idfOf.get(t)!);
    if (termScore > 0)
      for (const [form, times] of exact)
        termScore += EXACT_WEIGHT * times * fieldScore(state, settings, doc, form, idf(state, form));
    const others = settings.synonyms.get(t);
    if (others !== undefined)
      for (const other of others)
        if (!words.has(other))
          termScore += SYNONYM_WEIGHT * count * fieldScore(state, settings, doc, other, idf(state, other));
    if (termScore > 0) {
      total += termScore;
      matched += idfOf.get(t)!;
    }
  }
  return { score: total > 0 ? total * (matched / meanIdf) ** COORDINATION_POWER : 0, matched };
}

/**
 * The posting of a term, created (empty) when the index does not hold the term yet; its id
 * must be within `tfScratch` (`textTermsOf` grows it first). A posting created here gets its
 * first entry in the same add, or is taken back (`addDocument`).
 */
function postingOf(state: IndexState, term: string): Posting {
  let posting = state.postings.get(term);
  if (!posting) {
    const id = state.freeIds.pop() ?? state.nextId++;
    posting = {
      id,
      entries: new Int32Array(STRIDE),
      length: 0,
      fieldDf: new Int32Array(state.fieldCount),
      df: 0,
      lastAdd: -1,
    };
    state.postings.set(term, posting);
    state.created.push(term);
    state.vocabulary = undefined;
  }
  return posting;
}

/** A text's terms and their counts in this index (`TextTerms`), from the cache when it was counted before. */
function textTermsOf(state: IndexState, text: string, exact: boolean): TextTerms {
  const cache = state.textTerms[exact ? 1 : 0];
  let counted = cache.get(text);
  if (counted !== undefined) return counted;
  const terms = analyseCached(text, exact);
  // Room for an id per term, should every term be new.
  if (state.nextId + terms.length > state.tfScratch.length) {
    let size = state.tfScratch.length;
    while (size < state.nextId + terms.length) size *= 2;
    const grown = new Int32Array(size);
    grown.set(state.tfScratch);
    state.tfScratch = grown;
  }
  const { touched } = state;
  const tfs = state.tfScratch;
  for (const term of terms) {
    const posting = postingOf(state, term);
    if (tfs[posting.id] === 0) touched.push(posting);
    tfs[posting.id]!++;
  }
  counted = { terms, postings: touched.slice(), tfs: new Int32Array(touched.length) };
  for (let i = 0; i < touched.length; i++) {
    const id = touched[i]!.id;
    counted.tfs[i] = tfs[id]!;
    tfs[id] = 0;
  }
  touched.length = 0;
  if (cache.size >= RECENT_ANALYSES_MAX) cache.clear();
  cache.set(text, counted);
  return counted;
}
/** Add one entry (slot, field, term frequency, the field's distinct-term count) to a posting. */
function addEntry(
  state: IndexState,
  posting: Posting,
  slot: number,
  f: number,
  tf: number,
  distinct: number,
): void {
  const at = posting.length;
  if (at === posting.entries.length) {
    const grown = new Int32Array(at * 2);
    grown.set(posting.entries);
    posting.entries = grown;
  }
  const entries = posting.entries;
  entries[at] = slot;
  entries[at + 1] = f;
  entries[at + 2] = tf;
  entries[at + 3] = distinct;
  posting.length = at + STRIDE;
  posting.fieldDf[f]!++;
  state.liveEntries++;
  // Counted once per document, however many of its fields hold the term.
  if (posting.lastAdd !== state.mutations) {
    posting.lastAdd = state.mutations;
    posting.df++;
  }
}

/** Each field's texts counted (`TextTerms`), into `state.fieldTexts`; nothing else in the index changes should it throw. */
function countFields<T>(state: IndexState, settings: Settings<T>, doc: T): void {
  state.created.length = 0;
  try {
    for (let f = 0; f < state.fieldCount; f++) {
      const texts = state.fieldTexts[f]!;
      texts.length = 0;
      const extract = settings.extractors[f];
      const value = extract?.(doc);
      if (value === undefined) continue;
      const exact = settings.exactField[f]!;
      if (typeof value === "string") texts.push(textTermsOf(state, value, exact));
      else for (const text of value) texts.push(textTermsOf(state, text, exact));
    }
  } catch (error) {
    // A field that cannot be read or analysed: the postings made for the fields before it go.
    for (const term of state.created) dropPosting(state, term);
    throw error;
  }
}

function addDocument<T>(state: IndexState, settings: Settings<T>, id: string, doc: T): void {
  const { fieldCount } = state;
  state.mutations++;
  countFields(state, settings, doc);
  const slot = state.freeSlots.pop() ?? state.bySlot.length;
  const fields: Array<readonly string[]> = [];
  const entry: Doc = { id, slot, fields };
  state.docs.set(id, entry);
  state.bySlot[slot] = entry;
  for (let f = 0; f < fieldCount; f++) {
    const texts = state.fieldTexts[f]!;
    if (texts.length === 0) {
      fields.push([]);
      continue;
    }
    if (texts.length === 1) {
      // One text: its counts are the field's, and its cached terms are the field's terms.
      const { terms, postings, tfs } = texts[0]!;
      // A copy, not the cached array: each document's terms side by side in memory make the
      // per-document scoring of \`scoresOf\` (a hit's tools, every capability search) ~3%
      // faster per query than arrays shared across documents, measured side by side.
      fields.push(terms.slice());
      state.uniqueTotals[f]! += postings.length;
      state.termTotals[f]! += terms.length;
      for (let i = 0; i < postings.length; i++)
        addEntry(state, postings[i]!, slot, f, tfs[i]!, postings.length);
      texts.length = 0;
      continue;
    }
    // Several texts: their counts summed per term in the scratch, terms in first-occurrence order.
    const terms: string[] = [];
    const { touched } = state;
    const sums = state.tfScratch;
    for (const counted of texts) {
      for (const t of counted.terms) terms.push(t);
      for (let i = 0; i < counted.postings.length; i++) {
        const posting = counted.postings[i]!;
        if (sums[posting.id] === 0) touched.push(posting);
        sums[posting.id]! += counted.tfs[i]!;
      }
    }
    fields.push(terms);
    state.uniqueTotals[f]! += touched.length;
    state.termTotals[f]! += terms.length;
    for (const posting of touched) {
      addEntry(state, posting, slot, f, sums[posting.id]!, touched.length);
      sums[posting.id] = 0;
    }
    touched.length = 0;
    texts.length = 0;
  }
}

/** Delete a term's posting: its id is free again, and the counted texts that may hold it are forgotten. */
function dropPosting(state: IndexState, term: string): void {
  const posting = state.postings.get(term);
  if (!posting) return;
  state.postings.delete(term);
  state.freeIds.push(posting.id);
  state.textTerms[0].clear();
  state.textTerms[1].clear();
  state.vocabulary = undefined;
}

function removeDocument(state: IndexState, id: string): boolean {
  const doc = state.docs.get(id);
  if (!doc) return false;
  state.mutations++;
  state.docs.delete(id);
  state.bySlot[doc.slot] = undefined;
  state.deadSlots.push(doc.slot);
  const terms = new Set<string>();
  for (let f = 0; f < state.fieldCount; f++) {
    const unique = new Set(doc.fields[f]);
    state.uniqueTotals[f]! -= unique.size;
    state.termTotals[f]! -= doc.fields[f]!.length;
    for (const term of unique) {
      state.postings.get(term)!.fieldDf[f]!--;
      state.liveEntries--;
      state.deadEntries++;
      terms.add(term);
    }
  }
  for (const term of terms) {
    const posting = state.postings.get(term)!;
    if (--posting.df === 0) dropPosting(state, term);
  }
  // Dead entries cost a skip per query: purge them once they are a fifth of all entries.
  if (state.deadEntries > 4096 && state.deadEntries * 4 > state.liveEntries) compact(state);
  return true;
}

function clearState(state: IndexState): void {
  state.mutations++;
  state.docs.clear();
  state.postings.clear();
  state.bySlot = [];
  state.deadSlots = [];
  state.freeSlots.length = 0;
  state.deadEntries = 0;
  state.liveEntries = 0;
  state.uniqueTotals.fill(0);
  state.termTotals.fill(0);
  state.vocabulary = undefined;
  state.textTerms[0].clear();
  state.textTerms[1].clear();
  state.tfScratch.fill(0);
  state.freeIds.length = 0;
  state.nextId = 0;
}
