import type { RankerDocument, RankerIndex, RankerQuery } from "@capgate/registry";
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

interface Doc {
  vector: Float32Array;
  cell: number;
}

export interface VectorIndexOptions {
  /**
   * Pseudo-relevance feedback (Rocchio's step in vector space): before a query is answered,
   * its vector moves towards the mean of its `docs` nearest documents by `weight`, so words
   * the query lacks but its best matches share count too. Off when absent.
   */
  feedback?: { docs: number; weight: number };
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Vectors by id with exact similarity and (above EXACT_MAX) approximate nearest neighbours; add and remove are incremental. */
export function createVectorIndex(embedder: Embedder, options: VectorIndexOptions = {}): RankerIndex {
  const feedbackDocs = Math.max(0, Math.floor(options.feedback?.docs ?? 0));
  const feedbackWeight = Math.max(0, options.feedback?.weight ?? 0);
  const docs = new Map<string, Doc>();
  let centroids: Float32Array[] = [];
  let cells: Array<Set<string>> = [];
  /** Size at the last training: cells are retrained lazily once the index has doubled since. */
  let trainedAt = 0;

  function nearestCell(v: Float32Array): number {
    let best = 0;
    let bestSim = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < centroids.length; c++) {
      const s = dot(v, centroids[c]!);
      if (s > bestSim) {
        bestSim = s;
        best = c;
      }
    }
    return best;
  }

  /** Deterministic spherical k-means on an evenly spaced sample (insertion order), then every vector assigned. */
  function train(): void {
    const all = [...docs.values()];
    const k = Math.max(1, Math.round(Math.sqrt(all.length)));
    const step = Math.max(1, Math.floor(all.length / Math.min(all.length, TRAIN_SAMPLE)));
    const sample = all.filter((_, i) => i % step === 0).map((d) => d.vector);
    const cStep = sample.length / k;
    centroids = Array.from({ length: k }, (_, i) => Float32Array.from(sample[Math.floor(i * cStep)]!));
    const dims = embedder.dimensions;
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
    cells = Array.from({ length: k }, () => new Set<string>());
    for (const [id, doc] of docs) {
      doc.cell = nearestCell(doc.vector);
      cells[doc.cell]!.add(id);
    }
    trainedAt = docs.size;
  }

  function ensureTrained(): void {
    if (docs.size <= EXACT_MAX) return;
    if (trainedAt === 0 || docs.size >= 2 * trainedAt) train();
  }

  return {
    add(doc: RankerDocument) {
      if (docs.has(doc.id)) throw new Error(`vector index: "${doc.id}" is already indexed`);
      const vector = embedder.embed(doc.texts) ?? new Float32Array(embedder.dimensions);
      const entry: Doc = { vector, cell: -1 };
      docs.set(doc.id, entry);
      if (centroids.length > 0) {
        entry.cell = nearestCell(vector);
        cells[entry.cell]!.add(doc.id);
      }
    },
    remove(id) {
      const doc = docs.get(id);
      if (!doc) return false;
      docs.delete(id);
      if (doc.cell >= 0) cells[doc.cell]?.delete(id);
      if (docs.size <= EXACT_MAX) {
        centroids = [];
        cells = [];
        trainedAt = 0;
      }
      return true;
    },
    get size() {
      return docs.size;
    },
    query(text, queryOptions): RankerQuery | undefined {
      const original = embedder.embed(text);
      if (!original) return undefined;
      // Candidates for the nearest documents: every document, or (approximate index) those
      // in the cells closest to the query; found on first need, shared by feedback and answer.
      let chosen: string[] | undefined;
      let probed = false;
      const candidates = (): Iterable<string> => {
        if (!probed) {
          probed = true;
          ensureTrained();
          if (centroids.length > 0) {
            const probes = Math.max(MIN_PROBES, Math.ceil(centroids.length / 8));
            const ranked = centroids.map((c, i) => ({ i, s: dot(original, c) })).sort((a, b) => b.s - a.s);
            chosen = [];
            for (const { i } of ranked.slice(0, probes)) for (const id of cells[i]!) chosen.push(id);
          }
        }
        return chosen ?? docs.keys();
      };
      let q = original;
      const refine = queryOptions?.refine !== false;
      if (refine && feedbackDocs > 0 && feedbackWeight > 0 && docs.size > feedbackDocs) {
        const top = topK(candidates(), feedbackDocs, (id) => dot(original, docs.get(id)!.vector));
        const moved = Float32Array.from(original);
        const w = feedbackWeight / top.length;
        for (const { id } of top) {
          const v = docs.get(id)!.vector;
          for (let d = 0; d < moved.length; d++) moved[d]! += w * v[d]!;
        }
        const norm = Math.sqrt(dot(moved, moved));
        if (norm > 0) q = moved.map((x) => x / norm);
      }
      const cache = new Map<string, number>();
      const similarity = (id: string): number | undefined => {
        let s = cache.get(id);
        if (s === undefined) {
          const doc = docs.get(id);
          if (!doc) return undefined;
          s = dot(q, doc.vector);
          cache.set(id, s);
        }
        return s;
      };
      return {
        similarity,
        nearest: (k) => topK(candidates(), k, (id) => similarity(id)!),
      };
    },
  };
}

/** The `k` ids of highest score, best first (insertion into a short sorted list). */
function topK(
  ids: Iterable<string>,
  k: number,
  scoreOf: (id: string) => number,
): Array<{ id: string; similarity: number }> {
  const top: Array<{ id: string; similarity: number }> = [];
  if (k <= 0) return top;
  for (const id of ids) {
    const s = scoreOf(id);
    if (top.length === k && s <= top[k - 1]!.similarity) continue;
    let i = top.length;
    while (i > 0 && s > top[i - 1]!.similarity) i--;
    top.splice(i, 0, { id, similarity: s });
    if (top.length > k) top.pop();
  }
  return top;
}
