import { InvalidArgumentsError } from "@capgate/tools";

/**
 * Glob matching in time proportional to pattern × path, never more: fs.glob's and
 * fs.search's `glob` come from the model, and picomatch turns them into regular expressions
 * that backtrack without bound (`*a*a*a*a*a*a*a*a*b` against a 200-character name ran for
 * minutes on the event loop, freezing the server). The syntax is the documented one —
 * `*` within a name, `**` across directories, `?`, `[…]` classes (`!`/`^` negation, ranges,
 * POSIX names such as `[[:digit:]]`), `{a,b}` alternatives and `{1..3}` ranges, `\` escapes —
 * with picomatch's meaning under `{ dot: true }` (checked against picomatch by a
 * differential test). Extglobs (`@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`) are refused by name.
 */

/** Most alternatives one pattern may expand to through its braces. */
export const MAX_GLOB_ALTERNATIVES = 1024;

type Token =
  | { kind: "char"; c: string }
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "class"; negated: boolean; test: (c: string) => boolean };

/** One `/`-separated part of a pattern: `**` alone, or a sequence of tokens. */
type Segment = { kind: "globstar" } | { kind: "tokens"; tokens: Token[] };

/** A compiled pattern: a path matches when any alternative does. */
export type GlobMatcher = (relPath: string) => boolean;

export function compileGlobMatcher(pattern: string, property = "pattern", shown = pattern): GlobMatcher {
  const extglob = /(^|[^\\])([@!+*?])\(/.exec(pattern);
  if (extglob) {
    throw new InvalidArgumentsError(
      `${property} ${JSON.stringify(shown)} uses the extglob '${extglob[2]}(…)', which fs globs do not support: use {a,b} alternatives and * instead.`,
      { property },
    );
  }
  // A leading `!` (not an extglob) negates the whole pattern, as in picomatch.
  const negated = pattern.startsWith("!");
  const alternatives = expandBraces(negated ? pattern.slice(1) : pattern, property, shown);
  const compiled = alternatives.map((alt) => alt.split("/").map(compileSegment));
  return (relPath: string) => {
    const parts = relPath.split("/");
    return compiled.some((segments) => matchSegments(segments, parts)) !== negated;
  };
}

/** Brace expansion, nested, left to right, bounded by MAX_GLOB_ALTERNATIVES. */
function expandBraces(pattern: string, property: string, shown: string): string[] {
  const open = findBrace(pattern);
  if (!open) return [pattern];
  const { start, end, options } = open;
  const head = pattern.slice(0, start);
  const tails = expandBraces(pattern.slice(end + 1), property, shown);
  const out: string[] = [];
  for (const option of options) {
    for (const inner of expandBraces(option, property, shown)) {
      for (const tail of tails) {
        out.push(head + inner + tail);
        if (out.length > MAX_GLOB_ALTERNATIVES) {
          throw new InvalidArgumentsError(
            `${property} ${JSON.stringify(shown)} expands to more than ${MAX_GLOB_ALTERNATIVES} alternatives through its {…} braces; use a simpler pattern.`,
            { property },
          );
        }
      }
    }
  }
  return out;
}

/** The first top-level `{…}` that holds a `,` or a `..` range, with its options; undefined when none. */
function findBrace(pattern: string): { start: number; end: number; options: string[] } | undefined {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "[") {
      const close = classEnd(pattern, i);
      if (close !== -1) i = close;
      continue;
    }
    if (c !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < pattern.length; j++) {
      const d = pattern[j];
      if (d === "\\") {
        j++;
        continue;
      }
      if (d === "{") depth++;
      else if (d === "}") {
        depth--;
        if (depth === 0) {
          const body = pattern.slice(i + 1, j);
          if (commas.length > 0) {
            const options: string[] = [];
            let from = i + 1;
            for (const k of commas) {
              options.push(pattern.slice(from, k));
              from = k + 1;
            }
            options.push(pattern.slice(from, j));
            return { start: i, end: j, options };
          }
          const range = /^(-?\d+)\.\.(-?\d+)$|^([a-zA-Z])\.\.([a-zA-Z])$/.exec(body);
          if (range) return { start: i, end: j, options: rangeOptions(range) };
          break; // `{x}` is literal text
        }
      } else if (d === "," && depth === 1) commas.push(j);
    }
  }
  return undefined;
}

function rangeOptions(m: RegExpExecArray): string[] {
  const out: string[] = [];
  if (m[1] !== undefined) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const step = a <= b ? 1 : -1;
    for (let n = a; out.length <= MAX_GLOB_ALTERNATIVES; n += step) {
      out.push(String(n));
      if (n === b) break;
    }
    return out;
  }
  const a = m[3]!.charCodeAt(0);
  const b = m[4]!.charCodeAt(0);
  const step = a <= b ? 1 : -1;
  for (let n = a; ; n += step) {
    out.push(String.fromCharCode(n));
    if (n === b) break;
  }
  return out;
}

