import type { CapabilityManifest } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { analyze, analyzeQuery } from "./analyze.js";
import { requestEffect, toolEffect } from "./intent.js";
import type { RankerIndex, SearchRanker } from "./ranker.js";
import {
  createCapabilityIndex,
  createToolIndex,
  DEFAULT_SEARCH_WEIGHTS,
  ownShare,
  Registry,
  rankerShare,
  type SearchHit,
  SIBLING_TOOLS,
} from "./registry.js";
import { SubstringIndex } from "./substring-index.js";
import { manifest } from "./test-fixtures.js";
import { createTextIndex } from "./text-index.js";
import { topIndices } from "./top-k.js";

/** These checks run whole random corpora through real indexes: generous, so a loaded machine cannot fail them. */
const SLOW = 120_000;

// Property-style checks of the search indexes on seeded random corpora: each index answers
// exactly what a plain, obviously correct computation answers.

/** mulberry32: a small seeded generator, so every run draws the same corpora. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)]!;

// Few words, so documents share them and scores tie; some share prefixes (`config`, `conf…`)
// and are one typo apart (`render`/`render`), so prefix and typo expansion take part.
const WORDS = [
  "read",
  "write",
  "file",
  "folder",
  "config",
  "configure",
  "network",
  "networks",
  "deploy",
  "release",
  "commit",
  "branch",
  "weather",
  "forecast",
  "invoice",
  "render",
  "renders",
  "printer",
  "printers",
  "calendar",
];
const UNKNOWN = ["conf", "netw", "prin", "rendar", "calendr", "xyz", "forec"];

function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => pick(WORDS, random)).join(" ");
}

/** Risks as authors declare them (none, reading, changing): what the effect factor reads. */
const RISKS = [undefined, "read", "network", "write", "exec"] as const;

/** The manifest with each tool's risk drawn from `RISKS`. */
function withRisks(random: () => number, m: CapabilityManifest): CapabilityManifest {
  return {
    ...m,
    tools: m.tools.map((t) => {
      const risk = pick([...RISKS], random);
      return risk === undefined ? t : { ...t, risk };
    }),
  };
}

/** A query that opens with a verb asking to look or to change, half the time. */
function effectQuery(random: () => number): string {
  const query = randomQuery(random);
  return random() < 0.5
    ? `${pick(["show", "create", "delete", "list", "please update"], random)} ${query}`
    : query;
}

function randomManifest(
  random: () => number,
  name: string,
  size = 1 + Math.floor(random() * 3),
): CapabilityManifest {
  const tools = Array.from({ length: size }, (_, i) => [
    `${pick(["read", "write", "list", "run"], random)}_${i}`,
    `${sentence(random, 2 + Math.floor(random() * 8))}.`,
    [],
  ]) as Array<[string, string, string[]]>;
  return manifest(
    name,
    `${sentence(random, 1 + Math.floor(random() * 6))}.`,
    tools,
    random() < 0.5 ? [] : ["Coder"],
  );
}

function randomQuery(random: () => number): string {
  const n = 1 + Math.floor(random() * 4);
  return Array.from({ length: n }, () => (random() < 0.2 ? pick(UNKNOWN, random) : pick(WORDS, random))).join(
    " ",
  );
}

describe("topIndices", () => {
  it("equals a full sort on random inputs with many ties", { timeout: SLOW }, () => {
    const random = seeded(1);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(random() * 60);
      const scores = Array.from({ length: n }, () => Math.floor(random() * 8));
      const names = Array.from({ length: n }, (_, i) => `d${(i * 7919) % 1000}`);
      const before = (a: number, b: number) =>
        scores[a]! > scores[b]! || (scores[a] === scores[b] && names[a]! < names[b]!);
      const k = Math.floor(random() * (n + 3));
      const full = [...Array(n).keys()].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
      expect(topIndices(n, k, before)).toEqual(full.slice(0, k));
    }
  });
});

