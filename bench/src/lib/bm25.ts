import type { CapabilityManifest } from "@capgate/schema";

/**
 * Textbook BM25 (Robertson & Zaragoza: k1 1.2, b 0.75, idf log(1 + (N − n + 0.5)/(n + 0.5)))
 * over one bag of words per document, the baseline each quality figure is printed beside.
 * Tokens: lowercased runs of letters and digits (identifiers split on `_`, `.`, `/`), a
 * standard English stop list removed, no stemming — the "plain BM25" of the MetaTool README.
 */
const STOP = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below " +
    "between both but by can could did do does doing down during each few for from further had has have " +
    "having he her here hers herself him himself his how i if in into is it its itself just me more most " +
    "my myself no nor not now of off on once only or other our ours ourselves out over own same she should " +
    "so some such than that the their theirs them themselves then there these they this those through to " +
    "too under until up very was we were what when where which while who whom why will with you your " +
    "yours yourself yourselves"
  ).split(" "),
);

export function bm25Tokens(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== "" && !STOP.has(t));
}

export interface Bm25Doc {
  id: string;
  text: string;
}

export class Bm25 {
  readonly #postings = new Map<string, Array<[number, number]>>();
  readonly #ids: string[] = [];
  readonly #lengths: number[] = [];
  #avg = 0;

  constructor(docs: readonly Bm25Doc[]) {
    for (const doc of docs) {
      const i = this.#ids.length;
      this.#ids.push(doc.id);
      const tokens = bm25Tokens(doc.text);
      this.#lengths.push(tokens.length);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, n] of tf) {
        const list = this.#postings.get(t);
        if (list) list.push([i, n]);
        else this.#postings.set(t, [[i, n]]);
      }
    }
    this.#avg = this.#lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.#lengths.length);
  }

  /** Ids best first (only documents sharing a term), ties by id. */
  search(query: string, limit: number): string[] {
    const k1 = 1.2;
    const b = 0.75;
    const n = this.#ids.length;
    const scores = new Map<number, number>();
    for (const t of new Set(bm25Tokens(query))) {
      const list = this.#postings.get(t);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const [doc, tf] of list) {
        const norm = tf + k1 * (1 - b + (b * this.#lengths[doc]!) / this.#avg);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (k1 + 1)) / norm);
      }
    }
    return [...scores]
      .sort((x, y) => y[1] - x[1] || (this.#ids[x[0]]! < this.#ids[y[0]]! ? -1 : 1))
      .slice(0, limit)
      .map(([doc]) => this.#ids[doc]!);
  }
}

/** One BM25 document per capability: name, description and every tool's name and description. */
export function capabilityDocs(manifests: readonly CapabilityManifest[]): Bm25Doc[] {
  return manifests.map((m) => ({
    id: m.name,
    // Each distinct text once: MetaTool's one-tool manifests repeat the description in the tool.
    text: [...new Set([m.name, m.description, ...m.tools.flatMap((t) => [t.name, t.description])])].join(" "),
  }));
}

/** One BM25 document per tool: its name and description, and its capability's name. */
export function toolDocs(manifests: readonly CapabilityManifest[]): Bm25Doc[] {
  return manifests.flatMap((m) =>
    m.tools.map((t) => ({ id: t.name, text: `${t.name} ${t.description} ${m.name}` })),
  );
}
