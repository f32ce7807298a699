import { CapgateError, mcpToolLabel } from "@capgate/schema";
import type { ConfigProblem } from "./errors.js";

/** `mcpServers.<name>.tools`: which of the server's tools capgate offers and calls. */
export interface McpToolFilter {
  /** Globs over the server's tool names; when present, only matching tools are reachable. */
  allow?: string[];
  /** Globs over the server's tool names; a matching tool is never reachable (deny wins over allow). */
  deny?: string[];
}

/** A per-tool approval override: `ask` always asks, `never` never does, whatever `approval` says. */
export type McpToolApproval = "ask" | "never";

/** `mcpServers.<name>.approval`: tool-name glob → override. */
export type McpToolApprovals = Record<string, McpToolApproval>;

/** What a filter or an override looks at: a server's entry. */
export interface McpToolRules {
  tools?: McpToolFilter;
  approval?: McpToolApprovals;
}

/** The names of one tool a glob is matched against: the server's own, and the callable one. */
export interface McpToolNames {
  /** The server's own name, as listed. */
  name: string;
  /** The name calls use after `<server>/` (whitespace runs mapped to `_`). */
  callable: string;
}

export const MAX_TOOL_GLOB = 256;
export const MAX_TOOL_GLOBS = 256;
export const TOOL_APPROVALS: readonly McpToolApproval[] = ["ask", "never"];

// Characters other glob dialects give meaning to; refused so no one expects them to work.
const RESERVED = /[[\]{}\\]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/;

/**
 * Whether `name` matches `pattern`, where `*` is any run of characters (none included) and
 * `?` exactly one; every other character is itself (case-sensitive; `/` and `.` are not
 * special: tool names are names, not paths). No regular expression is built, so neither a
 * pattern from the config nor a name from a server can inject one; the walk is at most
 * pattern × name steps (backtracking only to the last `*`).
 */
export function toolGlobMatches(pattern: string, name: string): boolean {
  const p = Array.from(pattern);
  const s = Array.from(name);
  let pi = 0;
  let si = 0;
  let star = -1;
  let resume = 0;
  while (si < s.length) {
    if (pi < p.length && p[pi] === "*") {
      star = pi++;
      resume = si;
    } else if (pi < p.length && (p[pi] === "?" || p[pi] === s[si])) {
      pi++;
      si++;
    } else if (star >= 0) {
      pi = star + 1;
      si = ++resume;
    } else return false;
  }
  while (pi < p.length && p[pi] === "*") pi++;
  return pi === p.length;
}

/** Why a string cannot be a tool glob, or undefined when it can. */
export function toolGlobProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== "string") return `must be a string glob, got ${typeof pattern}`;
  if (pattern.length === 0) return "must not be empty";
  if (pattern.length > MAX_TOOL_GLOB) return `must be at most ${MAX_TOOL_GLOB} characters`;
  if (CONTROL.test(pattern)) return "must not contain control or format characters";
  if (RESERVED.test(pattern) || pattern.startsWith("!"))
    return `${JSON.stringify(pattern.slice(0, 60))} uses [ ] { } \\ or a leading !, which capgate's tool globs do not support: they know * (any characters) and ? (one character); list alternatives as separate entries`;
  return undefined;
}

function matchesAny(patterns: readonly string[], names: McpToolNames): string | undefined {
  return patterns.find((p) => toolGlobMatches(p, names.name) || toolGlobMatches(p, names.callable));
}

/**
 * Why the entry's `tools` filter keeps a tool out (`tools.deny matches "x"`, `no tools.allow
 * pattern matches it`), or undefined when the tool is reachable. A glob is matched against
 * the server's own name and the callable one: deny catches either, allow admits either.
 */
export function toolExclusion(rules: McpToolRules, names: McpToolNames): string | undefined {
  const filter = rules.tools;
  if (!filter) return undefined;
  const denied = matchesAny(filter.deny ?? [], names);
  if (denied !== undefined) return `tools.deny matches it (${JSON.stringify(denied)})`;
  if (filter.allow && matchesAny(filter.allow, names) === undefined)
    return "no tools.allow pattern matches it";
  return undefined;
}