describe("createTextIndex: the inverted index gives the formula's numbers", () => {
  interface Doc {
    id: string;
    title: string;
    body: string;
  }
  const weights = { title: 3, body: 1 };
  const bm = { k: 1.2, b: 0.5, d: 0.5 };

  /**
   * BM25+ per field straight from its definition, document by document (no postings):
   * idf over the documents holding the term in that field, length = distinct terms of the
   * field, prefix (0.5) and typo (0.3) expansion for unknown words, IDF coordination.
   */
  // A synonym table over the corpus's words (an unknown word's too), used in every other round.
  const SYNONYMS: Record<string, string[]> = {
    write: ["commit"],
    deploy: ["release", "configure"],
    forecast: ["weather"],
    printers: ["render"],
    conf: ["network"],
  };
  const synonymsOf = (w: string): string[] => {
    const out: string[] = [];
    for (const [key, others] of Object.entries(SYNONYMS))
      if (analyze(key).includes(w)) for (const o of others) out.push(...analyze(o).filter((t) => t !== w));
    return [...new Set(out)];
  };

  function reference(docs: readonly Doc[], query: string, synonyms: boolean): Map<string, number> {
    const analysed = docs.map((d) => ({ id: d.id, fields: [analyze(d.title), analyze(d.body)] }));
    const fieldWeights = [weights.title, weights.body];
    const vocab = new Set(analysed.flatMap((d) => d.fields.flat()));
    const n = docs.length;
    const df = (t: string) => analysed.filter((d) => d.fields.some((f) => f.includes(t))).length;
    const idf = (m: number) => Math.log(1 + (n - m + 0.5) / (m + 0.5));
    const avg = [0, 1].map((f) => analysed.reduce((s, d) => s + new Set(d.fields[f]).size, 0) / n);
    const terms = analyzeQuery(query, (t) => vocab.has(t));
    const meanIdf = terms.reduce((s, t) => s + idf(df(t)), 0) / terms.length || 1;
    const distance1 = (a: string, b: string): boolean => {
      // Levenshtein ≤ 1 by brute force over every single edit of a.
      if (a === b) return false;
      const letters = new Set([...a, ...b]);
      for (let i = 0; i <= a.length; i++) {
        if (a.slice(0, i) + a.slice(i + 1) === b) return true;
        for (const c of letters) {
          if (a.slice(0, i) + c + a.slice(i + 1) === b) return true;
          if (a.slice(0, i) + c + a.slice(i) === b) return true;
        }
      }
      return false;
    };
    const expansions = (w: string): Array<[string, number]> => {
      if (vocab.has(w)) return [[w, 1]];
      const out: Array<[string, number]> = [];
      const prefixed = [...vocab].filter((t) => w.length >= 3 && t.startsWith(w));
      for (const t of prefixed) out.push([t, (0.5 * t.length) / (t.length + 0.3 * (t.length - w.length))]);
      if (w.length >= 6)
        for (const t of vocab)
          if (!prefixed.includes(t) && distance1(w, t)) out.push([t, (0.3 * t.length) / (t.length + 1)]);
      return out;
    };
    // A synonym the index holds, the query does not say and the word's expansion does not reach: weight 0.5.
    const reach = (w: string): Array<[string, number]> => {
      const out = expansions(w);
      if (synonyms)
        for (const t of synonymsOf(w))
          if (vocab.has(t) && !terms.includes(t) && !out.some(([x]) => x === t)) out.push([t, 0.5]);
      return out;
    };
    const out = new Map<string, number>();
    for (const d of analysed) {
      let total = 0;
      const matched = new Set<string>();
      for (const w of terms) {
        for (const [t, weight] of reach(w)) {
          for (let f = 0; f < 2; f++) {
            const tf = d.fields[f]!.filter((x) => x === t).length;
            if (tf === 0) continue;
            const nf = analysed.filter((x) => x.fields[f]!.includes(t)).length;
            const len = new Set(d.fields[f]).size;
            total +=
              weight *
              fieldWeights[f]! *
              idf(nf) *
              (bm.d + (tf * (bm.k + 1)) / (tf + bm.k * (1 - bm.b + (bm.b * len) / avg[f]!)));
            matched.add(w);
          }
        }
      }
      const idfMatched = [...matched].reduce((s, w) => s + idf(df(w)), 0);
      const score = total > 0 ? total * (idfMatched / meanIdf) ** 0.35 : 0;
      if (score > 0) out.set(d.id, score);
    }
    return out;
  }

  it("scores every document as the definition does, and top(k) is the sorted head, on random corpora with removals (with and without synonyms)", {
    timeout: SLOW,
  }, () => {
    const random = seeded(2);
    for (let round = 0; round < 12; round++) {
      const synonyms = round % 2 === 1;
      const index = createTextIndex<Doc>({
        id: (d) => d.id,
        fields: { title: (d) => d.title, body: (d) => d.body },
        weights,
        bm25: bm,
        ...(synonyms ? { synonyms: SYNONYMS } : {}),
      });
      const live = new Map<string, Doc>();
      for (let i = 0; i < 40; i++) {
        const doc = {
          id: `d${i}`,
          title: sentence(random, 1 + Math.floor(random() * 3)),
          body: sentence(random, Math.floor(random() * 12)),
        };
        index.add(doc);
        live.set(doc.id, doc);
        if (random() < 0.3) {
          const gone = pick([...live.keys()], random);
          index.remove(gone);
          live.delete(gone);
        }
      }
      for (let q = 0; q < 15; q++) {
        const query = randomQuery(random);
        const expected = reference([...live.values()], query, synonyms);
        const evaluated = index.query(query);
        expect(evaluated.size, query).toBe(expected.size);
        for (const [id, s] of expected) expect(evaluated.score(id), `${query} ${id}`).toBeCloseTo(s, 9);
        const sorted = [...expected].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
        const k = 1 + Math.floor(random() * 8);
        const top = evaluated.top(k);
        // Same ids in the same order; scores equal up to float rounding.
        expect(top.map((h) => h.score)).toEqual(
          sorted.slice(0, k).map(([, s]) => expect.closeTo(s, 9) as unknown as number),
        );
        expect(index.search(query, k)).toEqual(top);
      }
    }
  });
});

