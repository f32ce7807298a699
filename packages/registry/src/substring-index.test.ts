import { describe, expect, it } from "vitest";
import { SubstringIndex } from "./substring-index.js";

describe("SubstringIndex", () => {
  it("answers exactly what a scan answers, through adds and removes", () => {
    const texts = ["read a text file", "http fetch", "commit staged changes", "ab", "fetch the http headers"];
    const idx = new SubstringIndex();
    for (const [i, t] of texts.entries()) idx.add(i, t);
    const scan = (needle: string, live: Set<number>) =>
      [...live].filter((i) => needle.length >= 2 && texts[i]!.includes(needle)).sort();
    const live = new Set(texts.map((_, i) => i));
    for (const needle of ["ttp", "ab", "fetch", "ch", "e", "xyz", "http fetch", "aged ch", "tex"]) {
      expect(idx.containing(needle).sort()).toEqual(scan(needle, live));
    }
    idx.remove(1);
    live.delete(1);
    expect(idx.containing("ttp")).toEqual([4]);
    expect(idx.remove(1)).toBe(false);
    expect(idx.size).toBe(4);
    expect(() => idx.add(0, "again")).toThrow(/already/);
  });
});
