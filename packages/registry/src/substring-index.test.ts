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

describe("SubstringIndex against a scan, at random", () => {
  it("the same answer for every needle through thousands of adds and removes (compactions included)", () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const alphabet = "abcde fgh\tij\n.-_/é";
    const word = () =>
      Array.from(
        { length: 1 + Math.floor(rand() * 7) },
        () => alphabet[Math.floor(rand() * alphabet.length)],
      ).join("");
    const idx = new SubstringIndex();
    const live = new Map<number, string>();
    let next = 0;
    const check = () => {
      for (let k = 0; k < 40; k++) {
        const needle = rand() < 0.2 ? `${word()} ${word()}` : word();
        const expected = [...live]
          .filter(([, t]) => needle.length >= 2 && t.includes(needle))
          .map(([i]) => i)
          .sort((a, b) => a - b);
        expect(
          idx.containing(needle).sort((a, b) => a - b),
          JSON.stringify(needle),
        ).toEqual(expected);
      }
    };
    for (let round = 0; round < 6000; round++) {
      if (live.size > 0 && rand() < 0.45) {
        const ids = [...live.keys()];
        const id = ids[Math.floor(rand() * ids.length)]!;
        expect(idx.remove(id)).toBe(true);
        live.delete(id);
      } else {
        const text = Array.from({ length: 1 + Math.floor(rand() * 6) }, word).join(rand() < 0.5 ? " " : "  ");
        idx.add(next, text);
        live.set(next++, text);
      }
      if (round % 500 === 0) check();
    }
    check();
    expect(idx.size).toBe(live.size);
  });
});
