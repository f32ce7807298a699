/**
 * A word with unquoted glob characters (`pus[h]`, `-[r]f`, `-?`, `*`) is replaced by bash
 * with the names of matching files at run time, which the parser cannot know: a file named
 * `push` or `-rf` turns it into exactly that word. The policy therefore reads such a word as
 * the set of words it could become — a pattern — and asks whether that set can hold the word
 * a rule or an option reader cares about. Quoted and escaped characters are literal, as they
 * are to bash; what is not modelled (classes like `[[:alpha:]]`, extglob) matches anything.
 */
import { decodeAnsiC, unescapeDouble } from "./shell-syntax.js";
import type { ShellWord } from "./shell-words.js";

export interface GlobPattern {
  /** Anchored: does the glob match this whole file name? */
  readonly regex: RegExp;
  /** Could a name it matches begin with `-` (so the word becomes an option)? */
  readonly mayStartWithDash: boolean;
}

const ANY = "[\\s\\S]*";
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** The pattern of a word's source text (quotes still in it). */
export function globPattern(raw: string): GlobPattern {
  let body = "";
  // What the first element can start with: undefined until one is seen.
  let first: ((c: string) => boolean) | undefined;
  const literal = (text: string) => {
    if (text === "") return;
    first ??= (c) => c === text[0];
    body += escapeRegExp(text);
  };
  const wild = (regex: string, starts: (c: string) => boolean) => {
    first ??= starts;
    body += regex;
  };
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    const n = raw[i + 1];
    if (c === "\\") {
      if (n !== undefined && n !== "\n") literal(n);
      i++;
    } else if (c === "'") {
      const end = raw.indexOf("'", i + 1);
      const stop = end === -1 ? raw.length : end;
      literal(raw.slice(i + 1, stop));
      i = stop;
    } else if (c === "$" && n === "'") {
      let j = i + 2;
      while (j < raw.length && raw[j] !== "'") j += raw[j] === "\\" ? 2 : 1;
      literal(decodeAnsiC(raw.slice(i + 2, j)));
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      while (j < raw.length && raw[j] !== '"') j += raw[j] === "\\" ? 2 : 1;
      const inner = raw.slice(i + 1, j);
      if (/[$`]/.test(inner)) wild(ANY, () => true);
      else literal(unescapeDouble(inner));
      i = j;
    } else if (c === "$" || c === "`") {
      // An expansion: its value is run-time data; it may be anything.
      wild(ANY, () => true);
      i = skipExpansion(raw, i);
    } else if (/[@!+*?]/.test(c) && n === "(") {
      // extglob `@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`: not modelled, matches anything.
      wild(ANY, () => true);
      i = matching(raw, i + 1, "(", ")");
    } else if (c === "*") wild(ANY, () => true);
    else if (c === "?") wild("[\\s\\S]", () => true);
    else if (c === "[") {
      const cls = bracket(raw, i);
      if (cls) {
        wild(cls.regex, (ch) => new RegExp(`^${cls.regex}$`).test(ch));
        i = cls.end;
      } else literal("[");
    } else literal(c);
  }
  return { regex: new RegExp(`^${body}$`), mayStartWithDash: first?.("-") ?? false };
}

/** `[…]` at `i`: a JS character class and the index of its `]`, or undefined when it is a literal `[`. */
function bracket(raw: string, i: number): { regex: string; end: number } | undefined {
  let j = i + 1;
  let negate = false;
  if (raw[j] === "!" || raw[j] === "^") {
    negate = true;
    j++;
  }
  const from = j;
  if (raw[j] === "]") j++;
  while (j < raw.length && raw[j] !== "]") j++;
  if (j >= raw.length) return undefined;
  const inner = raw.slice(from, j);
  // Classes, collating symbols, quotes or escapes inside: over-approximate as any one character.
  if (/\[[:=.]|['"\\$`]/.test(inner)) return { regex: "[\\s\\S]", end: j };
  const body = inner.replace(/[\\\]^[]/g, "\\$&");
  return { regex: `[${negate ? "^" : ""}${body}]`, end: j };
}

function matching(raw: string, i: number, open: string, close: string): number {
  let depth = 0;
  for (let j = i; j < raw.length; j++) {
    if (raw[j] === "\\") j++;
    else if (raw[j] === open) depth++;
    else if (raw[j] === close && --depth === 0) return j;
  }
  return raw.length;
}

function skipExpansion(raw: string, i: number): number {
  if (raw[i] === "`") {
    const end = raw.indexOf("`", i + 1);
    return end === -1 ? raw.length : end;
  }
  const n = raw[i + 1];
  if (n === "(") return matching(raw, i + 1, "(", ")");
  if (n === "{") return matching(raw, i + 1, "{", "}");
  const m = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9@*#?$!-]/.exec(raw.slice(i + 1));
  return m ? i + m[0].length : i;
}

/** Could this word, once bash replaces its glob with file names, be `target`? */
export function wordMayBe(word: ShellWord, target: string): boolean {
  if (!word.glob) return word.value === target;
  return globPattern(word.raw).regex.test(target);
}

/** Could this glob word become an option (a file name starting with `-`)? */
export function globMayBeOption(word: ShellWord): boolean {
  return word.glob && globPattern(word.raw).mayStartWithDash;
}
