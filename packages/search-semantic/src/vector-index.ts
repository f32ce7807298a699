import { type RankerDocument, type RankerIndex, type RankerQuery, topIndices } from "@capgate/registry";
import type { Embedder } from "./embed.js";

/**
 * Up to this many documents, nearest neighbours are found exactly (one dot product each:
 * ~0.1 ms for 2,000 documents of 100 dimensions). Above it, an inverted-file index
 * (k-means cells, the query probes the closest cells only) keeps a query's cost near
 * √n dot products instead of n.
 */
const EXACT_MAX = 2048;
/** Cells probed per query: at least this many, or an eighth of the cells. */
const MIN_PROBES = 6;
const TRAIN_SAMPLE = 4096;
const TRAIN_ITERATIONS = 4;

/**
 * Dot product of the query with the vector stored at `offset` in `pool`. Four running sums:
 * the scans over every document spend most of a query here, and independent sums let the
 * CPU overlap the multiplications (about twice as fast as one sum in V8).
 */
function dotAt(q: Float32Array, pool: Float32Array, offset: number): number {
  const n = q.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += q[i]! * pool[offset + i]!;
    s1 += q[i + 1]! * pool[offset + i + 1]!;
    s2 += q[i + 2]! * pool[offset + i + 2]!;
    s3 += q[i + 3]! * pool[offset + i + 3]!;
  }
  for (; i < n; i++) s0 += q[i]! * pool[offset + i]!;
  return s0 + s1 + (s2 + s3);
}

function dot(a: Float32Array, b: Float32Array): number {
  return dotAt(a, b, 0);
}

export interface VectorIndexOptions {
  /**
   * Pseudo-relevance feedback (Rocchio's step in vector space): before a query is answered,
   * its vector moves towards the mean of its `docs` nearest documents by `weight`, so words
   * the query lacks but its best matches share count too. Off when absent.
   */
  feedback?: { docs: number; weight: number };
}

/**
 * Vectors by id with exact similarity and (above EXACT_MAX) approximate nearest neighbours;
 * add and remove are incremental. Vectors live in one contiguous pool, a slot each, so a
 * similarity is one pass over 100 adjacent floats and a scan allocates nothing per document.
 */
