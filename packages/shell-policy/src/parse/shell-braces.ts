/**
 * Bash brace expansion on the source text of one word, the way bash's braces.c does it
 * (before every other expansion): comma lists `{a,b}`, sequences `{1..3}`/`{a..e}`/`{01..10..2}`,
 * nesting, quoting (`'{a,b}'`, `\{a,b}` and `"{a,b}"` are literal), `${…}` not a brace. The
 * policy judges the words bash will pass (`git {push,} origin` is `git push origin`), so a
 * word with braces is expanded before anything reads it; what cannot be expanded with
 * certainty is refused, never guessed.
 */

/** More words than this from one command's brace expansions are denied rather than checked. */
export const MAX_BRACE_WORDS = 256;

export type BraceExpansion = { ok: true; words: string[] } | { ok: false; reason: string };

class Uncertain extends Error {}

/**
 * The words bash makes of `text` (a word's source, quotes still in it) by brace expansion.
 * `[text]` when it has none. Fails when the result would exceed `limit` words or when the
 * word holds syntax (command substitution, backticks) whose interplay with braces capgate
 * does not model.
 */
export function expandBraces(text: string, limit = MAX_BRACE_WORDS): BraceExpansion {
  if (!text.includes("{")) return { ok: true, words: [text] };
  try {
    return { ok: true, words: expand(text, limit) };
  } catch (error) {
    if (error instanceof Uncertain) return { ok: false, reason: error.message };
    throw error;
  }
}

/** Index just past the quoted or escaped unit at `i`, or `i` itself when none starts there. */
function skipUnit(text: string, i: number): number {
  const c = text[i];
  if (c === "\\") return Math.min(i + 2, text.length);
  if (c === "'") {
    const end = text.indexOf("'", i + 1);
    if (end === -1) throw new Uncertain("an unterminated quote");
    return end + 1;
  }
  if (c === "$" && text[i + 1] === "'") {
    let j = i + 2;
    while (j < text.length && text[j] !== "'") j += text[j] === "\\" ? 2 : 1;
    if (j >= text.length) throw new Uncertain("an unterminated quote");
    return j + 1;
  }
  if (c === '"') {
    let j = i + 1;
    while (j < text.length && text[j] !== '"') {
      if (text[j] === "`" || (text[j] === "$" && (text[j + 1] === "(" || text[j + 1] === "{"))) {
        j = skipUnit(text, j);
        continue;
      }
      j += text[j] === "\\" ? 2 : 1;
    }
    if (j >= text.length) throw new Uncertain("an unterminated quote");
    return j + 1;
  }
  if (c === "`") {
    const close = text.indexOf("`", i + 1);
    if (close === -1) throw new Uncertain("an unterminated backtick substitution");
    return close + 1;
  }
  // `$(…)`, `$((…))` and `${…}` are skipped whole, as bash's brace_gobbler does: their braces are not this word's.
  if (c === "$" && text[i + 1] === "(") return balanced(text, i + 1, "(", ")");
  if (c === "$" && text[i + 1] === "{") return balanced(text, i + 1, "{", "}");
  return i;
}

/** Index just past the `close` matching the `open` at `i`, quoted units inside skipped. */
function balanced(text: string, i: number, open: string, close: string): number {
  let depth = 0;
  for (let j = i; j < text.length; ) {
    const next = j === i ? j : skipUnit(text, j);
    if (next !== j) {
      j = next;
      continue;
    }
    if (text[j] === open) depth++;
    else if (text[j] === close && --depth === 0) return j + 1;
    j++;
  }
  throw new Uncertain(`an unterminated \`${open}\` in a word with braces`);
}

/** The first unquoted `{` from `i`, or -1. */
function findOpen(text: string, i: number): number {
  while (i < text.length) {
    const next = skipUnit(text, i);
    if (next !== i) {
      i = next;
      continue;
    }
    if (text[i] === "{") return i;
    i++;
  }
  return -1;
}

/**
 * The `}` closing the brace opened just before `i`: bash's brace_gobbler, where a `}` at the
 * outer level only closes once a `,` or a `..` (not `..}`) was seen at that level.
 */
function findClose(text: string, i: number): number {
  let level = 0;
  let separators = 0;
  while (i < text.length) {
    const next = skipUnit(text, i);
    if (next !== i) {
      i = next;
      continue;
    }
    const c = text[i];
    if (c === "}" && level === 0 && separators > 0) return i;
    if (c === "{") level++;
    else if (c === "}" && level > 0) level--;
    else if (level === 0 && c === ",") separators++;
    else if (level === 0 && c === "." && text[i + 1] === "." && text[i + 2] !== "}") separators++;
    i++;
  }
  return -1;
}

