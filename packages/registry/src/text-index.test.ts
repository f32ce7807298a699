import { describe, expect, it } from "vitest";
import { createTextIndex } from "./text-index.js";

interface Note {
  id: string;
  title: string;
  body: string;
}

function notes() {
  const index = createTextIndex<Note>({
    id: (n) => n.id,
    fields: { title: (n) => n.title, body: (n) => n.body },
    weights: { title: 3, body: 1 },
  });
  index.add({ id: "a", title: "Deploy checklist", body: "Run the tests, then tag the release." });
  index.add({ id: "b", title: "Groceries", body: "Milk, eggs, and a release of tension." });
  index.add({ id: "c", title: "Configuration", body: "The server reads its settings from config.toml." });
  return index;
}

describe("createTextIndex", () => {
  it("ranks by field weight: a title match beats a body match", () => {
    const hits = notes().search("deploy release");
    expect(hits.map((h) => h.id)).toEqual(["a", "b"]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it("says how much of the query its best hit covers, by the IDF of the words matched", () => {
    const index = notes();
    // Every word of the query is in "a": all of it covered.
    expect(index.query("deploy checklist").coverage).toBe(1);
    // "milk" is only in "b", the best hit for "deploy milk" is one of the two: part of it.
    const part = index.query("deploy milk").coverage;
    expect(part).toBeGreaterThan(0.3);
    expect(part).toBeLessThan(0.7);
    // A word no document holds counts against coverage with the highest IDF there is.
    expect(index.query("deploy zeppelin").coverage).toBeLessThan(0.5);
    expect(index.query("zeppelin").coverage).toBe(0);
    expect(index.query("").coverage).toBe(0);
    // Among a few known documents: the best of those.
    expect(index.scoresOf("deploy milk", ["a", "b"]).coverage).toBe(part);
    expect(index.scoresOf("deploy checklist", ["a"]).coverage).toBe(1);
    expect(index.scoresOf("deploy checklist", ["b", "c"]).coverage).toBe(0);
  });

  it("adds and removes incrementally", () => {
    const index = notes();
    expect(index.size).toBe(3);
    expect(index.remove("a")).toBe(true);
    expect(index.remove("a")).toBe(false);
    expect(index.has("a")).toBe(false);
    expect(index.search("deploy")).toEqual([]);
    index.add({ id: "a", title: "Deploy again", body: "" });
    expect(index.search("deploy").map((h) => h.id)).toEqual(["a"]);
  });

  it("refuses a second document with the same id", () => {
    const index = notes();
    expect(() => index.add({ id: "b", title: "x", body: "y" })).toThrow(/already indexed/);
  });

  it("matches word forms, prefixes of unknown words and typos", () => {
    const index = notes();
    expect(index.search("reading")[0]?.id).toBe("c");
    expect(index.search("configur")[0]?.id).toBe("c");
    expect(index.search("groceres")[0]?.id).toBe("b");
  });

  it("matches a query word's synonyms as other forms of it, at half weight, counted once", () => {
    const docs = [
      { id: "list", title: "list_teams", body: "List the teams." },
      { id: "create", title: "create_team", body: "Create a team." },
      { id: "show", title: "show_team", body: "Show a team." },
    ];
    const make = (synonyms?: Record<string, string[]>) => {
      const index = createTextIndex<Note>({
        id: (n) => n.id,
        fields: { title: (n) => n.title, body: (n) => n.body },
        weights: { title: 3, body: 1 },
        ...(synonyms ? { synonyms } : {}),
      });
      for (const d of docs) index.add(d);
      return index;
    };
    const plain = make();
    const index = make({ show: ["list"], showing: ["list"], add: ["create"], new: ["nothing-indexed"] });
    // Without the table, "show" finds only the document that says it.
    expect(plain.search("show").map((h) => h.id)).toEqual(["show"]);
    // With it, "show" also reaches "list", below the word itself.
    expect(index.search("show").map((h) => h.id)).toEqual(["show", "list"]);
    const viaSynonym = index.query("show").score("list");
    const direct = index.query("list").score("list");
    expect(viaSynonym).toBeGreaterThan(0);
    expect(viaSynonym).toBeLessThan(direct);
    // Word forms of the key: "showing" is analysed to the same stem as "show".
    expect(index.query("showing").score("list")).toBeCloseTo(viaSynonym, 12);
    // A word only the synonym matches is covered: the query is all in "create".
    expect(plain.query("add team").coverage).toBeLessThan(1);
    expect(index.query("add team").coverage).toBe(1);
    // A synonym the query says itself is not added again.
    expect(index.query("show list").score("list")).toBeCloseTo(plain.query("show list").score("list"), 12);
    // scoresOf agrees with query.
    const some = index.scoresOf("add team", ["create", "list"]);
    expect(some.get("create")).toBeCloseTo(index.query("add team").score("create"), 12);
    expect(some.coverage).toBe(1);
    // A synonym the index does not hold changes nothing.
    expect(index.query("new team").score("create")).toBeCloseTo(plain.query("new team").score("create"), 12);
  });

  it("refuses a synonym table that is not words", () => {
    const bad = { show: "list" } as unknown as Record<string, string[]>;
    expect(() =>
      createTextIndex<Note>({ id: (n) => n.id, fields: { title: (n) => n.title }, synonyms: bad }),
    ).toThrow(/synonyms of "show"/);
  });

  it("respects the limit and returns nothing for an empty query", () => {
    const index = notes();
    expect(index.search("release", 1)).toHaveLength(1);
    expect(index.search("release", 0)).toEqual([]);
    expect(index.search("   ")).toEqual([]);
  });

  it("clears", () => {
    const index = notes();
    index.clear();
    expect(index.size).toBe(0);
    expect(index.search("deploy")).toEqual([]);
  });

  it("rejects a configuration without fields or with a bad weight", () => {
    expect(() => createTextIndex<Note>({ id: (n) => n.id, fields: {} })).toThrow(/at least one field/);
    expect(() =>
      createTextIndex<Note>({ id: (n) => n.id, fields: { title: (n) => n.title }, weights: { title: -1 } }),
    ).toThrow(/weight/);
  });
});