describe("SubstringIndex: index lookups equal a scan", () => {
  it("on random texts through adds, removes and compaction", { timeout: SLOW }, () => {
    const random = seeded(3);
    const idx = new SubstringIndex();
    const live = new Map<number, string>();
    const alphabet = "abcde _.";
    let next = 0;
    for (let step = 0; step < 4000; step++) {
      if (live.size > 0 && random() < 0.45) {
        const id = pick([...live.keys()], random);
        expect(idx.remove(id)).toBe(true);
        live.delete(id);
      } else {
        const text = Array.from({ length: 3 + Math.floor(random() * 30) }, () =>
          pick([...alphabet], random),
        ).join("");
        idx.add(next, text);
        live.set(next++, text);
      }
      if (step % 50 === 0) {
        for (let q = 0; q < 10; q++) {
          const needle = Array.from({ length: 1 + Math.floor(random() * 5) }, () =>
            pick([...alphabet], random),
          ).join("");
          const scan = [...live]
            .filter(([, t]) => needle.length >= 2 && t.includes(needle))
            .map(([id]) => id);
          expect(
            idx.containing(needle).sort((a, b) => a - b),
            needle,
          ).toEqual(scan.sort((a, b) => a - b));
        }
      }
    }
    expect(idx.size).toBe(live.size);
  });
});

/** A deterministic ranker with arbitrary similarities (a hash of query and id), to stress the blend's candidate bound. */
function hashRanker(override?: (id: string, hashed: number) => number): SearchRanker {
  const hash = (s: string): number => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return ((h >>> 0) / 4294967296) * 2 - 1;
  };
  return {
    name: "hash",
    weight: 0.7,
    minSimilarity: 0.35,
    createIndex(): RankerIndex {
      const docs = new Set<string>();
      return {
        add: (doc) => void docs.add(doc.id),
        remove: (id) => docs.delete(id),
        get size() {
          return docs.size;
        },
        query(text) {
          const sim = (id: string) => {
            const hashed = hash(`${text}\u0000${id}`);
            return override ? override(id, hashed) : hashed;
          };
          return {
            similarity: (id) => (docs.has(id) ? sim(id) : undefined),
            nearest: (k) =>
              [...docs]
                .map((id) => ({ id, similarity: sim(id) }))
                .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1))
                .slice(0, k),
          };
        },
      };
    },
  };
}

