/**
 * Which texts contain a given substring, answered from an index of character trigrams
 * instead of a scan: the candidates are the texts holding every trigram of the needle, and
 * each candidate is then verified with `includes`, so the answer is exact. A two-character
 * needle (rare: most are stop words) is answered by scanning. Texts are added and removed
 * one at a time. Trigrams are kept as numbers (three UTF-16 code units packed, see
 * trigramsOf), so indexing allocates no strings.
 */
export class SubstringIndex {
  /** n-gram → ids of the texts containing it, ascending (ids only ever grow); removed ids are dropped lazily. */
  readonly #grams = new Map<number, number[]>();
  readonly #texts = new Map<number, string>();
  #lastId = -1;
  /** Removed since the last compaction: skipped at query time, purged once they are many. */
  readonly #dead = new Set<number>();

  get size(): number {
    return this.#texts.size;
  }

  /** Index a text under an id greater than every id added before. */
  add(id: number, text: string): void {
    if (this.#texts.has(id) || id <= this.#lastId)
      throw new Error(`substring index: id ${id} is already indexed`);
    this.#lastId = id;
    this.#texts.set(id, text);
    // Ids only grow, so a trigram seen twice in this text already ends its list with `id`:
    // no set of the text's trigrams is needed to count each once.
    for (let i = 0; i + 3 <= text.length; i++) {
      const g = trigramAt(text, i);
      const ids = this.#grams.get(g);
      if (!ids) this.#grams.set(g, [id]);
      else if (ids[ids.length - 1] !== id) ids.push(id);
    }
  }

  remove(id: number): boolean {
    if (!this.#texts.delete(id)) return false;
    this.#dead.add(id);
    if (this.#dead.size > 1024 && this.#dead.size * 4 > this.#texts.size) this.#compact();
    return true;
  }

  #compact(): void {
    for (const [g, ids] of this.#grams) {
      const kept = ids.filter((i) => !this.#dead.has(i));
      if (kept.length === 0) this.#grams.delete(g);
      else this.#grams.set(g, kept);
    }
    this.#dead.clear();
  }

  text(id: number): string | undefined {
    return this.#texts.get(id);
  }

  /** Ids of the texts containing `needle` (already lowercased like the texts), unordered. Needles shorter than 2 characters match nothing. */
  containing(needle: string): number[] {
    if (needle.length < 2) return [];
    if (needle.length === 2) {
      const out: number[] = [];
      for (const [id, text] of this.#texts) if (text.includes(needle)) out.push(id);
      return out;
    }
    const keys = trigramsOf(needle);
    const lists: number[][] = [];
    for (const k of keys) {
      const ids = this.#grams.get(k);
      if (!ids) return [];
      lists.push(ids);
    }
    lists.sort((a, b) => a.length - b.length);
    // Intersect the rarest list with the others (all ascending), then verify each candidate.
    let candidates = lists[0]!;
    for (let l = 1; l < lists.length && candidates.length > 0; l++) {
      const other = lists[l]!;
      const next: number[] = [];
      let j = 0;
      for (const id of candidates) {
        while (j < other.length && other[j]! < id) j++;
        if (j < other.length && other[j] === id) next.push(id);
      }
      candidates = next;
    }
    const out: number[] = [];
    for (const id of candidates) {
      if (this.#dead.has(id)) continue;
      // Every trigram present does not mean the needle is: verify.
      if (this.#texts.get(id)!.includes(needle)) out.push(id);
    }
    return out;
  }
}

/**
 * The trigram at `i`, packed as a number: three code units below 1024 (all of ASCII and
 * Latin) into 30 bits, a small integer V8 hashes and stores without allocating; any other
 * trigram into 48 bits above 2^30, so the two ranges never meet.
 */
function trigramAt(text: string, i: number): number {
  const a = text.charCodeAt(i);
  const b = text.charCodeAt(i + 1);
  const c = text.charCodeAt(i + 2);
  return (a | b | c) < 1024 ? (a << 20) | (b << 10) | c : 1073741824 + a * 4294967296 + b * 65536 + c;
}

/** Every distinct trigram of a text (trigramAt). */
function trigramsOf(text: string): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(trigramAt(text, i));
  return out;
}
