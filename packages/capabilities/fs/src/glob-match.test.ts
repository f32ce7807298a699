import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { compileGlobMatcher, MAX_GLOB_ALTERNATIVES } from "./glob-match.js";

// The matcher must mean what picomatch means under { dot: true } (what fs.glob used before),
// for the documented syntax, and take time bounded by pattern × path whatever the pattern.

describe("compileGlobMatcher agrees with picomatch", () => {
  const cases: Array<[string, string[]]> = [
    ["*.ts", ["a.ts", ".ts", "a.tsx", "b.ts", ".hidden.ts", "dir/a.ts"]],
    ["**/*.ts", ["a.ts", "src/a.ts", "src/deep/x/a.ts", "src/a.js", ".github/x.ts"]],
    ["src/**", ["src", "src/a", "src/a/b.ts", "srcx/a", "other/src/a"]],
    ["src/**/index.*", ["src/index.ts", "src/a/index.js", "src/a/b/index", "src/index", "index.ts"]],
    ["**", ["a", "a/b", ".git/x"]],
    ["a/**/b", ["a/b", "a/x/b", "a/x/y/b", "a/b/c", "b"]],
    ["*.{ts,js}", ["a.ts", "a.js", "a.jsx", "a.{ts,js}"]],
    ["{src,lib}/**/*.{ts,tsx}", ["src/a.ts", "lib/x/y.tsx", "test/a.ts", "src/a.js"]],
    ["file{1..3}.txt", ["file1.txt", "file2.txt", "file3.txt", "file4.txt"]],
    ["v{a..c}", ["va", "vb", "vc", "vd"]],
    ["?.md", ["a.md", "ab.md", ".md", "/.md"]],
    ["[abc]*.js", ["a.js", "b1.js", "d.js"]],
    ["[^a-c]x", ["ax", "dx", "-x"]],
    ["[[:digit:]]*", ["1a", "a1", "9"]],
    ["*a*a*b", ["aab", "aaab", "ab", "xaxaxb", "aaaaaa"]],
    ["a\\*b", ["a*b", "axb"]],
    ["!*.ts", ["a.ts", "a.js"]],
    ["a**b", ["ab", "axxb", "a/b"]],
    ["*/*", ["a/b", "a", "a/b/c"]],
    ["{a,b{c,d}}e", ["ae", "bce", "bde", "be"]],
  ];
  for (const [pattern, paths] of cases) {
    it(pattern, () => {
      const ours = compileGlobMatcher(pattern);
      const theirs = picomatch(pattern, { dot: true });
      for (const path of paths) expect(ours(path), `${pattern} ~ ${path}`).toBe(theirs(path));
    });
  }

  it("at random: patterns of the documented syntax against random paths", () => {
    let seed = 11;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const atoms = ["a", "b", ".", "x", "*", "?", "[ab]", "[^a]", "{a,b}", "{x,}"];
    const segment = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(atoms)).join("");
    const pattern = () =>
      Array.from({ length: 1 + Math.floor(rand() * 3) }, () => (rand() < 0.2 ? "**" : segment())).join("/");
    const name = () =>
      Array.from({ length: Math.floor(rand() * 4) + 1 }, () => pick(["a", "b", "x", "."])).join("");
    const path = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, name).join("/");
    let compared = 0;
    for (let i = 0; i < 400; i++) {
      const p = pattern();
      const ours = compileGlobMatcher(p);
      const theirs = picomatch(p, { dot: true });
      for (let j = 0; j < 25; j++) {
        const candidate = path();
        // picomatch never lets ** or * take a `.`/`..` part; the walker yields none.
        if (candidate.split("/").some((part) => part === "." || part === "..")) continue;
        expect(ours(candidate), `${p} ~ ${candidate}`).toBe(theirs(candidate));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(5000);
  });
});

describe("where it deliberately differs from picomatch", () => {
  it("[!a] is a negated class, as in bash and .gitignore (picomatch reads it as the characters ! and a)", () => {
    const m = compileGlobMatcher("[!a]*");
    expect([m("a"), m("ab"), m("b"), m("!x")]).toEqual([false, false, true, true]);
  });
  it("a pattern is not also matched as a literal file name (picomatch matches '[abc].js' by '[abc]*.js')", () => {
    expect(compileGlobMatcher("[abc]*.js")("[abc].js")).toBe(false);
  });
});

describe("compileGlobMatcher is never slow and refuses what it does not support", () => {
  it("a pattern that makes picomatch backtrack for minutes answers at once", () => {
    const match = compileGlobMatcher("**/*a*a*a*a*a*a*a*a*a*a*a*a*b");
    const names = Array.from({ length: 200 }, (_, i) => `${"a".repeat(200 + i)}`);
    const t0 = performance.now();
    for (const n of names) expect(match(`dir/${n}`)).toBe(false);
    // 200 names of 200–400 characters: a few million steps at most, whatever the machine.
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(match("dir/aaaaaaaaaaaaab")).toBe(true);
  });

  it("refuses extglobs and brace explosions, naming the property", () => {
    expect(() => compileGlobMatcher("@(a|b).ts", "glob")).toThrow(/extglob '@\(…\)'.*\{a,b\}/);
    expect(() => compileGlobMatcher("!(x)")).toThrow(/extglob/);
    const bomb = "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}";
    expect(() => compileGlobMatcher(bomb)).toThrow(
      new RegExp(`more than ${MAX_GLOB_ALTERNATIVES} alternatives`),
    );
  });
});
