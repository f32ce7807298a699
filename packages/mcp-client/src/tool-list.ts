import type { CapabilityManifest, JsonSchema, ToolRisk } from "@capgate/schema";
import { stripControl } from "./render.js";
import { qualifyToolName } from "./routing.js";

/** One tool of a configured server, as search, routing and the model see it. */
export interface McpToolInfo {
  server: string;
  /** The server's own name for the tool, sent verbatim on calls. */
  name: string;
  /** `<server>/<name>` — the only name the model uses, so server tools never shadow native ones. */
  qualifiedName: string;
  /** Control characters stripped, at most MAX_TOOL_DESCRIPTION characters. */
  description: string;
  inputSchema: JsonSchema;
  /** `read` when the server marks the tool read-only, else `exec` (it runs someone else's code). */
  risk: ToolRisk;
}

/** A tool left out of a listing, with the reason (hostile or malformed entries). */
export interface SkippedTool {
  server: string;
  /** The name as JSON (escaped), cut to 80 characters. */
  name: string;
  reason: string;
}

export const MAX_TOOL_NAME = 128;
export const MAX_TOOL_DESCRIPTION = 2_000;
export const MAX_TOOL_SCHEMA_BYTES = 64 * 1024;

// Printable, no whitespace, no control or format characters: a model must be able to type it.
const TOOL_NAME_OK = /^[^\s\p{Cc}\p{Cf}]+$/u;

function preview(name: unknown): string {
  const s = JSON.stringify(typeof name === "string" ? name : String(name)) ?? "";
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/**
 * Normalise a server's raw tool list: names with whitespace or control characters, over
 * 128 characters, duplicated, or with a schema over 64 KiB are skipped (and reported);
 * descriptions lose control characters and are capped. Every kept tool is namespaced as
 * `<server>/<name>`, so a server tool called `fs.read` or `other/thing` stays `srv/fs.read`
 * and `srv/other/thing`.
 */
export function normalizeToolList(
  server: string,
  raw: readonly unknown[],
): { tools: McpToolInfo[]; skipped: SkippedTool[] } {
  const tools: McpToolInfo[] = [];
  const skipped: SkippedTool[] = [];
  const seen = new Set<string>();
  for (const entry of raw) {
    const t = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
    const name = t.name;
    const skip = (reason: string) => skipped.push({ server, name: preview(name), reason });
    if (typeof name !== "string" || name.length === 0) {
      skip("tool name is missing or not a string");
      continue;
    }
    if (name.length > MAX_TOOL_NAME) {
      skip(`tool name is longer than ${MAX_TOOL_NAME} characters`);
      continue;
    }
    if (!TOOL_NAME_OK.test(name)) {
      skip("tool name contains whitespace or control characters");
      continue;
    }
    if (seen.has(name)) {
      skip("duplicate tool name");
      continue;
    }
    const schema = t.inputSchema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      skip("inputSchema is not an object");
      continue;
    }
    const schemaText = JSON.stringify(schema);
    if (schemaText.length > MAX_TOOL_SCHEMA_BYTES) {
      skip(`inputSchema is larger than ${MAX_TOOL_SCHEMA_BYTES} bytes`);
      continue;
    }
    seen.add(name);
    let description = stripControl(typeof t.description === "string" ? t.description : "").trim();
    if (description.length > MAX_TOOL_DESCRIPTION)
      description = `${description.slice(0, MAX_TOOL_DESCRIPTION - 1)}…`;
    const annotations = (
      typeof t.annotations === "object" && t.annotations !== null ? t.annotations : {}
    ) as Record<string, unknown>;
    tools.push({
      server,
      name,
      qualifiedName: qualifyToolName(server, name),
      description,
      inputSchema: JSON.parse(schemaText) as JsonSchema,
      risk: annotations.readOnlyHint === true ? "read" : "exec",
    });
  }
  return { tools, skipped };
}

/**
 * The tools of one server as a capability manifest named `mcp:<server>` whose tools are
 * `<server>/<tool>` — the reserved namespace the registry indexes for search (SPEC §3).
 */
export function toCapabilityManifest(
  server: string,
  tools: readonly McpToolInfo[],
  options: { description?: string; version?: string } = {},
): CapabilityManifest {
  return {
    name: `mcp:${server}`,
    version: options.version ?? "0.0.0",
    description:
      options.description ??
      `Tools of the configured MCP server '${server}'. Call them as ${server}/<tool> with capability_call.`,
    tools: tools.map((t) => ({
      name: t.qualifiedName,
      description: t.description || `MCP tool ${t.name} of server ${server}.`,
      inputSchema: t.inputSchema,
      risk: t.risk,
    })),
    profileFit: [],
  };
}