/** `amble` split at its top-level commas (quotes and nested braces respected). */
function splitCommas(amble: string): string[] {
  const parts: string[] = [];
  let level = 0;
  let from = 0;
  let i = 0;
  while (i < amble.length) {
    const next = skipUnit(amble, i);
    if (next !== i) {
      i = next;
      continue;
    }
    const c = amble[i];
    if (c === "{") level++;
    else if (c === "}" && level > 0) level--;
    else if (c === "," && level === 0) {
      parts.push(amble.slice(from, i));
      from = i + 1;
    }
    i++;
  }
  parts.push(amble.slice(from));
  return parts;
}

function expand(text: string, limit: number): string[] {
  let open = -1;
  let close = -1;
  for (let i = 0; ; ) {
    const o = findOpen(text, i);
    if (o === -1) break;
    const c = findClose(text, o + 1);
    if (c !== -1) {
      open = o;
      close = c;
      break;
    }
    i = o + 1;
  }
  if (open === -1) return [text];
  const pre = text.slice(0, open);
  const amble = text.slice(open + 1, close);
  const post = text.slice(close + 1);
  const parts = splitCommas(amble);
  let middle: string[];
  if (parts.length > 1) {
    middle = [];
    for (const part of parts) {
      middle.push(...expand(part, limit));
      if (middle.length > limit) throw tooMany(limit);
    }
  } else {
    const seq = sequence(amble, limit);
    // Not a valid sequence (`{a..}` `{1..b}`): bash keeps it, braces and all, and goes on.
    middle = seq ?? [`{${amble}}`];
  }
  const rest = expand(post, limit);
  if (middle.length * rest.length > limit) throw tooMany(limit);
  const out: string[] = [];
  for (const m of middle) for (const r of rest) out.push(pre + m + r);
  return out;
}

function tooMany(limit: number): Uncertain {
  return new Uncertain(`brace expansion makes more than ${limit} words`);
}

const INT = /^[-+]?\d+$/;

/** `x..y[..step]` as bash's expand_seqterm reads it, or undefined when it is not one. */
function sequence(amble: string, limit: number): string[] | undefined {
  const m = /^([^.]+|-?\d+)\.\.([^.]+|-?\d+)(?:\.\.([-+]?\d+))?$/.exec(amble);
  if (!m) return undefined;
  const [, lhs, rhs, stepText] = m as unknown as [string, string, string, string | undefined];
  const step = stepText === undefined ? 1 : Number(stepText);
  if (!Number.isSafeInteger(step)) throw new Uncertain(`the sequence step \`${stepText}\` is out of range`);
  const stride = Math.abs(step) || 1;
  if (INT.test(lhs) && INT.test(rhs)) {
    const a = Number(lhs);
    const b = Number(rhs);
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b))
      throw new Uncertain(`the sequence \`{${amble}}\` is out of range`);
    if (Math.floor(Math.abs(b - a) / stride) + 1 > limit) throw tooMany(limit);
    // Zero-padded when either end has a leading zero: all to the width of the longer.
    const padded = /^[-+]?0\d/.test(lhs) || /^[-+]?0\d/.test(rhs);
    const width = padded ? Math.max(lhs.length, rhs.length) : 0;
    const out: string[] = [];
    const dir = b >= a ? 1 : -1;
    for (let n = a; dir > 0 ? n <= b : n >= b; n += dir * stride) {
      const digits = String(Math.abs(n));
      const sign = n < 0 ? "-" : "";
      out.push(width > 0 ? sign + digits.padStart(width - sign.length, "0") : sign + digits);
    }
    return out;
  }
  if (/^[A-Za-z]$/.test(lhs) && /^[A-Za-z]$/.test(rhs)) {
    const a = lhs.charCodeAt(0);
    const b = rhs.charCodeAt(0);
    // Between `Z` and `a` lie `[ \ ] ^ _ \``, which bash emits quoted: not modelled.
    if (a <= 90 !== b <= 90) throw new Uncertain(`the letter sequence \`{${amble}}\` crosses punctuation`);
    const out: string[] = [];
    const dir = b >= a ? 1 : -1;
    for (let n = a; dir > 0 ? n <= b : n >= b; n += dir * stride) out.push(String.fromCharCode(n));
    return out;
  }
  return undefined;
}
