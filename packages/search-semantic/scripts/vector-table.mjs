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
 * @param {{ maxWords: number }} options
 * @returns {{ bytes: Buffer, words: number, sha256: string }}
 */
export function buildVectorTable(source, { maxWords }) {
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
  const size = headerSize + wordBytes.length + pad4(wordBytes.length) + n * 4 + n * 4 + n * dims;
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
  if (o !== size) throw new Error(`size mismatch ${o} != ${size}`);
  return { bytes: out, words: n, sha256: createHash("sha256").update(out).digest("hex") };
}

function pad4(n) {
  return (4 - (n % 4)) % 4;
}
