import { Registry } from "@capgate/registry";
import { describe, expect, it } from "vitest";

type CapabilityManifest = Parameters<Registry["register"]>[0];

import { createEmbedder } from "./embed.js";
import { createSemanticRanker } from "./semantic-ranker.js";
import { createVectorIndex } from "./vector-index.js";
import { shippedVectorTable } from "./vector-table.js";

function manifest(name: string, description: string, tools: Array<[string, string]>): CapabilityManifest {
  return {
    name,
    version: "1.0.0",
    description,
    profileFit: [],
    tools: tools.map(([verb, d]) => ({
      name: `${name}.${verb}`,
      description: d,
      inputSchema: { type: "object", additionalProperties: false, properties: { q: { type: "string" } } },
    })),
  };
}

const weather = () =>
  manifest("weather_tool", "Current conditions and forecasts for any city.", [
    ["current", "Conditions now: temperature, wind and humidity."],
  ]);
const finance = () =>
  manifest("stock_tool", "Share prices and market data.", [["quote", "Latest quote of a ticker."]]);
const recipes = () =>
  manifest("recipe_tool", "Cooking recipes by ingredient.", [["find", "Recipes that use an ingredient."]]);

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe("the embedder", () => {
  const embed = createEmbedder(shippedVectorTable());

  it("puts related words closer than unrelated ones", () => {
    const car = embed.embed("car")!;
    expect(cosine(car, embed.embed("automobile")!)).toBeGreaterThan(cosine(car, embed.embed("banana")!));
  });

  it("splits identifiers and run-together words it does not know", () => {
    expect(embed.embed("create_issue")).toBeDefined();
    expect(embed.embed("airweatherdata")).toBeDefined();
    const webhook = embed.embed("webhook")!; // not in the vocabulary: web + hook
    expect(cosine(webhook, embed.embed("web hook")!)).toBeGreaterThan(0.99);
    expect(embed.embed("zzqxv")).toBeUndefined();
    expect(embed.embed("the of and")).toBeUndefined(); // stop words only
  });
});

describe("createSemanticRanker in a Registry", () => {
  it("finds what shares no word with the query, only with the ranker on", () => {
    const query = "What's the temperature in Miami?";
    const off = new Registry();
    const on = new Registry({ ranker: createSemanticRanker() });
    for (const m of [weather(), finance(), recipes()]) {
      off.register(m);
      on.register(m);
    }
    expect(off.search("is it going to rain tomorrow")[0]?.capability).not.toBe("weather_tool");
    expect(on.search("is it going to rain tomorrow")[0]?.capability).toBe("weather_tool");
    expect(on.search(query)[0]?.capability).toBe("weather_tool");
    expect(on.search("how much is apple stock worth", { level: "tool" })[0]?.tool).toBe("stock_tool.quote");
    expect(on.ranker?.name).toBe("semantic-sif-glove100");
  });

  it("follows register and unregister (incremental semantic index)", () => {
    const r = new Registry({ ranker: createSemanticRanker() });
    r.register(finance());
    r.register(recipes());
    expect(r.search("is it going to rain tomorrow").map((h) => h.capability)).not.toContain("weather_tool");
    r.register(weather());
    expect(r.search("is it going to rain tomorrow")[0]?.capability).toBe("weather_tool");
    r.unregister("weather_tool");
    expect(r.search("is it going to rain tomorrow").map((h) => h.capability)).not.toContain("weather_tool");
  });

  it("returns nothing for a query with no information", () => {
    const r = new Registry({ ranker: createSemanticRanker() });
    for (const m of [weather(), finance(), recipes()]) r.register(m);
    expect(r.search("the of and to")).toEqual([]);
  });
});

describe("the vector index above the exact limit", () => {
  it("finds a document by its own text among 3,000 (approximate cells), and stays correct after removals", () => {
    const embed = createEmbedder(shippedVectorTable());
    const idx = createVectorIndex(embed);
    const words = [
      "river",
      "music",
      "engine",
      "garden",
      "bank",
      "planet",
      "doctor",
      "school",
      "market",
      "storm",
    ];
    const more = [
      "guitar",
      "harvest",
      "orbit",
      "vaccine",
      "loan",
      "lesson",
      "tractor",
      "flood",
      "violin",
      "clinic",
    ];
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) {
      texts.push(
        `${words[i % 10]} ${more[Math.floor(i / 10) % 10]} ${words[Math.floor(i / 100) % 10]} ${more[Math.floor(i / 1000) % 10]}`,
      );
      idx.add({ id: `d${i}`, texts: [texts[i]!] });
    }
    expect(idx.size).toBe(3000);
    let found = 0;
    for (let i = 0; i < 3000; i += 97) {
      const hits = idx.query(texts[i]!)!.nearest(10);
      if (hits.some((h) => h.similarity > 0.999)) found++;
    }
    expect(found).toBeGreaterThanOrEqual(30); // of 31 probes
    for (let i = 0; i < 3000; i += 2) idx.remove(`d${i}`);
    expect(idx.size).toBe(1500);
    const hits = idx.query(texts[1]!)!.nearest(5);
    expect(hits.every((h) => Number(h.id.slice(1)) % 2 === 1)).toBe(true);
    expect(() => idx.add({ id: "d1", texts: ["x"] })).toThrow(/already/);
  });
});

