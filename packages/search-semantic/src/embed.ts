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
/** A module constant: the build lowers a \p{…} literal to a `new RegExp` per call. */
const HAS_DIGIT = /\p{N}/u;

export interface Embedder {
  readonly dimensions: number;
  /** Unit vector of a text, or undefined when no word of it is known. */
  embed(texts: string | readonly string[]): Float32Array | undefined;
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

  /** A text's table rows in order (stop words dropped, unknown words segmented). */
  function rowsOf(text: string): number[] {
    const found: number[] = [];
    for (const token of tokenize(text)) {
      if (isStopWord(token)) continue;
      const row = table.row(token);
      if (row >= 0) found.push(row);
      else for (const r of segment(token)) found.push(r);
    }
    return found;
  }

  /**
   * A text's SIF-weighted sum of word vectors, before the common directions are removed:
   * a registration embeds the same texts more than once (a tool's description in its
   * capability's vector and in its own; the capability's name in every tool's), and a
   * vector's sum of texts is the sum of their sums, so each is computed once. Bounded:
   * emptied when full (4,096 × dimensions floats, 1.6 MB at 100).
   */
  const sumCache = new Map<string, Float32Array | null>();
  function sumOf(text: string): Float32Array | null {
    let sum = sumCache.get(text);
    if (sum === undefined) {
      const rows = rowsOf(text);
      if (rows.length === 0) sum = null;
      else {
        sum = new Float32Array(table.dimensions);
        for (const r of rows) table.addTo(sum, r, weightOf(r));
      }
      if (sumCache.size >= 4096) sumCache.clear();
      sumCache.set(text, sum);
    }
    return sum;
  }

  return {
    dimensions: table.dimensions,
    embed(texts) {
      const out = new Float32Array(table.dimensions);
      let any = false;
      for (const text of typeof texts === "string" ? [texts] : texts) {
        const sum = sumOf(text);
        if (sum === null) continue;
        for (let d = 0; d < out.length; d++) out[d]! += sum[d]!;
        any = true;
      }
      if (!any) return undefined;
      for (const u of remove) {
        let p = 0;
        for (let d = 0; d < out.length; d++) p += out[d]! * u[d]!;
        for (let d = 0; d < out.length; d++) out[d]! -= p * u[d]!;
      }
      let norm = 0;
      for (let d = 0; d < out.length; d++) norm += out[d]! * out[d]!;
      norm = Math.sqrt(norm);
      if (norm === 0) return undefined;
      for (let d = 0; d < out.length; d++) out[d]! /= norm;
      return out;
    },
  };
}
