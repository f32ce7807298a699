// Builds the shipped vector table from a parsed wink-embeddings-style source. Pure: the
// same source and options give the same bytes, so the committed table can be checked.
import { createHash } from "node:crypto";

/** File layout (little-endian): see src/vector-table.ts, which reads it. */
export const MAGIC = "CGVT";
export const FORMAT_VERSION = 1;

/** Words our tokenizer can produce: lowercase letters of any script and digits, at least one letter. */
const WORD = /^[\p{Ll}\p{Lo}\p{N}]*[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}]*$/u;

/**
 * @param {{ words: string[], vectors: Record<string, number[]>, dimensions: number }} source
 *   words in frequency order (most frequent first), each vector `dimensions` numbers long.
 * @param {{ maxWords: number, directions?: number, directionRows?: number }} options
 *   directions: how many common directions to compute and store (see commonDirections).
 * @returns {{ bytes: Buffer, words: number, sha256: string }}
 */
export function buildVectorTable(source, { maxWords, directions = 0, directionRows = 20_000 }) {
  const dims = source.dimensions;
  if (!Number.isInteger(dims) || dims <= 0 || dims > 1024) throw new Error(`bad dimensions ${dims}`);
  const kept = [];
  // Frequency rank in the source (1-based, over every entry, punctuation included) is
  // kept per word: the ranker turns it into the SIF weight a / (a + p(word)).
  const ranks = [];
  for (let i = 0; i < source.words.length && kept.length < maxWords; i++) {
    const w = source.words[i];
    if (typeof w !== "string" || !WORD.test(w) || w.length > 40) continue;
    const v = source.vectors[w];
    if (!Array.isArray(v) || v.length < dims) continue;
    kept.push(w);
    ranks.push(i + 1);
  }
  const n = kept.length;
  const wordBytes = Buffer.from(kept.join("\n"), "utf8");
  const headerSize = 4 + 4 + 4 + 4 + 4 + 4;
  const valuesSize = n * dims + pad4(n * dims);
  const size =
    headerSize +
    wordBytes.length +
    pad4(wordBytes.length) +
    n * 4 +
    n * 4 +
    valuesSize +
    4 +
    directions * dims * 4;
  const out = Buffer.alloc(size);
  let o = 0;
  out.write(MAGIC, o, "latin1");
  o += 4;
  out.writeUInt32LE(FORMAT_VERSION, o);
  o += 4;
  out.writeUInt32LE(n, o);
  o += 4;
  out.writeUInt32LE(dims, o);
  o += 4;
  out.writeUInt32LE(source.words.length, o);
  o += 4;
  out.writeUInt32LE(wordBytes.length, o);
  o += 4;
  wordBytes.copy(out, o);
  o += wordBytes.length + pad4(wordBytes.length);
  for (const r of ranks) {
    out.writeUInt32LE(r, o);
    o += 4;
  }
  const scaleAt = o;
  o += n * 4;
  // int8 per row: value ≈ q × scale, scale = max |component| / 127. Rows are unit-normalised
  // first, so every word weighs the same before SIF weighting.
  for (let i = 0; i < n; i++) {
    const v = source.vectors[kept[i]];
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += v[d] * v[d];
    norm = Math.sqrt(norm) || 1;
    let max = 0;
    for (let d = 0; d < dims; d++) max = Math.max(max, Math.abs(v[d] / norm));
    const scale = max / 127 || 1;
    out.writeFloatLE(scale, scaleAt + i * 4);
    for (let d = 0; d < dims; d++) {
      const q = Math.max(-127, Math.min(127, Math.round(v[d] / norm / scale)));
      out.writeInt8(q, o++);
    }
  }
  o += pad4(n * dims);
  const valuesAt = o - valuesSize;
  const dirs = commonDirections(out, valuesAt, scaleAt, ranks, dims, Math.min(n, directionRows), directions);
  out.writeUInt32LE(dirs.length, o);
  o += 4;
  for (const u of dirs) {
    for (let d = 0; d < dims; d++) {
      out.writeFloatLE(u[d], o);
      o += 4;
    }
  }
  if (o !== size) throw new Error(`size mismatch ${o} != ${size}`);
  return { bytes: out, words: n, sha256: createHash("sha256").update(out).digest("hex") };
}

function pad4(n) {
  return (4 - (n % 4)) % 4;
}

/**
 * The top principal directions of the word vectors as the runtime sees them (dequantised),
 * each word weighted by its Zipf frequency 1/rank: the "common discourse" directions that
 * every averaged sentence vector shares (Arora et al. 2017; Mu & Viswanath 2018, "All-but-
 * the-Top"). The ranker projects them out of every sentence vector. Power iteration with
 * deflation, a fixed start and a fixed number of steps, so the result is reproducible.
 */
function commonDirections(buf, valuesAt, scaleAt, ranks, dims, rows, count) {
  if (count <= 0) return [];
  const cov = new Float64Array(dims * dims);
  const v = new Float64Array(dims);
  for (let r = 0; r < rows; r++) {
    const scale = buf.readFloatLE(scaleAt + r * 4);
    for (let d = 0; d < dims; d++) v[d] = buf.readInt8(valuesAt + r * dims + d) * scale;
    const w = 1 / ranks[r];
    for (let i = 0; i < dims; i++) {
      const wi = w * v[i];
      for (let j = 0; j < dims; j++) cov[i * dims + j] += wi * v[j];
    }
  }
  const out = [];
  for (let c = 0; c < count; c++) {
    let u = new Float64Array(dims).fill(1 / Math.sqrt(dims));
    for (let it = 0; it < 200; it++) {
      const next = new Float64Array(dims);
      for (let i = 0; i < dims; i++) for (let j = 0; j < dims; j++) next[i] += cov[i * dims + j] * u[j];
      for (const prev of out) {
        let p = 0;
        for (let i = 0; i < dims; i++) p += next[i] * prev[i];
        for (let i = 0; i < dims; i++) next[i] -= p * prev[i];
      }
      let norm = 0;
      for (let i = 0; i < dims; i++) norm += next[i] * next[i];
      norm = Math.sqrt(norm);
      for (let i = 0; i < dims; i++) next[i] /= norm;
      u = next;
    }
    out.push(u);
  }
  return out;
}