const view = (hits: SearchHit[]) =>
  hits.map((h) => ({
    c: h.capability,
    t: h.tool,
    m: h.match,
    s: h.score,
    tools: h.tools.map((x) => [x.name, x.score]),
  }));

describe("Registry: incremental registration equals a fresh build", () => {
  for (const [label, ranker] of [
    ["lexical", undefined],
    ["with a ranker", hashRanker()],
  ] as const) {
    it(`${label}: after random registers and unregisters, every search is what a fresh registry answers`, {
      timeout: SLOW,
    }, () => {
      const random = seeded(label === "lexical" ? 4 : 5);
      const incremental = new Registry({ ranker });
      const live = new Map<string, CapabilityManifest>();
      for (let step = 0; step < 160; step++) {
        // Searched part-way too, so the indexes (the recall rule's, built on first need, included)
        // are built early and then kept up to date.
        if (step === 60 || step === 120)
          for (const query of ["onfig", "etwork xyz", randomQuery(random)])
            for (const level of ["capability", "tool"] as const)
              incremental.search(query, { limit: 12, level });
        if (live.size > 3 && random() < 0.35) {
          const name = pick([...live.keys()], random);
          incremental.unregister(name);
          live.delete(name);
        } else {
          const name = `cap_${step}`;
          // Now and then one larger than SIBLING_TOOLS, whose tools' similarities are pooled.
          const m =
            random() < 0.05
              ? randomManifest(random, name, SIBLING_TOOLS + 1 + Math.floor(random() * 20))
              : randomManifest(random, name);
          incremental.register(m);
          live.set(name, m);
        }
      }
      const fresh = new Registry({ ranker });
      for (const m of [...live.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) fresh.register(m);
      // Random queries, and pieces of words only the recall rule finds.
      const queries = [
        ...Array.from({ length: 60 }, () => randomQuery(random)),
        "onfig",
        "etwork xyz",
        "elease ommi",
      ];
      for (const query of queries) {
        for (const level of ["capability", "tool"] as const) {
          const limit = 1 + Math.floor(random() * 12);
          expect(view(incremental.search(query, { limit, level })), `${query} ${level}`).toEqual(
            view(fresh.search(query, { limit, level })),
          );
        }
      }
    });
  }
});

describe("Registry: the blend over candidates equals blending every document", () => {
  it("on random corpora with arbitrary similarities (the bound is what keeps it exact)", {
    timeout: SLOW,
  }, () => {
    const random = seeded(6);
    const ranker = hashRanker();
    for (let round = 0; round < 6; round++) {
      const manifests = Array.from({ length: 150 }, (_, i) => randomManifest(random, `cap_${i}`));
      const blended = new Registry({ ranker });
      const lexical = new Registry();
      for (const m of manifests) {
        blended.register(m);
        lexical.register(m);
      }
      const capIndex = ranker.createIndex();
      for (const m of manifests) capIndex.add({ id: m.name, texts: [] });
      const lexicalIndex = createCapabilityIndex(DEFAULT_SEARCH_WEIGHTS);
      for (const m of manifests) lexicalIndex.add(m);
      for (let q = 0; q < 25; q++) {
        const query = randomQuery(random);
        const limit = 1 + Math.floor(random() * 10);
        // Brute force: every lexical match blended, plus the ranker-only rule, fully sorted.
        const lex = lexical.search(query, { limit: 1000 }).filter((h) => h.match === "ranked");
        const best = Math.max(0, ...lex.map((h) => h.score));
        const rq = capIndex.query(query)!;
        // The ranker's share for this query: 0.7, less as the best lexical hit covers more of it.
        const w = rankerShare(0.7, lexicalIndex.query(query).coverage);
        const all = new Map<string, number>();
        for (const h of lex)
          all.set(h.capability, (1 - w) * (h.score / best) + w * Math.max(0, rq.similarity(h.capability)!));
        for (const { id, similarity } of rq.nearest(Math.max(20, 2 * limit)))
          if (!all.has(id) && similarity >= 0.35) all.set(id, w * similarity);
        const expected = [...all]
          .filter(([, s]) => s > 0)
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .slice(0, limit);
        const got = blended.search(query, { limit }).filter((h) => h.match === "ranked");
        expect(
          got.map((h) => h.capability),
          query,
        ).toEqual(expected.slice(0, got.length).map(([id]) => id));
        expect(got.length).toBe(Math.min(limit, expected.length));
        for (const [i, h] of got.entries()) expect(h.score).toBeCloseTo(expected[i]![1], 12);
      }
    }
  });
});

/**
 * Tool-level search by brute force: every tool's lexical score blended with its pooled
 * similarity (its own, or in a capability larger than SIBLING_TOOLS pooled with the
 * capability's), plus the ranker-only rule, fully sorted.
 */
function bruteForceTools(
  manifests: readonly CapabilityManifest[],
  ranker: SearchRanker,
  query: string,
  limit: number,
): Array<[string, number]> {
  const lexicalIndex = createToolIndex(DEFAULT_SEARCH_WEIGHTS);
  const toolIndex = ranker.createIndex();
  const capIndex = ranker.createIndex();
  const ownerOf = new Map<string, CapabilityManifest>();
  for (const m of manifests) {
    capIndex.add({ id: m.name, texts: [] });
    for (const tool of m.tools) {
      lexicalIndex.add({ tool, capability: m });
      toolIndex.add({ id: tool.name, texts: [] });
      ownerOf.set(tool.name, m);
    }
  }
  const lex = [...lexicalIndex.scores(query)].map(([tool, score]) => ({ tool, score }));
  const best = Math.max(0, ...lex.map((h) => h.score));
  const tq = toolIndex.query(query)!;
  const cq = capIndex.query(query)!;
  const pooled = (id: string): number => {
    const owner = ownerOf.get(id)!;
    const share = ownShare(owner.tools.length);
    return share * Math.max(0, tq.similarity(id)!) + (1 - share) * Math.max(0, cq.similarity(owner.name)!);
  };
  const w = rankerShare(0.7, lexicalIndex.query(query).coverage);
  const all = new Map<string, number>();
  for (const h of lex) all.set(h.tool!, (1 - w) * (h.score / best) + w * pooled(h.tool!));
  for (const { id, similarity } of tq.nearest(Math.max(20, 2 * limit)))
    if (!all.has(id) && similarity >= 0.35) all.set(id, w * pooled(id));
  return withEffects(manifests, query, [...all], limit);
}

/** Scores times the effect factor (half for a tool whose effect contradicts the request's), best `limit`. */
function withEffects(
  manifests: readonly CapabilityManifest[],
  query: string,
  scored: Array<[string, number]>,
  limit: number,
): Array<[string, number]> {
  const wanted = requestEffect(query);
  const effectOf = new Map(manifests.flatMap((m) => m.tools.map((t) => [t.name, toolEffect(t, false)])));
  return scored
    .map(([id, s]): [string, number] => {
      const effect = effectOf.get(id);
      return [id, wanted !== undefined && effect !== undefined && effect !== wanted ? s / 2 : s];
    })
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit);
}

