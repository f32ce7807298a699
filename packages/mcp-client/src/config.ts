import { closestMatch } from "@capgate/schema";
import { type ConfigProblem, McpConfigError } from "./errors.js";
import { type McpOAuthConfig, parseOAuthConfig } from "./oauth/oauth-config.js";
import {
  type McpToolApprovals,
  type McpToolFilter,
  parseToolApprovals,
  parseToolFilter,
} from "./tool-filter.js";

/** Keys every server entry may carry, whatever its transport. */
export interface McpServerCommon {
  /** Per-call timeout in ms (default 30 000). Also bounds connect + initialize. */
  timeoutMs?: number;
  /** `false` keeps the entry in the file but out of routing, search and the pool (default true). */
  enabled?: boolean;
  /**
   * `true` lets this server ask the host's model for completions (`sampling/createMessage`);
   * refused by default, since the server would spend the run's model on its own prompts.
   */
  sampling?: boolean;
  /**
   * A call that keeps reporting progress (`notifications/progress`) has its `timeoutMs`
   * restarted by each report, up to this hard limit from the call's start (default ten
   * times `timeoutMs`, at most one hour).
   */
  maxTotalTimeoutMs?: number;
  /**
   * `true`: one upstream session serves every gate session (a stateless server). Default
   * `false`: where the host opens a session per client (the server app's `/mcp`), each gets
   * its own upstream session, so one client never sees another's browser page or state.
   */
  share?: boolean;
  /**
   * Which of the server's tools capgate offers and calls: globs (`*`, `?`) over its tool
   * names. A tool is reachable when there is no `allow` or it matches one, and it matches
   * no `deny`. Others are left out of search, load and every listing, and calls are refused.
   */
  tools?: McpToolFilter;
  /** Per-tool approval overrides: tool-name glob → `"ask"` or `"never"` (the most specific glob wins). */
  approval?: McpToolApprovals;
}

/** A server spawned over stdio (Claude Desktop / Cursor shape). */
export interface McpStdioServerConfig extends McpServerCommon {
  /** Accepted for Claude Code / VS Code files; must agree with `command`. */
  type?: "stdio";
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, LANG, TMPDIR, …). */
  env?: Record<string, string>;
  cwd?: string;
}

