import { readFileSync } from "node:fs";

/**
 * The shipped word-vector table (data/vectors.bin, built by scripts/build-vectors.mjs).
 * Layout, little-endian: "CGVT", u32 format 1, u32 words n, u32 dimensions d, u32 entries
 * in the source vocabulary, u32 byte length of the word list; the words (UTF-8, joined by
 * "\n", padded to 4 bytes); n × u32 frequency rank in the source; n × f32 row scale;
 * n × d int8 components (a unit row ≈ components × scale), padded to 4 bytes; u32 k and
 * k × d f32: the common directions the embedder projects out of sentence vectors.
 */
export interface VectorTable {
  readonly dimensions: number;
  readonly size: number;
  /** Entries in the source vocabulary the ranks refer to. */
  readonly sourceSize: number;
  /** Row of a word, or -1. */
  row(word: string): number;
  /** 1-based frequency rank of a row in the source (1 = most frequent). */
  rank(row: number): number;
  /** Directions shared by all sentence vectors (top principal components), removed from each. */
  readonly commonDirections: readonly Float32Array[];
  /** Add `weight` × the row's (unit) vector to `out`. */
  addTo(out: Float32Array, row: number, weight: number): void;
}

const MAGIC = "CGVT";

export function parseVectorTable(bytes: Uint8Array): VectorTable {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!);
  if (magic !== MAGIC || view.getUint32(4, true) !== 1) throw new Error("vector table: not a CGVT v1 file");
  const n = view.getUint32(8, true);
  const dims = view.getUint32(12, true);
  const sourceSize = view.getUint32(16, true);
  const wordLength = view.getUint32(20, true);
  let o = 24;
  const words = new TextDecoder().decode(bytes.subarray(o, o + wordLength)).split("\n");
  o += wordLength + ((4 - (wordLength % 4)) % 4);
  if (words.length !== n) throw new Error(`vector table: ${words.length} words for ${n} rows`);
  const valuesEnd = o + n * 8 + n * dims + ((4 - ((n * dims) % 4)) % 4);
  if (bytes.byteLength < valuesEnd + 4) throw new Error("vector table: truncated");
  const k = view.getUint32(valuesEnd, true);
  const expected = valuesEnd + 4 + k * dims * 4;
  if (bytes.byteLength !== expected)
    throw new Error(`vector table: ${bytes.byteLength} bytes, expected ${expected}`);
  const commonDirections: Float32Array[] = [];
  for (let c = 0; c < k; c++) {
    const u = new Float32Array(dims);
    for (let d = 0; d < dims; d++) u[d] = view.getFloat32(valuesEnd + 4 + (c * dims + d) * 4, true);
    commonDirections.push(u);
  }
  const ranks = new Uint32Array(n);
  const scales = new Float32Array(n);
  for (let i = 0; i < n; i++) ranks[i] = view.getUint32(o + i * 4, true);
  o += n * 4;
  for (let i = 0; i < n; i++) scales[i] = view.getFloat32(o + i * 4, true);
  o += n * 4;
  const values = new Int8Array(bytes.buffer, bytes.byteOffset + o, n * dims);
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) index.set(words[i]!, i);
  return {
    dimensions: dims,
    size: n,
    sourceSize,
    commonDirections,
    row: (word) => index.get(word) ?? -1,
    rank: (row) => ranks[row]!,
    addTo(out, row, weight) {
      const w = weight * scales[row]!;
      const base = row * dims;
      for (let d = 0; d < dims; d++) out[d]! += w * values[base + d]!;
    },
  };
}

let shipped: VectorTable | undefined;

/** The table shipped in this package (read once, ~6 MB). */
export function shippedVectorTable(): VectorTable {
  shipped ??= parseVectorTable(readFileSync(new URL("../data/vectors.bin", import.meta.url)));
  return shipped;
}