function expectToolSearch(
  registry: Registry,
  expected: Array<[string, number]>,
  query: string,
  limit: number,
) {
  const got = registry.search(query, { limit, level: "tool" }).filter((h) => h.match === "ranked");
  expect(
    got.map((h) => h.tool),
    query,
  ).toEqual(expected.slice(0, got.length).map(([id]) => id));
  expect(got.length).toBe(Math.min(limit, expected.length));
  for (const [i, h] of got.entries()) expect(h.score).toBeCloseTo(expected[i]![1], 12);
}

describe("Registry: tool-level search with pooled similarities equals blending every tool", () => {
  it("on random corpora with large capabilities and arbitrary similarities", { timeout: SLOW }, () => {
    const random = seeded(7);
    const ranker = hashRanker((id, hashed) =>
      id.startsWith("big_") ? (id.includes(".") ? 0.2 * hashed - 0.5 : 0.9 + 0.1 * hashed) : hashed,
    );
    for (let round = 0; round < 4; round++) {
      // Small capabilities, and a few larger than SIBLING_TOOLS whose tools' similarities are pooled.
      const manifests = Array.from({ length: 60 }, (_, i) => randomManifest(random, `cap_${i}`));
      for (let i = 0; i < 3; i++) {
        const size = SIBLING_TOOLS + 1 + Math.floor(random() * 150);
        manifests.push(
          manifest(
            `big_${i}`,
            `${sentence(random, 3)}.`,
            Array.from({ length: size }, (_, j) => [
              `${pick(["read", "write", "list", "run"], random)}_${j}`,
              `${sentence(random, 2 + Math.floor(random() * 6))}.`,
              [],
            ]),
          ),
        );
      }
      const registry = new Registry({ ranker });
      for (const m of manifests) registry.register(m);
      for (let q = 0; q < 20; q++) {
        const query = randomQuery(random);
        const limit = 1 + Math.floor(random() * 10);
        expectToolSearch(registry, bruteForceTools(manifests, ranker, query, limit), query, limit);
      }
    }
  });

  it("finds a large capability's tools that only their pooled similarity lifts above the first candidates (the ceiling)", () => {
    // Sixty small tools, each lexically better than any tool of the large capability and close
    // to the query; the large capability's tools are far from it, but it is very close, so
    // pooled they pass the small tools. The blend's first candidates are all small tools: only
    // a bound that knows pooling keeps looking.
    // Distinct filler words (`xaa`, `xab`, …): the longer a description, the lower its score.
    const filler = (k: number) =>
      `x${String.fromCharCode(97 + Math.floor(k / 26))}${String.fromCharCode(97 + (k % 26))}`;
    const words = (n: number) => Array.from({ length: n }, (_, i) => filler(i)).join(" ");
    const manifests = [
      ...Array.from({ length: 60 }, (_, i) =>
        manifest(`small_${i}`, "small.", [[`read_0`, `read ${words(i)}.`, []]]),
      ),
      manifest(
        "big_0",
        "large.",
        Array.from({ length: SIBLING_TOOLS * 10 }, (_, j) => [`read_${j}`, `read ${words(70)}.`, []]),
      ),
    ] as CapabilityManifest[];
    const ranker = hashRanker((id) => (id === "big_0" ? 1 : id.startsWith("big_0.") ? -0.5 : 0.6));
    const registry = new Registry({ ranker });
    for (const m of manifests) registry.register(m);
    for (const limit of [1, 3, 5]) {
      const expected = bruteForceTools(manifests, ranker, "read zeppelin", limit);
      // The premise: the large capability's tools lead.
      expect(expected[0]![0]).toMatch(/^big_0\./);
      expectToolSearch(registry, expected, "read zeppelin", limit);
    }
  });

  it("orders a large capability's tools within its hit by the same pooled blend", () => {
    const random = seeded(8);
    const ranker = hashRanker();
    const size = SIBLING_TOOLS * 2;
    const big = manifest(
      "big",
      "read write file folder.",
      Array.from({ length: size }, (_, j) => [`read_${j}`, `${sentence(random, 3)}.`, []]),
    );
    const registry = new Registry({ ranker });
    registry.register(big);
    const toolIndex = ranker.createIndex();
    for (const t of big.tools) toolIndex.add({ id: t.name, texts: [] });
    const capIndex = ranker.createIndex();
    capIndex.add({ id: "big", texts: [] });
    const lexicalIndex = createToolIndex(DEFAULT_SEARCH_WEIGHTS);
    for (const tool of big.tools) lexicalIndex.add({ tool, capability: big });
    // Each with a word no tool holds, so the ranker has a share (coverage below 1).
    for (const query of ["read zeppelin", "folder quasar", "write weather nebula"]) {
      const hit = registry.search(query, { limit: 1 })[0]!;
      const lexical = lexicalIndex.scoresOf(
        query,
        big.tools.map((t) => t.name),
      );
      const w = rankerShare(0.7, lexical.coverage);
      const best = Math.max(...lexical.values());
      const share = ownShare(size);
      const capSim = Math.max(0, capIndex.query(query)!.similarity("big")!);
      const tq = toolIndex.query(query, { refine: false })!;
      const expected = big.tools
        .map((t, i) => ({
          name: t.name,
          i,
          score:
            (1 - w) * ((lexical.get(t.name) ?? 0) / best) +
            w * (share * Math.max(0, tq.similarity(t.name)!) + (1 - share) * capSim),
        }))
        .sort((a, b) => b.score - a.score || a.i - b.i);
      expect(hit.tools.map((t) => t.name)).toEqual(expected.map((t) => t.name));
      for (const [i, t] of hit.tools.entries()) expect(t.score).toBeCloseTo(expected[i]!.score, 12);
    }
  });
});

