import {
  type CapabilityManifest,
  compiledValidator,
  type JsonSchema,
  type ToolManifest,
} from "@capgate/schema";
import { InvalidMcpServerError } from "./errors.js";
import { MCP_NAMESPACE } from "./validate-manifest.js";

/** A tool as an MCP server lists it (`tools/list`). Everything in it is untrusted input. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
  /** MCP tool annotations; only `readOnlyHint` is read (true → risk `read`, otherwise `exec`). */
  annotations?: { readOnlyHint?: boolean; [hint: string]: unknown };
}

export interface McpServerOptions {
  /** A sentence about the server for search (e.g. from its config or `instructions`); sanitised like tool descriptions. */
  description?: string;
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
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
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

function schemaProblem(schema: unknown): string | undefined {
  if (!isPlainObject(schema)) return "inputSchema is not a JSON object";
  if (schema.type !== "object")
    return `inputSchema.type must be "object", got ${JSON.stringify(schema.type)}`;
  try {
    compiledValidator(schema as JsonSchema);
  } catch (error) {
    return `inputSchema does not compile: ${(error as Error).message}`;
  }
  return undefined;
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
  const skipped: McpSkippedTool[] = [];
  const seen = new Set<string>();
  const out: ToolManifest[] = [];
  tools.forEach((tool, i) => {
    if (!isPlainObject(tool)) {
      skipped.push({ name: `#${i}`, reason: "not an object" });
      return;
    }
    const name = tool.name;
    if (typeof name !== "string" || !MCP_TOOL_NAME_PATTERN.test(name)) {
      skipped.push({
        name: typeof name === "string" ? sanitizeMcpDescription(name, 128) : `#${i}`,
        reason: "tool name must match ^[A-Za-z0-9_.-]{1,128}$",
      });
      return;
    }
    if (seen.has(name)) {
      skipped.push({ name, reason: "duplicate tool name" });
      return;
    }
    const schema = tool.inputSchema === undefined ? { type: "object" } : tool.inputSchema;
    const problem = schemaProblem(schema);
    if (problem) {
      skipped.push({ name, reason: problem });
      return;
    }
    seen.add(name);
    const annotations = isPlainObject(tool.annotations) ? tool.annotations : {};
    const description = sanitizeMcpDescription(tool.description);
    out.push({
      name: `${server}/${name}`,
      description: description === "" ? `Tool "${name}" of the MCP server "${server}".` : description,
      inputSchema: structuredClone(schema) as JsonSchema,
      risk: annotations.readOnlyHint === true ? "read" : "exec",
    });
  });
  const about = sanitizeMcpDescription(options.description);
  const manifest: CapabilityManifest = {
    name: mcpCapabilityName(server),
    version: typeof options.version === "string" && options.version !== "" ? options.version : "0.0.0",
    description: `Tools of the MCP server "${server}"${about === "" ? "." : `: ${about}`}`,
    tools: out,
    profileFit: [],
  };
  return { manifest, skipped };
}