describe("pseudo-relevance feedback", () => {
  const embed = createEmbedder(shippedVectorTable());
  const docs: Array<[string, string]> = [
    ["music", "guitar violin orchestra concert"],
    ["farm", "tractor harvest barley field"],
    ["bank", "loan mortgage interest rate"],
  ];

  it("answers with the query moved towards its nearest documents", () => {
    const plain = createVectorIndex(embed);
    const fed = createVectorIndex(embed, { feedback: { docs: 1, weight: 1 } });
    for (const [id, text] of docs) {
      plain.add({ id, texts: [text] });
      fed.add({ id, texts: [text] });
    }
    // Rocchio with one document and weight 1: q' = unit(q + music).
    const q = embed.embed("cello")!;
    const music = embed.embed(docs[0]![1])!;
    const moved = q.map((x, i) => x + music[i]!);
    const norm = Math.sqrt(cosine(moved, moved));
    const expected = moved.map((x) => x / norm);
    for (const [id, text] of docs) {
      expect(fed.query("cello")!.similarity(id)).toBeCloseTo(cosine(expected, embed.embed(text)!), 5);
      expect(plain.query("cello")!.similarity(id)).toBeCloseTo(cosine(q, embed.embed(text)!), 5);
    }
    expect(fed.query("cello")!.similarity("music")).toBeGreaterThan(
      plain.query("cello")!.similarity("music")!,
    );
    expect(fed.query("cello")!.nearest(1)[0]?.id).toBe("music");
    // A caller comparing a few known documents asks for no refinement: the plain query.
    for (const [id, text] of docs) {
      expect(fed.query("cello", { refine: false })!.similarity(id)).toBeCloseTo(
        cosine(q, embed.embed(text)!),
        5,
      );
    }
  });

  it("is skipped when the index holds no more documents than it would average", () => {
    const fed = createVectorIndex(embed, { feedback: { docs: 3, weight: 1 } });
    for (const [id, text] of docs) fed.add({ id, texts: [text] });
    const q = embed.embed("cello")!;
    expect(fed.query("cello")!.similarity("farm")).toBeCloseTo(cosine(q, embed.embed(docs[1]![1])!), 5);
  });

  it("is on in the default ranker and can be turned off", () => {
    const on = new Registry({ ranker: createSemanticRanker() });
    const off = new Registry({ ranker: createSemanticRanker({ feedback: false }) });
    const all = [weather(), finance(), recipes()];
    for (const extra of ["alpha", "beta", "gamma"]) {
      all.push(
        manifest(`${extra}_tool`, `Daily ${extra} horoscope readings.`, [["read", "Read a horoscope."]]),
      );
    }
    for (const m of all) {
      on.register(m);
      off.register(m);
    }
    const score = (r: Registry) => r.search("is it going to rain tomorrow")[0];
    expect(score(on)?.capability).toBe("weather_tool");
    expect(score(off)?.capability).toBe("weather_tool");
    expect(score(on)?.score).not.toBeCloseTo(score(off)!.score, 6);
  });
});

describe("incremental registration with the semantic index", () => {
  it("after registers and unregisters, every search equals a fresh registry's (capability and tool level)", {
    timeout: 120_000,
  }, () => {
    const topics = [
      ["weather", "forecast rain wind temperature for a city"],
      ["music", "play songs albums and playlists"],
      ["finance", "stock prices market quotes and dividends"],
      ["recipes", "cook meals from ingredients"],
      ["travel", "book flights hotels and trains"],
      ["files", "read write and list files in a folder"],
      ["mail", "send and receive email messages"],
      ["maps", "directions routes and places nearby"],
    ] as const;
    const made = (i: number): CapabilityManifest => {
      const [topic, words] = topics[i % topics.length]!;
      return manifest(`${topic}_${i}`, `Tools about ${words}.`, [
        ["search", `Search ${topic} by ${words.split(" ")[i % 3]}.`],
        ["get", `Get one ${topic} item with its details.`],
      ]);
    };
    const ranker = createSemanticRanker();
    const incremental = new Registry({ ranker });
    const live = new Map<string, CapabilityManifest>();
    for (let i = 0; i < 120; i++) {
      const m = made(i);
      incremental.register(m);
      live.set(m.name, m);
      // Remove every third one again, some right away and some later.
      if (i % 3 === 2) {
        const gone = made(i - (i % 2 === 0 ? 0 : 2)).name;
        if (incremental.unregister(gone)) live.delete(gone);
      }
    }
    const fresh = new Registry({ ranker });
    for (const m of [...live.values()].reverse()) fresh.register(m);
    expect(incremental.size).toBe(fresh.size);
    const view = (r: Registry, q: string, level: "capability" | "tool") =>
      r
        .search(q, { limit: 8, level })
        .map((h) => [h.tool ?? h.capability, h.score, h.tools.map((t) => t.name)]);
    for (const q of [
      "will it rain tomorrow",
      "buy shares",
      "play a song",
      "find a cheap flight",
      "open a text file",
      "email my boss",
      "how do I get to the station",
      "dinner ideas with chicken",
    ]) {
      for (const level of ["capability", "tool"] as const) {
        expect(view(incremental, q, level), `${q} ${level}`).toEqual(view(fresh, q, level));
      }
    }
  });
});
