import type { JsonSchema } from "./json-schema.js";

/**
 * What a tool can do to the world, used for approval (`on-risk` asks for write, exec and
 * network) and for the verification gate (a write or exec call must be followed by a
 * passing verify before finish).
 */
export type ToolRisk = "read" | "write" | "exec" | "network";

export const TOOL_RISKS: readonly ToolRisk[] = ["read", "write", "exec", "network"];

export interface ToolManifest {
  /** `<capability>.<verb>`, e.g. `fs.read`; MCP tools are `<server>/<tool>`. */
  name: string;
  /** Operational knowledge for a model: what it is for, limits, what to use instead. */
  description: string;
  /** Closed JSON Schema (`additionalProperties: false`) of the arguments. */
  inputSchema: JsonSchema;
  /** Defaults to `read` when absent. */
  risk?: ToolRisk;
  /** A human-readable title (MCP tools: the server's `title`). */
  title?: string;
  /** MCP tool annotations as the server sent them (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, …). */
  annotations?: Record<string, unknown>;
  /** JSON Schema of the tool's structured result (MCP `outputSchema`), when declared. */
  outputSchema?: JsonSchema;
}

/** The manifest format this package reads and writes. Older formats keep loading. */
export const MANIFEST_FORMAT = 1;

export interface CapabilityManifest {
  /** `^[a-z][a-z0-9_]*$`, or `mcp:<server>` for a configured MCP server. */
  name: string;
  version: string;
  description: string;
  tools: ToolManifest[];
  /** Names of the profiles this capability suits, e.g. ["Coder", "Verifier"]. */
  profileFit: string[];
  /** Manifest format version; absent means 1. */
  manifestFormat?: number;
}

/**
 * The risk of an MCP tool from its annotations. A server cannot claim less than it
 * admits: `readOnlyHint: true` is `read` (`network` with `openWorldHint: true`) unless it
 * also says `destructiveHint: true`; `destructiveHint: false` on a tool that is not
 * read-only is `write`; everything else — destructive, or no hints at all (the MCP
 * defaults are destructive and open-world) — is `exec`. On `on-risk` only `read` runs
 * without asking. One definition, used by @capgate/mcp-client and @capgate/registry.
 */
export function mcpToolRisk(annotations: unknown): ToolRisk {
  const a = (typeof annotations === "object" && annotations !== null ? annotations : {}) as Record<
    string,
    unknown
  >;
  if (a.readOnlyHint === true && a.destructiveHint !== true)
    return a.openWorldHint === true ? "network" : "read";
  if (a.readOnlyHint !== true && a.destructiveHint === false) return "write";
  return "exec";
}

// Printable, no whitespace, no control or format characters (e.g. U+202E): a model must be able to type it.
const MCP_CALLABLE = /^[^\s\p{Cc}\p{Cf}]{1,128}$/u;

/**
 * The name a model calls an MCP server's tool by (after `<server>/`): the server's name
 * with each run of whitespace replaced by `_` ("get weather" → `get_weather`); `/`, `.`
 * and non-ASCII letters are kept. Undefined when no typeable name results (control or
 * format characters, empty, over 128 characters). Search, routing and calls all use it.
 */
export function mcpCallableToolName(name: string): string | undefined {
  const mapped = name.replace(/\s+/gu, "_");
  return MCP_CALLABLE.test(mapped) ? mapped : undefined;
}
