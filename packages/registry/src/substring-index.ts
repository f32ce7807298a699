/**
 * Which texts contain a given substring, answered from an index of character n-grams
 * instead of a scan: the candidates are the texts holding every trigram of the needle
 * (bigram for a two-character needle), and each candidate is then verified with
 * `includes`, so the answer is exact. Texts are added and removed one at a time.
 */
export class SubstringIndex {
  /** n-gram → ids of the texts containing it, ascending (ids only ever grow); removed ids are dropped lazily. */
  readonly #grams = new Map<string, number[]>();
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
    for (const g of gramsOf(text)) {
      const ids = this.#grams.get(g);
      if (ids) ids.push(id);
      else this.#grams.set(g, [id]);
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
    const keys = needle.length === 2 ? [needle] : [...new Set(trigrams(needle))];
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

function trigrams(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 3 <= text.length; i++) out.push(text.slice(i, i + 3));
  return out;
}

/** Every distinct bigram and trigram of a text. */
function gramsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 2 <= text.length; i++) {
    out.add(text.slice(i, i + 2));
    if (i + 3 <= text.length) out.add(text.slice(i, i + 3));
  }
  return out;
}
