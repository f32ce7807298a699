/** The most of a request's argument values an approval shows before it says how much it left out. */
export const APPROVAL_TEXT_CHARS = 4000;
/** Each argument keeps at least this much of its value, however many long ones there are. */
const MIN_VALUE_CHARS = 40;
/** The most top-level arguments listed one a line; any beyond are counted, not shown. */
const MAX_ARGUMENT_LINES = 100;
/** The most of an argument's name, or of the request's description, that is shown. */
const MAX_NAME_CHARS = 100;
const MAX_DESCRIPTION_CHARS = 300;

// Control (C0, DEL, C1) and format characters (bidi overrides, isolates and marks, zero-width
// characters, the BOM, tag characters…), line and paragraph separators, lone surrogates, and
// the Hangul fillers, which print as nothing.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115f\u1160\u3164\uffa0]/gu;

/**
 * Text a model, a tool or an MCP server wrote, made safe to show a person: every control and
 * format character but newline and tab is shown escaped (`\u001b`, `\u202e`), so nothing can
 * move a terminal's cursor, clear the screen, set the title, reverse the text's direction or
 * hide part of it. The one escaper of capgate: `terminalSafe` of `@capgate/host` is this.
 */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (c) =>
    c === "\n" || c === "\t" ? c : `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`,
  );
}

/** What an approval asks a person about: the tool, its risk, the call's arguments and the asker's own line. */
export interface ApprovalTextRequest {
  tool: string;
  risk: string;
  arguments?: unknown;
  /** One line from whoever asks (an ask rule's reason, say); shown cut to 300 characters. */
  description?: string;
}

/**
 * What is to be approved, as text for a person — the one rendering every approval surface
 * shows (the terminal prompt, the MCP client's elicitation form): a first line with the tool
 * and its risk, the request's description (unless it only repeats that line and the
 * arguments), then every top-level argument on a line of its own. Short arguments (the path,
 * the command, the URL) come before long ones (the content), and each long value is cut on its
 * own, saying how much it left out, so no argument can push another out of view; all the values
 * together take at most `maxChars` characters. Every control, bidi and invisible format
 * character, in names and values alike, is shown escaped (`\u202e`).
 */
export function approvalText(request: ApprovalTextRequest, maxChars = APPROVAL_TEXT_CHARS): string {
  const header = `${oneLine(request.tool, MAX_NAME_CHARS)} (${oneLine(request.risk, MAX_NAME_CHARS)})`;
  const lines = [header];
  const description =
    request.description === undefined ? "" : oneLine(request.description, MAX_DESCRIPTION_CHARS);
  // The executor's own description is the header followed by the arguments' JSON, cut at 200
  // characters in the caller's key order: the list below shows the same, whole.
  if (description && !description.startsWith(header)) lines.push(description);
  let cut = false;
  const args = request.arguments;
  if (args !== null && typeof args === "object" && !Array.isArray(args)) {
    const entries = Object.entries(args as Record<string, unknown>);
    if (entries.length === 0) lines.push("arguments: none");
    else lines.push("arguments:");
    const listed = entries.slice(0, MAX_ARGUMENT_LINES).map(([key, value], order) => ({
      order,
      name: argumentName(key),
      value: visibleText(json(value)),
    }));
    const shown = fitValues(
      listed.map((a) => a.value),
      maxChars,
    );
    const rows = listed.map((a, i) => ({ ...a, shown: shown[i]! }));
    // Short values first, each group in the caller's order.
    const isShort = (value: string) => value.length <= MIN_VALUE_CHARS * 3;
    rows.sort((a, b) => Number(!isShort(a.value)) - Number(!isShort(b.value)) || a.order - b.order);
    for (const row of rows) {
      lines.push(`  ${row.name}: ${row.shown}`);
      if (row.shown !== row.value) cut = true;
    }
    if (entries.length > listed.length) {
      lines.push(`  … and ${count(entries.length - listed.length)} more arguments not shown`);
      cut = true;
    }
  } else if (args !== undefined) {
    const value = visibleText(json(args));
    const [shown] = fitValues([value], maxChars);
    lines.push(`arguments: ${shown}`);
    if (shown !== value) cut = true;
  }
  if (cut) lines.push("Part of the arguments is not shown: approve only if you have read them another way.");
  return lines.join("\n");
}

function json(value: unknown): string {
  // JSON escapes newlines, tabs and quotes, so each value stays on its line and reads exactly.
  return JSON.stringify(value) ?? String(value);
}

function argumentName(key: string): string {
  return oneLine(/^[A-Za-z_$][\w$.-]*$/.test(key) ? key : JSON.stringify(key), MAX_NAME_CHARS);
}

/** Escaped, on one line, cut to `max` characters. */
function oneLine(text: string, max: number): string {
  return cutTo(visibleText(text.replace(/\s+/g, " ").trim()), max);
}

/**
 * Each value whole when all fit in `budget` characters; otherwise the budget is shared out:
 * the shortest values whole, the rest cut to an even share of what is left (never below
 * MIN_VALUE_CHARS).
 */
function fitValues(values: string[], budget: number): string[] {
  const out = [...values];
  let left = budget;
  const bySize = values.map((_, i) => i).sort((a, b) => values[a]!.length - values[b]!.length);
  bySize.forEach((index, position) => {
    const share = Math.max(MIN_VALUE_CHARS, Math.floor(left / (values.length - position)));
    out[index] = cutTo(values[index]!, share);
    left = Math.max(0, left - Math.min(values[index]!.length, share));
  });
  return out;
}

/** `text` cut to about `max` characters, saying how many it left out; never inside an escape or a surrogate pair. */
function cutTo(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  if (/[\ud800-\udbff]/.test(text[end - 1] ?? "")) end -= 1;
  const partEscape = /\\u[0-9a-fA-F]{0,5}$|\\$/.exec(text.slice(Math.max(0, end - 7), end));
  if (partEscape) end -= partEscape[0].length;
  return `${text.slice(0, end)}… (${count(text.length - end)} more characters)`;
}

const count = (n: number) => n.toLocaleString("en-US");