export function createVectorIndex(embedder: Embedder, options: VectorIndexOptions = {}): RankerIndex {
  const feedbackDocs = Math.max(0, Math.floor(options.feedback?.docs ?? 0));
  const feedbackWeight = Math.max(0, options.feedback?.weight ?? 0);
  const dims = embedder.dimensions;
  const slotOf = new Map<string, number>();
  /** Slot → id (undefined when free), and its cell (-1 before training). */
  const ids: Array<string | undefined> = [];
  const cellOf: number[] = [];
  const free: number[] = [];
  let pool = new Float32Array(64 * dims);
  let centroids: Float32Array[] = [];
  let cells: Array<Set<number>> = [];
  /** Size at the last training: cells are retrained lazily once the index has doubled since. */
  let trainedAt = 0;

  const vectorAt = (slot: number): Float32Array => pool.subarray(slot * dims, (slot + 1) * dims);

  function nearestCell(v: Float32Array, offset = 0): number {
    let best = 0;
    let bestSim = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < centroids.length; c++) {
      const s = dotAt(centroids[c]!, v, offset);
      if (s > bestSim) {
        bestSim = s;
        best = c;
      }
    }
    return best;
  }

  function liveSlots(): number[] {
    const out: number[] = [];
    for (let slot = 0; slot < ids.length; slot++) if (ids[slot] !== undefined) out.push(slot);
    return out;
  }

  /** Deterministic spherical k-means on an evenly spaced sample (slot order), then every vector assigned. */
  function train(): void {
    const all = liveSlots();
    const k = Math.max(1, Math.round(Math.sqrt(all.length)));
    const step = Math.max(1, Math.floor(all.length / Math.min(all.length, TRAIN_SAMPLE)));
    const sample = all.filter((_, i) => i % step === 0).map(vectorAt);
    const cStep = sample.length / k;
    centroids = Array.from({ length: k }, (_, i) => Float32Array.from(sample[Math.floor(i * cStep)]!));
    for (let it = 0; it < TRAIN_ITERATIONS; it++) {
      const sums = Array.from({ length: k }, () => new Float32Array(dims));
      for (const v of sample) {
        const c = nearestCell(v);
        const s = sums[c]!;
        for (let d = 0; d < dims; d++) s[d]! += v[d]!;
      }
      for (let c = 0; c < k; c++) {
        const s = sums[c]!;
        const norm = Math.sqrt(dot(s, s));
        if (norm > 0) centroids[c] = s.map((x) => x / norm);
      }
    }
    cells = Array.from({ length: k }, () => new Set<number>());
    for (const slot of all) {
      cellOf[slot] = nearestCell(pool, slot * dims);
      cells[cellOf[slot]!]!.add(slot);
    }
    trainedAt = slotOf.size;
  }

  function ensureTrained(): void {
    if (slotOf.size <= EXACT_MAX) return;
    if (trainedAt === 0 || slotOf.size >= 2 * trainedAt) train();
  }

  return {
    add(doc: RankerDocument) {
      if (slotOf.has(doc.id)) throw new Error(`vector index: "${doc.id}" is already indexed`);
      const reused = free.length > 0;
      const slot = free.pop() ?? ids.length;
      if ((slot + 1) * dims > pool.length) {
        const grown = new Float32Array(pool.length * 2);
        grown.set(pool);
        pool = grown;
      }
      // Embedded in place (no vector of its own), into zeros: a new slot has never been
      // written; a reused one is cleared (a loop: `fill` over a range costs more for 100 floats).
      const offset = slot * dims;
      if (reused) for (let d = 0; d < dims; d++) pool[offset + d] = 0;
      // A text with no known word keeps a zero vector: similarity 0 to everything.
      if (!embedder.embedInto(doc.texts, pool, offset)) pool.fill(0, offset, offset + dims);
      ids[slot] = doc.id;
      slotOf.set(doc.id, slot);
      cellOf[slot] = -1;
      if (centroids.length > 0) {
        cellOf[slot] = nearestCell(pool, slot * dims);
        cells[cellOf[slot]!]!.add(slot);
      }
    },
    remove(id) {
      const slot = slotOf.get(id);
      if (slot === undefined) return false;
      slotOf.delete(id);
      ids[slot] = undefined;
      if (cellOf[slot]! >= 0) cells[cellOf[slot]!]?.delete(slot);
      cellOf[slot] = -1;
      free.push(slot);
      if (slotOf.size <= EXACT_MAX) {
        centroids = [];
        cells = [];
        trainedAt = 0;
      }
      return true;
    },
    get size() {
      return slotOf.size;
    },
    query(text, queryOptions): RankerQuery | undefined {
      const original = embedder.embed(text);
      if (!original) return undefined;
      /** Ties (equal vectors) by id, so an answer does not depend on insertion order. */
      const byScore =
        (slots: number[], sims: Float64Array) =>
        (a: number, b: number): boolean =>
          sims[a]! > sims[b]! || (sims[a] === sims[b] && ids[slots[a]!]! < ids[slots[b]!]!);
      /** The documents a nearest-neighbour answer looks at: all, or those of the cells closest to the query; found once, shared by feedback and answer. */
      let candidates: number[] | undefined;
      const candidateSlots = (): number[] => {
        if (candidates) return candidates;
        ensureTrained();
        if (centroids.length > 0) {
          const probes = Math.max(MIN_PROBES, Math.ceil(centroids.length / 8));
          const ranked = centroids
            .map((c, i) => ({ i, s: dot(original, c) }))
            .sort((a, b) => b.s - a.s || a.i - b.i);
          candidates = [];
          for (const { i } of ranked.slice(0, probes)) for (const slot of cells[i]!) candidates.push(slot);
        } else {
          candidates = liveSlots();
        }
        return candidates;
      };
      const similarities = (v: Float32Array, slots: number[]): Float64Array => {
        const sims = new Float64Array(slots.length);
        for (let i = 0; i < slots.length; i++) sims[i] = dotAt(v, pool, slots[i]! * dims);
        return sims;
      };
      let q = original;
      const refine = queryOptions?.refine !== false;
      if (refine && feedbackDocs > 0 && feedbackWeight > 0 && slotOf.size > feedbackDocs) {
        const slots = candidateSlots();
        const sims = similarities(original, slots);
        const top = topIndices(slots.length, feedbackDocs, byScore(slots, sims));
        const moved = Float32Array.from(original);
        const w = feedbackWeight / top.length;
        for (const i of top) {
          const offset = slots[i]! * dims;
          for (let d = 0; d < dims; d++) moved[d]! += w * pool[offset + d]!;
        }
        const norm = Math.sqrt(dot(moved, moved));
        if (norm > 0) q = moved.map((x) => x / norm);
      }
      let scanned: { slots: number[]; sims: Float64Array } | undefined;
      return {
        similarity(id) {
          const slot = slotOf.get(id);
          return slot === undefined ? undefined : dotAt(q, pool, slot * dims);
        },
        nearest(k) {
          if (!scanned) {
            const slots = candidateSlots();
            scanned = { slots, sims: similarities(q, slots) };
          }
          const { slots, sims } = scanned;
          return topIndices(slots.length, k, byScore(slots, sims)).map((i) => ({
            id: ids[slots[i]!]!,
            similarity: sims[i]!,
          }));
        },
      };
    },
  };
}
