import {
  type CapabilityManifest,
  type JsonSchema,
  mcpCallableToolName,
  mcpToolRisk,
  type ToolRisk,
} from "@capgate/schema";
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
  /** From the annotations (see `riskFromAnnotations`): `read`, `network`, `write` or `exec`. */
  risk: ToolRisk;
  /** The server's human-readable title (control characters stripped), when it sent one. */
  title?: string;
  /** The server's annotations, as sent (hints only: a server may lie, so they only ever add caution). */
  annotations?: McpToolAnnotations;
  /** JSON Schema the tool's structuredContent should match, when the server declares one. */
  outputSchema?: JsonSchema;
}

/** MCP tool annotations (all optional hints). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [hint: string]: unknown;
}

/** The risk of an MCP tool from its annotations (@capgate/schema `mcpToolRisk`: only read-only tools are `read`). */
export const riskFromAnnotations = mcpToolRisk;

/** The name a model calls a server's tool by (@capgate/schema `mcpCallableToolName`: whitespace runs become `_`). */
export const callableToolName = mcpCallableToolName;

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
    const callable = callableToolName(name);
    if (callable === undefined) {
      skip("tool name contains control or format characters");
      continue;
    }
    if (seen.has(callable)) {
      skip(
        callable === name
          ? "duplicate tool name"
          : `tool name maps to ${JSON.stringify(callable)}, which another tool already has`,
      );
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
    seen.add(callable);
    let description = stripControl(typeof t.description === "string" ? t.description : "").trim();
    if (description.length > MAX_TOOL_DESCRIPTION)
      description = `${description.slice(0, MAX_TOOL_DESCRIPTION - 1)}…`;
    const annotations = (
      typeof t.annotations === "object" && t.annotations !== null ? t.annotations : {}
    ) as Record<string, unknown>;
    const title =
      typeof t.title === "string"
        ? t.title
        : typeof annotations.title === "string"
          ? annotations.title
          : undefined;
    const output = t.outputSchema;
    const outputOk =
      typeof output === "object" &&
      output !== null &&
      !Array.isArray(output) &&
      JSON.stringify(output).length <= MAX_TOOL_SCHEMA_BYTES;
    tools.push({
      server,
      name,
      qualifiedName: qualifyToolName(server, callable),
      description,
      inputSchema: JSON.parse(schemaText) as JsonSchema,
      risk: riskFromAnnotations(annotations),
      ...(title !== undefined && stripControl(title).trim() !== ""
        ? { title: stripControl(title).trim().slice(0, 200) }
        : {}),
      ...(Object.keys(annotations).length > 0
        ? { annotations: JSON.parse(JSON.stringify(annotations)) as McpToolAnnotations }
        : {}),
      ...(outputOk ? { outputSchema: JSON.parse(JSON.stringify(output)) as JsonSchema } : {}),
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
      ...(t.title ? { title: t.title } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
      ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    })),
    profileFit: [],
  };
}
