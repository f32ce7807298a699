import {
  admitMcpTools,
  type CapabilityManifest,
  type JsonSchema,
  MAX_TOOL_SCHEMA_CHARS,
  mcpToolRisk,
  type ToolManifest,
} from "@capgate/schema";
import { InvalidMcpServerError } from "./errors.js";
import { MCP_NAMESPACE } from "./validate-manifest.js";

/** A tool as an MCP server lists it (`tools/list`). Everything in it is untrusted input. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
  title?: string;
  outputSchema?: JsonSchema;
  /** MCP tool annotations, kept in the manifest; the risk comes from them (`mcpToolRisk` of @capgate/schema). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; [hint: string]: unknown };
}

export interface McpServerOptions {
  /** A sentence about the server for search (e.g. from its config); sanitised like tool descriptions. */
  description?: string;
  /**
   * The `instructions` the server sent at initialize: what it is for, in its own words. Kept
   * (after `description`) in the capability's description, which search reads as context
   * for every tool of the server; sanitised like tool descriptions.
   */
  instructions?: string;
  /** The server's version when known (semver); default "0.0.0". */
  version?: string;
}

export interface McpSkippedTool {
  name: string;
  reason: string;
}

export interface McpRegistration {
  /** `mcp:<server>` */
  capability: string;
  /** Registered tool names, `<server>/<tool>`. */
  tools: string[];
  /** Tools left out, with why. */
  skipped: McpSkippedTool[];
}

export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** What a callable MCP tool name (after `<server>/`) looks like: printable, no whitespace, no control or format characters. */
export const MCP_TOOL_NAME_PATTERN = /^[^\s\p{Cc}\p{Cf}]{1,128}$/u;
/** Largest inputSchema / outputSchema kept (as JSON text), the MCP client's limit (@capgate/schema). */
export const MAX_MCP_SCHEMA_BYTES = MAX_TOOL_SCHEMA_CHARS;
export const MAX_MCP_DESCRIPTION = 1000;
const TRUNCATION_MARKER = " … [truncated]";

/** `mcp:<server>` — outside the native name rule, so it can never collide with a native capability. */
export function mcpCapabilityName(server: string): string {
  return `${MCP_NAMESPACE}${server}`;
}

/** The server of an `mcp:<server>` capability name, or undefined for a native name. */
export function mcpServerOf(capability: string): string | undefined {
  return capability.startsWith(MCP_NAMESPACE) ? capability.slice(MCP_NAMESPACE.length) : undefined;
}

export function assertMcpServerName(server: unknown): asserts server is string {
  if (typeof server !== "string" || !MCP_SERVER_NAME_PATTERN.test(server)) {
    throw new InvalidMcpServerError(
      `MCP server name ${JSON.stringify(server)} must match ^[A-Za-z0-9_-]{1,64}$ (letters, digits, _ and -)`,
      "server",
    );
  }
}

// Control (Cc) and format (Cf) characters: zero-width characters, bidi embeddings,
// overrides and isolates, the BOM — invisible text a hostile server could use to hide
// instructions or reorder what a human sees. Whitespace controls become spaces.
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;

/**
 * A description from an MCP server made safe to index and show: control and invisible
 * characters removed, line breaks and tabs folded to spaces, at most `max` characters
 * (cut on a code point boundary, with a marker).
 */
export function sanitizeMcpDescription(text: unknown, max = MAX_MCP_DESCRIPTION): string {
  if (typeof text !== "string") return "";
  const clean = text
    .replace(INVISIBLE, (c) => (/\s/.test(c) ? " " : ""))
    .replace(/\s+/g, " ")
    .trim();
  const points = Array.from(clean);
  if (points.length <= max) return clean;
  return points.slice(0, max).join("").trimEnd() + TRUNCATION_MARKER;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The capability manifest for one MCP server's tool list: `mcp:<server>` with tools named
 * `<server>/<tool>` (the names MCP routing uses). Bad entries are skipped and reported,
 * never fatal; a bad server name throws.
 */
export function mcpManifest(
  server: string,
  tools: readonly unknown[],
  options: McpServerOptions = {},
): { manifest: CapabilityManifest; skipped: McpSkippedTool[] } {
  assertMcpServerName(server);
  if (!Array.isArray(tools)) {
    throw new InvalidMcpServerError(`the tool list of MCP server "${server}" must be an array`, "tools");
  }
  // The MCP client's own rule (@capgate/schema admitMcpTools): search and load offer
  // exactly the tools a call can reach, under the names calls use.
  const { admitted, refused } = admitMcpTools(tools);
  const skipped = refused.map((r): McpSkippedTool => ({ name: r.label, reason: r.reason }));
  const out = admitted.map((tool): ToolManifest => {
    const annotations = isPlainObject(tool.entry.annotations) ? tool.entry.annotations : {};
    let description = sanitizeMcpDescription(tool.entry.description);
    if (description === "") description = `Tool "${tool.callable}" of the MCP server "${server}".`;
    const title = sanitizeMcpDescription(
      typeof tool.entry.title === "string" ? tool.entry.title : annotations.title,
      200,
    );
    return {
      name: `${server}/${tool.callable}`,
      description,
      inputSchema: tool.inputSchema,
      risk: mcpToolRisk(annotations),
      ...(title !== "" ? { title } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations: structuredClone(annotations) } : {}),
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    };
  });
  const about = sanitizeMcpDescription(
    [options.description, options.instructions]
      .filter((t) => typeof t === "string" && t.trim() !== "")
      .join(" "),
  );
  const manifest: CapabilityManifest = {
    name: mcpCapabilityName(server),
    version: typeof options.version === "string" && options.version !== "" ? options.version : "0.0.0",
    description: `Tools of the MCP server "${server}"${about === "" ? "." : `: ${about}`}`,
    tools: out,
    profileFit: [],
  };
  return { manifest, skipped };
}