describe("Registry: tool-level search with the effect factor equals factoring every tool", () => {
  it("blended: random corpora, risks and requests that open with a verb", { timeout: SLOW }, () => {
    const random = seeded(11);
    const ranker = hashRanker((_id, hashed) => hashed);
    for (let round = 0; round < 4; round++) {
      const manifests = Array.from({ length: 80 }, (_, i) =>
        withRisks(random, randomManifest(random, `cap_${i}`)),
      );
      const registry = new Registry({ ranker });
      for (const m of manifests) registry.register(m);
      for (let q = 0; q < 25; q++) {
        const query = effectQuery(random);
        const limit = 1 + Math.floor(random() * 10);
        expectToolSearch(registry, bruteForceTools(manifests, ranker, query, limit), query, limit);
      }
    }
  });

  it("lexical only: the same factor, found past the first candidates when it must be", {
    timeout: SLOW,
  }, () => {
    const random = seeded(12);
    for (let round = 0; round < 4; round++) {
      const manifests = Array.from({ length: 80 }, (_, i) =>
        withRisks(random, randomManifest(random, `cap_${i}`)),
      );
      const registry = new Registry();
      const index = createToolIndex(DEFAULT_SEARCH_WEIGHTS);
      for (const m of manifests) {
        registry.register(m);
        for (const tool of m.tools) index.add({ tool, capability: m });
      }
      for (let q = 0; q < 25; q++) {
        const query = effectQuery(random);
        const limit = 1 + Math.floor(random() * 10);
        const expected = withEffects(manifests, query, [...index.scores(query)], limit);
        expectToolSearch(registry, expected, query, limit);
      }
    }
  });

  it("a request to change passes read-only tools that match it better; one to look passes the changing ones", () => {
    const registry = new Registry();
    const risks = { create_incident: "write", incident_metrics: "read", list_incidents: "read" } as const;
    const m = manifest("incidents", "Incidents of the on-call service.", [
      ["create_incident", "Create an incident."],
      ["incident_metrics", "Incident metrics per service and urgency: high or low urgency counts."],
      ["list_incidents", "List incidents with filters."],
    ]);
    registry.register({
      ...m,
      tools: m.tools.map((t) => ({
        ...t,
        risk: risks[t.name.slice("incidents.".length) as keyof typeof risks],
      })),
    });
    const first = (q: string) => registry.search(q, { limit: 3, level: "tool" })[0]?.tool;
    expect(first("create a high urgency incident for the website service")).toBe("incidents.create_incident");
    // No opening verb: the better lexical match stays first.
    expect(first("high urgency incident for the website service")).toBe("incidents.incident_metrics");
    expect(first("show me incidents")).toBe("incidents.list_incidents");
  });
});
