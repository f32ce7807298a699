/**
 * Which texts contain a given substring, answered from an index of character n-grams
 * instead of a scan: the candidates are the texts holding every trigram of the needle
 * (bigram for a two-character needle), and each candidate is then verified with
 * `includes`, so the answer is exact. Texts are added and removed one at a time.
 */
export class SubstringIndex {
  /** n-gram → ids of the texts containing it (insertion order). */
  readonly #grams = new Map<string, Set<number>>();
  readonly #texts = new Map<number, string>();

  get size(): number {
    return this.#texts.size;
  }

  add(id: number, text: string): void {
    if (this.#texts.has(id)) throw new Error(`substring index: id ${id} is already indexed`);
    this.#texts.set(id, text);
    for (const g of gramsOf(text)) {
      let ids = this.#grams.get(g);
      if (!ids) {
        ids = new Set();
        this.#grams.set(g, ids);
      }
      ids.add(id);
    }
  }

  remove(id: number): boolean {
    const text = this.#texts.get(id);
    if (text === undefined) return false;
    this.#texts.delete(id);
    for (const g of gramsOf(text)) {
      const ids = this.#grams.get(g);
      if (!ids) continue;
      ids.delete(id);
      if (ids.size === 0) this.#grams.delete(g);
    }
    return true;
  }

  text(id: number): string | undefined {
    return this.#texts.get(id);
  }

  /** Ids of the texts containing `needle` (already lowercased like the texts), unordered. Needles shorter than 2 characters match nothing. */
  containing(needle: string): number[] {
    if (needle.length < 2) return [];
    const keys = needle.length === 2 ? [needle] : [...new Set(trigrams(needle))];
    const sets: Array<Set<number>> = [];
    for (const k of keys) {
      const ids = this.#grams.get(k);
      if (!ids) return [];
      sets.push(ids);
    }
    sets.sort((a, b) => a.size - b.size);
    const out: number[] = [];
    const [smallest, ...rest] = sets;
    outer: for (const id of smallest!) {
      for (const s of rest) if (!s.has(id)) continue outer;
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
