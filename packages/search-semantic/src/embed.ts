import { isStopWord, tokenize } from "@capgate/registry";
import type { VectorTable } from "./vector-table.js";

/**
 * Sentence vectors from word vectors, the SIF way (Arora et al., 2017, "A simple but
 * tough-to-beat baseline for sentence embeddings"): the average of the words' vectors, each
 * weighted a / (a + p(word)), so frequent words count little and rare ones much. p(word) is
 * estimated from the word's frequency rank in the source vocabulary by Zipf's law
 * (p ∝ 1 / rank), since GloVe's vocabulary is ordered by corpus frequency. The directions
 * every such average shares (the table's common directions) are then projected out, so
 * what is left is what the text is about.
 */
export const SIF_A = 1e-3;

/** Out-of-vocabulary words are segmented into known words only when this long, with pieces at least this long. */
const SEGMENT_MIN_WORD = 6;
const SEGMENT_MIN_PIECE = 3;
const SEGMENT_MAX_PIECE = 20;
/** Texts whose word-vector sums an embedder keeps (`sumOf`). */
const SUM_CACHE_MAX = 4096;
/** A module constant: the build lowers a \p{…} literal to a `new RegExp` per call. */
const HAS_DIGIT = /\p{N}/u;

export interface Embedder {
  readonly dimensions: number;
  /** Unit vector of a text, or undefined when no word of it is known. */
  embed(texts: string | readonly string[]): Float32Array | undefined;
  /**
   * `embed` written into `out` at `offset` (`dimensions` floats, which must be zero), without
   * a vector of its own: an index keeps its vectors in one pool. False (and those floats
   * left in any state) when `embed` gives undefined.
   */
  embedInto(texts: string | readonly string[], out: Float32Array, offset: number): boolean;
}

export function createEmbedder(table: VectorTable): Embedder {
  const harmonic = Math.log(table.sourceSize) + 0.5772;
  const weightOf = (row: number): number => {
    const p = 1 / (table.rank(row) * harmonic);
    return SIF_A / (SIF_A + p);
  };
  const segmentCache = new Map<string, number[]>();
  const remove = table.commonDirections;

  /**
   * Rows for a word the table lacks: identifiers are already split by the tokenizer
   * (`create_issue`, `readFile`); a run-together word (`airweatherdata`, `webhook`) is cut
   * into known words by the segmentation of least Zipf cost (Σ log rank), if one exists.
   */
  function segment(word: string): number[] {
    const cached = segmentCache.get(word);
    if (cached) return cached;
    let rows: number[] = [];
    if (word.length >= SEGMENT_MIN_WORD && !HAS_DIGIT.test(word)) {
      const n = word.length;
      const cost = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
      const back = new Int32Array(n + 1).fill(-1);
      const rowAt = new Int32Array(n + 1).fill(-1);
      cost[0] = 0;
      for (let end = SEGMENT_MIN_PIECE; end <= n; end++) {
        for (let start = Math.max(0, end - SEGMENT_MAX_PIECE); start <= end - SEGMENT_MIN_PIECE; start++) {
          if (!Number.isFinite(cost[start]!)) continue;
          const row = table.row(word.slice(start, end));
          if (row < 0) continue;
          const c = cost[start]! + Math.log(table.rank(row) + 1);
          if (c < cost[end]!) {
            cost[end] = c;
            back[end] = start;
            rowAt[end] = row;
          }
        }
      }
      if (Number.isFinite(cost[n]!)) {
        for (let end = n; end > 0; end = back[end]!) rows.push(rowAt[end]!);
        rows = rows.reverse();
      }
    }
    if (segmentCache.size > 20_000) segmentCache.clear();
    segmentCache.set(word, rows);
    return rows;
  }

  const dims = table.dimensions;

  /**
   * A text's SIF-weighted sum of word vectors (its table rows in order, stop words dropped,
   * unknown words segmented), before the common directions are removed: a registration
   * embeds the same texts more than once (a tool's description in its capability's vector
   * and in its own; the capability's name in every tool's), and a vector's sum of texts is
   * the sum of their sums, so each is computed once. Bounded: emptied when full. The sums
   * live in one slab (`SUM_CACHE_MAX` × dimensions floats, 1.6 MB at 100), not a vector
   * each: a registration sums tens of thousands of texts.
   */
  const sumCache = new Map<string, number>();
  let slab: Float32Array | undefined;
  let slabUsed = 0;
  /** One sum being computed (then copied into the slab), so the slab holds only whole sums. */
  const scratch = new Float32Array(dims);
  /** Where a text's sum is in the slab, or -1 when no word of it is known. */
  function sumOf(text: string): number {
    let at = sumCache.get(text);
    if (at === undefined) {
      scratch.fill(0);
      let found = false;
      for (const token of tokenize(text)) {
        if (isStopWord(token)) continue;
        const row = table.row(token);
        if (row >= 0) {
          table.addTo(scratch, row, weightOf(row));
          found = true;
        } else {
          for (const r of segment(token)) {
            table.addTo(scratch, r, weightOf(r));
            found = true;
          }
        }
      }
      if (sumCache.size >= SUM_CACHE_MAX) {
        sumCache.clear();
        slabUsed = 0;
      }
      if (found) {
        slab ??= new Float32Array(SUM_CACHE_MAX * dims);
        at = slabUsed;
        slab.set(scratch, at);
        slabUsed += dims;
      } else at = -1;
      sumCache.set(text, at);
    }
    return at;
  }

  /** Add one text's sum into `out` at `offset`; false when no word of it is known. */
  function addSum(text: string, out: Float32Array, offset: number): boolean {
    const at = sumOf(text);
    if (at < 0) return false;
    const sums = slab!;
    for (let d = 0; d < dims; d++) out[offset + d]! += sums[at + d]!;
    return true;
  }

  function embedInto(texts: string | readonly string[], out: Float32Array, offset: number): boolean {
    let any = false;
    if (typeof texts === "string") any = addSum(texts, out, offset);
    else for (const text of texts) if (addSum(text, out, offset)) any = true;
    if (!any) return false;
    const end = offset + dims;
    for (const u of remove) {
      let p = 0;
      for (let d = 0; d < dims; d++) p += out[offset + d]! * u[d]!;
      for (let d = 0; d < dims; d++) out[offset + d]! -= p * u[d]!;
    }
    let norm = 0;
    for (let i = offset; i < end; i++) norm += out[i]! * out[i]!;
    norm = Math.sqrt(norm);
    if (norm === 0) return false;
    for (let i = offset; i < end; i++) out[i]! /= norm;
    return true;
  }

  return {
    dimensions: dims,
    embed(texts) {
      const out = new Float32Array(dims);
      return embedInto(texts, out, 0) ? out : undefined;
    },
    embedInto,
  };
}