/** How many non-wildcard characters a glob pins down: the most specific pattern wins. */
function specificity(pattern: string): number {
  let n = 0;
  for (const c of pattern) if (c !== "*" && c !== "?") n++;
  return n;
}

/**
 * The entry's approval override for a tool: of the `approval` globs that match it (own or
 * callable name), the most specific (most non-wildcard characters); on a tie `ask` wins.
 * Undefined when none matches (the global `approval` mode decides).
 */
export function toolApprovalOverride(rules: McpToolRules, names: McpToolNames): McpToolApproval | undefined {
  let best: { score: number; value: McpToolApproval } | undefined;
  for (const [pattern, value] of Object.entries(rules.approval ?? {})) {
    if (!toolGlobMatches(pattern, names.name) && !toolGlobMatches(pattern, names.callable)) continue;
    const score = specificity(pattern);
    if (!best || score > best.score || (score === best.score && value === "ask")) best = { score, value };
  }
  return best?.value;
}

/** The refusal of a call to a tool the entry's filter excludes (code `policy_denied`; nothing is sent). */
export function toolExcludedError(server: string, tool: string, why: string): CapgateError {
  return new CapgateError(
    "policy_denied",
    `MCP server '${server}' has the tool ${mcpToolLabel(tool)}, but the config excludes it: mcpServers.${server}.${why}. capgate does not offer or call it (change tools.allow / tools.deny in capgate.config.json to reach it); nothing was sent to the server.`,
    { property: "tool" },
  );
}

/** Checks `tools` of a server entry, pushing problems naming the property. */
export function parseToolFilter(
  value: unknown,
  path: string,
  problems: ConfigProblem[],
): McpToolFilter | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({
      property: path,
      message: `${path} must be an object { allow?: [globs], deny?: [globs] }`,
    });
    return undefined;
  }
  const out: McpToolFilter = {};
  const before = problems.length;
  for (const [key, list] of Object.entries(value)) {
    const p = `${path}.${key}`;
    if (key !== "allow" && key !== "deny") {
      problems.push({ property: p, message: `${p} is not a known property (tools takes allow and deny)` });
      continue;
    }
    if (!Array.isArray(list) || list.length > MAX_TOOL_GLOBS) {
      problems.push({ property: p, message: `${p} must be an array of at most ${MAX_TOOL_GLOBS} globs` });
      continue;
    }
    list.forEach((glob, i) => {
      const problem = toolGlobProblem(glob);
      if (problem) problems.push({ property: `${p}[${i}]`, message: `${p}[${i}] ${problem}` });
    });
    out[key] = [...(list as string[])];
  }
  return problems.length > before ? undefined : out;
}

/** Checks `approval` of a server entry (glob → "ask" | "never"), pushing problems naming the property. */
export function parseToolApprovals(
  value: unknown,
  path: string,
  problems: ConfigProblem[],
): McpToolApprovals | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({
      property: path,
      message: `${path} must be an object mapping tool-name globs to "ask" or "never"`,
    });
    return undefined;
  }
  const entries = Object.entries(value);
  const before = problems.length;
  if (entries.length > MAX_TOOL_GLOBS)
    problems.push({ property: path, message: `${path} has more than ${MAX_TOOL_GLOBS} entries` });
  const out: McpToolApprovals = {};
  for (const [glob, mode] of entries) {
    const p = `${path}[${JSON.stringify(glob.slice(0, 60))}]`;
    const problem = toolGlobProblem(glob);
    if (problem) problems.push({ property: p, message: `${path}: the key ${problem}` });
    else if (!TOOL_APPROVALS.includes(mode as McpToolApproval))
      problems.push({
        property: p,
        message: `${p} must be "ask" (always ask before calling) or "never" (never ask), got ${JSON.stringify(mode)}`,
      });
    // defineProperty: a glob spelled "__proto__" stays a key, never a prototype.
    else
      Object.defineProperty(out, glob, { value: mode, enumerable: true, writable: true, configurable: true });
  }
  return problems.length > before ? undefined : out;
}
