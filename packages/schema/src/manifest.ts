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
