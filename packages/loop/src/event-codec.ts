import type { RunEvent } from "./events.js";

/**
 * The one text codec of every run store. A JavaScript string may hold U+0000 and unpaired
 * surrogates (a tool's output, a model's reply); PostgreSQL's `text` and `jsonb` refuse
 * both, and UTF-8 cannot carry an unpaired surrogate at all. Such code units are written as
 * U+E000 (a private-use character) followed by four lowercase hex digits, and U+E000 itself
 * is escaped the same way, so decoding is exact: `unescapeText(escapeText(s)) === s` for
 * every string, and an escaped string holds neither U+0000 nor an unpaired surrogate.
 */
const ESCAPE = "\uE000";

/** U+0000, the escape character, a high surrogate not followed by a low one, a low one not preceded by a high one. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must be found.
const NEEDS_ESCAPE = /\u0000|\uE000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ESCAPED = /\uE000([0-9a-f]{4})/g;

/** Top-level key of an event whose strings were escaped; absent when nothing needed it (then the stored JSON is the event's own). */
const ESCAPED_MARKER = "$escaped";

/**
 * In an event's JSON text: U+0000 or an unpaired surrogate (JSON.stringify writes both as
 * `\u` escapes) or the escape character. A false positive (a literal backslash before
 * `u0000`) only costs the escaping pass.
 */
const MAY_NEED_ESCAPE = /\\u0000|\\ud[89a-f]|\uE000/i;

/** A string any store can hold: U+0000, unpaired surrogates and U+E000 written as U+E000 + four hex digits. */
export function escapeText(text: string): string {
  NEEDS_ESCAPE.lastIndex = 0;
  if (!NEEDS_ESCAPE.test(text)) return text;
  return text.replace(NEEDS_ESCAPE, (unit) => ESCAPE + unit.charCodeAt(0).toString(16).padStart(4, "0"));
}

/** The inverse of `escapeText`. */
export function unescapeText(text: string): string {
  if (!text.includes(ESCAPE)) return text;
  return text.replace(ESCAPED, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * An event as the JSON text a store writes. The text is the event's own JSON unless a
 * string in it (a value or a key, at any depth) holds U+0000, an unpaired surrogate or
 * U+E000; then every string is escaped and the object carries `"$escaped": true`, which
 * `decodeEvent` removes.
 */
export function encodeEvent(event: RunEvent): string {
  return encodeJson(event);
}

/** An event as read back from a store (parsed JSON): exactly the event that was encoded. */
export function decodeEvent(value: unknown): RunEvent {
  return decodeJson<RunEvent>(value);
}

/** `encodeEvent` for any JSON object a store keeps beside the events (an approval request, say). */
export function encodeJson(value: object): string {
  if (Object.hasOwn(value, ESCAPED_MARKER)) {
    throw new TypeError(
      `A stored object may not carry the key '${ESCAPED_MARKER}' (the store's own marker).`,
    );
  }
  const text = JSON.stringify(value);
  if (!MAY_NEED_ESCAPE.test(text)) return text;
  const escaped = mapStrings(JSON.parse(text), escapeText) as Record<string, unknown>;
  return JSON.stringify({ ...escaped, [ESCAPED_MARKER]: true });
}

/** The inverse of `encodeJson`, on the parsed JSON. */
export function decodeJson<T>(value: unknown): T {
  if (value === null || typeof value !== "object" || !Object.hasOwn(value, ESCAPED_MARKER)) {
    return value as T;
  }
  const { [ESCAPED_MARKER]: _marker, ...rest } = value as Record<string, unknown>;
  return mapStrings(rest, unescapeText) as T;
}

/**
 * The first string in `value` (a request body, say) that no store can hold as text:
 * its path (`goal`, `tags[2]`) and what is wrong with it. Keys count too.
 */
export function findUnstorableText(
  value: unknown,
  path = "",
): { property: string; problem: string } | undefined {
  if (typeof value === "string") {
    const problem = unstorable(value);
    return problem ? { property: path || "(value)", problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findUnstorableText(item, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const property = path ? `${path}.${key}` : key;
      const problem = unstorable(key);
      if (problem) return { property, problem: `its name ${problem.replace(/^it /, "")}` };
      const found = findUnstorableText(item, property);
      if (found) return found;
    }
  }
  return undefined;
}

function unstorable(text: string): string | undefined {
  const nul = text.indexOf("\u0000");
  if (nul >= 0) return `it contains U+0000 (a NUL character) at index ${nul}`;
  const lone = text.search(LONE_SURROGATE);
  if (lone >= 0) return `it contains an unpaired UTF-16 surrogate at index ${lone} (not valid Unicode text)`;
  return undefined;
}

/** A copy of parsed JSON with `f` applied to every string, keys included; `__proto__` stays an own key. */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, f));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapStrings(v, f)]));
  }
  return value;
}