/** Index of the `]` closing the class that opens at `start`, or -1 when it is not a class. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === "!" || pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") {
      i++;
      continue;
    }
    if (pattern[i] === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf(":]", i + 2);
      if (close !== -1) {
        i = close + 1;
        continue;
      }
    }
    if (pattern[i] === "]") return i;
  }
  return -1;
}

const POSIX_CLASSES: Record<string, (c: string) => boolean> = {
  alpha: (c) => /[A-Za-z]/.test(c),
  digit: (c) => c >= "0" && c <= "9",
  alnum: (c) => /[A-Za-z0-9]/.test(c),
  upper: (c) => c >= "A" && c <= "Z",
  lower: (c) => c >= "a" && c <= "z",
  space: (c) => /\s/.test(c),
  xdigit: (c) => /[0-9A-Fa-f]/.test(c),
  punct: (c) => /[!-/:-@[-`{-~]/.test(c),
  word: (c) => /\w/.test(c),
  blank: (c) => c === " " || c === "\t",
  cntrl: (c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127,
  graph: (c) => c.charCodeAt(0) > 32 && c.charCodeAt(0) < 127,
  print: (c) => c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127,
};

function compileSegment(text: string): Segment {
  if (text === "**") return { kind: "globstar" };
  const tokens: Token[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      tokens.push({ kind: "char", c: text[++i]! });
    } else if (c === "*") {
      // Runs of stars within a segment (`a**b`) are one star.
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
    } else if (c === "?") {
      tokens.push({ kind: "any" });
    } else if (c === "[") {
      const end = classEnd(text, i);
      if (end === -1) tokens.push({ kind: "char", c });
      else {
        tokens.push(compileClass(text.slice(i + 1, end)));
        i = end;
      }
    } else tokens.push({ kind: "char", c });
  }
  return { kind: "tokens", tokens };
}

function compileClass(body: string): Token {
  let i = 0;
  const negated = body[0] === "!" || body[0] === "^";
  if (negated) i++;
  const tests: Array<(c: string) => boolean> = [];
  for (; i < body.length; i++) {
    let c = body[i]!;
    if (c === "[" && body[i + 1] === ":") {
      const close = body.indexOf(":]", i + 2);
      const named = close === -1 ? undefined : POSIX_CLASSES[body.slice(i + 2, close)];
      if (named) {
        tests.push(named);
        i = close + 1;
        continue;
      }
    }
    if (c === "\\" && i + 1 < body.length) c = body[++i]!;
    if (body[i + 1] === "-" && i + 2 < body.length) {
      let hi = body[i + 2]!;
      let skip = 2;
      if (hi === "\\" && i + 3 < body.length) {
        hi = body[i + 3]!;
        skip = 3;
      }
      const lo = c;
      tests.push((x) => x >= lo && x <= hi);
      i += skip;
    } else {
      const only = c;
      tests.push((x) => x === only);
    }
  }
  return { kind: "class", negated, test: (x) => tests.some((t) => t(x)) };
}

/** Whether one name matches one segment's tokens: the classic wildcard walk, O(name × tokens). */
function matchName(tokens: readonly Token[], name: string): boolean {
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const token = tokens[t];
    if (token !== undefined && token.kind !== "star" && matchOne(token, name[n]!)) {
      t++;
      n++;
    } else if (token?.kind === "star") {
      starT = t++;
      starN = n;
    } else if (starT !== -1) {
      t = starT + 1;
      n = ++starN;
    } else return false;
  }
  while (tokens[t]?.kind === "star") t++;
  return t === tokens.length;
}

function matchOne(token: Token, c: string): boolean {
  switch (token.kind) {
    case "char":
      return token.c === c;
    case "any":
      return c !== "/";
    case "class":
      return token.test(c) !== token.negated && c !== "/";
    default:
      return false;
  }
}

/**
 * Whether the path's parts match the pattern's segments; `**` takes zero or more whole
 * parts. Memoised over (segment, part): at most segments × parts states.
 */
function matchSegments(segments: readonly Segment[], parts: readonly string[]): boolean {
  const memo = new Map<number, boolean>();
  const width = parts.length + 1;
  const walk = (s: number, p: number): boolean => {
    if (s === segments.length) return p === parts.length;
    const key = s * width + p;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const seg = segments[s]!;
    let result: boolean;
    if (seg.kind === "globstar") {
      // `**` never takes a `.` or `..` part; the walker gives none.
      result = walk(s + 1, p) || (p < parts.length && walk(s, p + 1));
    } else result = p < parts.length && matchName(seg.tokens, parts[p]!) && walk(s + 1, p + 1);
    memo.set(key, result);
    return result;
  };
  return walk(0, 0);
}
