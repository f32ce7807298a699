// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { expandBraces, MAX_BRACE_WORDS } from "./shell-braces.js";

/** Words as bash prints them after all of its expansions (globbing off), one per `<…>`. */
function bashWords(script: string): string {
  const r = spawnSync("bash", ["--noprofile", "--norc", "-c", script], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", x: "X", y: "Y" },
  });
  if (r.error) throw r.error;
  return r.stdout;
}

/** Brace forms checked against bash itself: the expansion, then bash's other expansions with braces off. */
const ORACLE = [
  "{-c,}",
  "{a,b}c",
  "x{a,b}{1,2}",
  "{a{b,c}}",
  "{a}b,c}",
  "{1..3}",
  "{3..1}",
  "{01..10..3}",
  "{a..e}",
  "{e..a..2}",
  "{-3..3..2}",
  "{a..}",
  "{1..b}",
  "{..}",
  "{,}",
  "{}",
  "a{}b",
  "'{a,b}'",
  "\\{a,b}",
  '"{a,b}"',
  "{'a,b',c}",
  "${x}{a,b}",
  "{a,b}${y:-q}",
  "{x,${y}}",
  "@{u}",
  "{a,{b,c}d}e",
  "{-{r,f},}",
  "-{r,f}",
  "{a..c}{1..2}",
  "{a,b",
  "a,b}",
  "{-1..-3}",
  "{+1..3}",
  "{1..10..-3}",
  "{A..C}",
  "{ab..cd}",
  "{1.5..3}",
  "{{a,b}}",
  "{a,b}}",
  "{{a,b}",
  "pre{,}post",
  "{'',a}",
  "{\\,,x}",
  "{$'a,b',c}",
  "{a\\}b,c}",
  "{0..2}{a,}",
  "{%,}",
  "{-..z}",
  "{push,}",
  "{'alias.x=!xdg-open u',}",
  "{a,$(echo b,c)}",
  "{a,`echo x`}",
  '{a,"$(echo "q,r")"}',
  "${x:-{a,b}}{c,d}",
  "$((1+2)){a,b}",
];

describe("brace expansion: the words bash makes", () => {
  it.each(ORACLE)("%s", (word) => {
    const r = expandBraces(word);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    const real = bashWords(`set -f; printf '<%s>\\n' ${word}`);
    const mine = bashWords(`set -f +B; printf '<%s>\\n' ${r.words.join(" ")}; :`);
    // An empty unquoted result is dropped by bash; printf with no word still prints `<>` once.
    expect(mine, JSON.stringify(r.words)).toBe(real);
  });

  it("refuses what it cannot be certain of, and what is too large", () => {
    for (const word of ["{Z..a}", "{1..100000}", "{a,b}{c,d}{1..100}", "{a,'b}", "{a,$(echo b}"]) {
      const r = expandBraces(word);
      expect(r.ok, word).toBe(false);
    }
    expect(expandBraces("{1..256}").ok).toBe(true);
    expect(expandBraces(`{1..${MAX_BRACE_WORDS + 1}}`).ok).toBe(false);
  });

  it("leaves words without a brace expansion alone", () => {
    for (const word of ["abc", "${x}", "{}", "a{b}c", "'{a,b}'", "\\{a,b\\}", "@{upstream}"]) {
      expect(expandBraces(word)).toEqual({ ok: true, words: [word] });
    }
  });
});
