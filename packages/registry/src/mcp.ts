import {
  type CapabilityManifest,
  compiledValidator,
  type JsonSchema,
  mcpCallableToolName,
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
/** Largest inputSchema / outputSchema kept (as JSON text), the same limit the MCP client applies. */
export const MAX_MCP_SCHEMA_BYTES = 64 * 1024;
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
  if (JSON.stringify(schema).length > MAX_MCP_SCHEMA_BYTES)
    return `inputSchema is larger than ${MAX_MCP_SCHEMA_BYTES} bytes`;
  return undefined;
}

/** True when ajv compiles the schema; a tool whose schema does not is still listed (and called unvalidated). */
function compiles(schema: JsonSchema): boolean {
  try {
    compiledValidator(schema);
    return true;
  } catch {
    return false;
  }
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
    const raw = tool.name;
    // The same mapping the MCP client routes by, so every callable tool is found under the name it is called by.
    const name = typeof raw === "string" ? mcpCallableToolName(raw) : undefined;
    if (typeof raw !== "string" || name === undefined) {
      skipped.push({
        name: typeof raw === "string" ? sanitizeMcpDescription(raw, 128) : `#${i}`,
        reason: "tool name must be 1-128 printable characters without control or format characters",
      });
      return;
    }
    if (seen.has(name)) {
      skipped.push({
        name,
        reason:
          name === raw
            ? "duplicate tool name"
            : `tool name maps to "${name}", which another tool already has`,
      });
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
    let description = sanitizeMcpDescription(tool.description);
    if (description === "") description = `Tool "${name}" of the MCP server "${server}".`;
    if (!compiles(schema as JsonSchema))
      description += " (Its input schema does not compile here, so arguments are sent unchecked.)";
    const title = sanitizeMcpDescription(
      typeof tool.title === "string" ? tool.title : annotations.title,
      200,
    );
    const output = tool.outputSchema;
    const keepOutput = isPlainObject(output) && JSON.stringify(output).length <= MAX_MCP_SCHEMA_BYTES;
    out.push({
      name: `${server}/${name}`,
      description,
      inputSchema: structuredClone(schema) as JsonSchema,
      risk: mcpToolRisk(annotations),
      ...(title !== "" ? { title } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations: structuredClone(annotations) } : {}),
      ...(keepOutput ? { outputSchema: structuredClone(output) as JsonSchema } : {}),
    });
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