/** A server reached over Streamable HTTP (falling back to legacy SSE), or SSE only with `type: "sse"`. */
export interface McpHttpServerConfig extends McpServerCommon {
  type?: "http" | "streamable-http" | "sse";
  url: string;
  headers?: Record<string, string>;
  /** OAuth 2.1 for this server (tokens under $CAPGATE_HOME/mcp-auth/, `capgate mcp login <server>`). */
  oauth?: McpOAuthConfig;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** Server name → entry, in the order of the config file (the first enabled one takes bare names). */
export type McpServersMap = Record<string, McpServerConfig>;

export const DEFAULT_MCP_TIMEOUT_MS = 30_000;
export const MAX_MCP_TIMEOUT_MS = 3_600_000;
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const COMMON_KEYS = [
  "timeoutMs",
  "maxTotalTimeoutMs",
  "enabled",
  "sampling",
  "share",
  "tools",
  "approval",
] as const;
const STDIO_KEYS = ["type", "command", "args", "env", "cwd", ...COMMON_KEYS] as const;
const HTTP_KEYS = ["type", "url", "headers", "oauth", ...COMMON_KEYS] as const;
const ALL_KEYS = [...new Set<string>([...STDIO_KEYS, ...HTTP_KEYS])];
const HTTP_TYPES = ["http", "streamable-http", "sse"];
// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[^=\0]+$/;

export function isStdioServer(config: McpServerConfig): config is McpStdioServerConfig {
  return typeof (config as McpStdioServerConfig).command === "string";
}

export function isHttpServer(config: McpServerConfig): config is McpHttpServerConfig {
  return typeof (config as McpHttpServerConfig).url === "string";
}

/** The entry's per-call timeout, with the default applied. */
export function serverTimeoutMs(config: McpServerConfig): number {
  return config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
}

/** The hard limit of a call that keeps reporting progress: `maxTotalTimeoutMs`, else ten times the timeout (at most one hour). */
export function serverMaxTotalTimeoutMs(
  config: McpServerConfig,
  timeoutMs = serverTimeoutMs(config),
): number {
  return Math.max(timeoutMs, config.maxTotalTimeoutMs ?? Math.min(MAX_MCP_TIMEOUT_MS, timeoutMs * 10));
}

/** Names of the enabled servers, in config order. */
export function enabledServerNames(servers: McpServersMap): string[] {
  return Object.keys(servers).filter((name) => servers[name]?.enabled !== false);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function keyPath(base: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

function checkStringMap(
  value: unknown,
  path: string,
  what: string,
  nameOk: RegExp,
  problems: ConfigProblem[],
): Record<string, string> | undefined {
  if (!isPlainObject(value)) {
    problems.push({
      property: path,
      message: `${path} must be an object of ${what}, got ${describe(value)}`,
    });
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = keyPath(path, k);
    if (!nameOk.test(k)) problems.push({ property: p, message: `${p} is not a valid name` });
    else if (typeof v !== "string")
      problems.push({ property: p, message: `${p} must be a string, got ${describe(v)}` });
    else out[k] = v;
  }
  return out;
}

function parseServer(entry: unknown, path: string, problems: ConfigProblem[]) {
  if (!isPlainObject(entry)) {
    problems.push({
      property: path,
      message: `${path} must be an object with "command" (stdio) or "url" (HTTP), got ${describe(entry)}`,
    });
    return undefined;
  }
  const hasCommand = "command" in entry;
  const hasUrl = "url" in entry;
  if (hasCommand && hasUrl) {
    problems.push({
      property: path,
      message: `${path} has both "command" and "url"; use "command" for a stdio server or "url" for an HTTP server`,
    });
    return undefined;
  }
  if (!hasCommand && !hasUrl) {
    const typo = Object.keys(entry)
      .map((k) => [k, closestMatch(k, ["command", "url"])] as const)
      .find(([, guess]) => guess !== undefined);
    problems.push({
      property: typo ? keyPath(path, typo[0]) : path,
      message: `${path} needs "command" (a program to spawn over stdio) or "url" (an HTTP endpoint)${typo ? `; did you mean "${typo[1]}" instead of "${typo[0]}"?` : ""}`,
    });
    return undefined;
  }
  const allowed: readonly string[] = hasCommand ? STDIO_KEYS : HTTP_KEYS;
  const before = problems.length;
  for (const key of Object.keys(entry)) {
    if (allowed.includes(key)) continue;
    const p = keyPath(path, key);
    const guess = closestMatch(key, ALL_KEYS);
    const hint = ALL_KEYS.includes(key)
      ? ` (it belongs to ${hasCommand ? "HTTP" : "stdio"} servers)`
      : guess
        ? `; did you mean "${guess}"?`
        : "";
    problems.push({ property: p, message: `${p} is not a known property${hint}` });
  }

  const out: Record<string, unknown> = {};
  if (entry.timeoutMs !== undefined) {
    const t = entry.timeoutMs;
    if (typeof t !== "number" || !Number.isInteger(t) || t < 1 || t > MAX_MCP_TIMEOUT_MS)
      problems.push({
        property: `${path}.timeoutMs`,
        message: `${path}.timeoutMs must be an integer from 1 to ${MAX_MCP_TIMEOUT_MS} (ms), got ${describe(t)}`,
      });
    else out.timeoutMs = t;
  }
  if (entry.maxTotalTimeoutMs !== undefined) {
    const t = entry.maxTotalTimeoutMs;
    if (typeof t !== "number" || !Number.isInteger(t) || t < 1 || t > MAX_MCP_TIMEOUT_MS)
      problems.push({
        property: `${path}.maxTotalTimeoutMs`,
        message: `${path}.maxTotalTimeoutMs must be an integer from 1 to ${MAX_MCP_TIMEOUT_MS} (ms), got ${describe(t)}`,
      });
    else out.maxTotalTimeoutMs = t;
  }
  if (entry.share !== undefined) {
    if (typeof entry.share !== "boolean")
      problems.push({
        property: `${path}.share`,
        message: `${path}.share must be a boolean (true: one upstream session for every client), got ${describe(entry.share)}`,
      });
    else out.share = entry.share;
  }
  if (entry.enabled !== undefined) {
    if (typeof entry.enabled !== "boolean")
      problems.push({
        property: `${path}.enabled`,
        message: `${path}.enabled must be a boolean, got ${describe(entry.enabled)}`,
      });
    else out.enabled = entry.enabled;
  }
  if (entry.sampling !== undefined) {
    if (typeof entry.sampling !== "boolean")
      problems.push({
        property: `${path}.sampling`,
        message: `${path}.sampling must be a boolean (true lets the server use the run's model), got ${describe(entry.sampling)}`,
      });
    else out.sampling = entry.sampling;
  }

  if (entry.tools !== undefined) {
    const tools = parseToolFilter(entry.tools, `${path}.tools`, problems);
    if (tools) out.tools = tools;
  }
  if (entry.approval !== undefined) {
    const approval = parseToolApprovals(entry.approval, `${path}.approval`, problems);
    if (approval) out.approval = approval;
  }

  if (hasCommand) {
    if (entry.type !== undefined && entry.type !== "stdio")
      problems.push({
        property: `${path}.type`,
        message: `${path}.type must be "stdio" for a server with "command", got ${describe(entry.type)}`,
      });
    else if (entry.type !== undefined) out.type = entry.type;
    if (typeof entry.command !== "string" || entry.command.trim() === "")
      problems.push({
        property: `${path}.command`,
        message: `${path}.command must be a non-empty string (the program to run, without a shell), got ${describe(entry.command)}`,
      });
    else out.command = entry.command;
    if (entry.args !== undefined) {
      if (!Array.isArray(entry.args))
        problems.push({
          property: `${path}.args`,
          message: `${path}.args must be an array of strings, got ${describe(entry.args)}`,
        });
      else {
        entry.args.forEach((a, i) => {
          if (typeof a !== "string")
            problems.push({
              property: `${path}.args[${i}]`,
              message: `${path}.args[${i}] must be a string, got ${describe(a)}`,
            });
        });
        out.args = [...entry.args];
      }
    }
    if (entry.env !== undefined) {
      const env = checkStringMap(entry.env, `${path}.env`, "strings", ENV_NAME, problems);
      if (env) out.env = env;
    }
    if (entry.cwd !== undefined) {
      if (typeof entry.cwd !== "string" || entry.cwd === "")
        problems.push({
          property: `${path}.cwd`,
          message: `${path}.cwd must be a non-empty string, got ${describe(entry.cwd)}`,
        });
      else out.cwd = entry.cwd;
    }
  } else {
    if (entry.type !== undefined && !HTTP_TYPES.includes(entry.type as string))
      problems.push({
        property: `${path}.type`,
        message: `${path}.type must be one of ${HTTP_TYPES.map((t) => `"${t}"`).join(", ")} for a server with "url", got ${describe(entry.type)}`,
      });
    else if (entry.type !== undefined) out.type = entry.type;
    const url = entry.url;
    let parsed: URL | undefined;
    if (typeof url === "string") {
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
      problems.push({
        property: `${path}.url`,
        message: `${path}.url must be an http:// or https:// URL, got ${describe(url)}`,
      });
    else out.url = url;
    if (entry.headers !== undefined) {
      const headers = checkStringMap(
        entry.headers,
        `${path}.headers`,
        "header values",
        HEADER_NAME,
        problems,
      );
      if (headers) out.headers = headers;
    }
    if (entry.oauth !== undefined) {
      const oauth = parseOAuthConfig(entry.oauth, `${path}.oauth`, problems, closestMatch);
      if (oauth) out.oauth = oauth;
      const headerNames = Object.keys((entry.headers as Record<string, unknown> | undefined) ?? {});
      if (headerNames.some((h) => h.toLowerCase() === "authorization"))
        problems.push({
          property: `${path}.headers.Authorization`,
          message: `${path} has both "oauth" and an Authorization header; remove the header (OAuth sends its own bearer token)`,
        });
    }
  }
  if (problems.length > before) return undefined;
  return out as unknown as McpServerConfig;
}

/**
 * Validate an `mcpServers` value (the same shape Claude Desktop and Cursor use) and return
 * a checked copy in the original order. Throws `McpConfigError` (code `invalid_config`)
 * listing every problem, each naming its property (`mcpServers.github.command must be a string`).
 */
export function parseMcpServersConfig(value: unknown, options: { path?: string } = {}): McpServersMap {
  const root = options.path ?? "mcpServers";
  if (!isPlainObject(value))
    throw new McpConfigError([
      {
        property: root,
        message: `${root} must be an object mapping server names to { command, args?, env?, cwd? } or { url, headers? }, got ${describe(value)}`,
      },
    ]);
  const problems: ConfigProblem[] = [];
  const out: McpServersMap = {};
  for (const [name, entry] of Object.entries(value)) {
    const path = keyPath(root, name);
    if (!SERVER_NAME_PATTERN.test(name)) {
      problems.push({
        property: path,
        message: `${path}: server name ${JSON.stringify(name)} must be 1–64 letters, digits, "_" or "-" (it prefixes tool names as <server>/<tool>)`,
      });
      continue;
    }
    const parsed = parseServer(entry, path, problems);
    if (parsed) out[name] = parsed;
  }
  if (problems.length > 0) throw new McpConfigError(problems);
  return out;
}
