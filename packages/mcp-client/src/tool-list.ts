import {
  admitMcpTools,
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
  /** JSON Schema the tool's structuredContent should match, when the server declares a usable one. */
  outputSchema?: JsonSchema;
  /** Why a declared outputSchema is not used (its results then carry a warning). */
  outputSchemaProblem?: string;
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
  /** The name a call would use (`<server>/<callable>`), when the server's name maps to one. */
  callable?: string;
  reason: string;
}

export const MAX_TOOL_DESCRIPTION = 2_000;

/**
 * Normalise a server's raw tool list by the one admission rule (`admitMcpTools` of
 * @capgate/schema: names, duplicates, schemas that can check arguments); the tools it
 * refuses are returned as `skipped`, with why. Descriptions lose control characters and
 * are capped. Every kept tool is namespaced as `<server>/<name>`, so a server tool called
 * `fs.read` or `other/thing` stays `srv/fs.read` and `srv/other/thing`.
 */
export function normalizeToolList(
  server: string,
  raw: readonly unknown[],
): { tools: McpToolInfo[]; skipped: SkippedTool[] } {
  const { admitted, refused } = admitMcpTools(raw);
  const skipped = refused.map(
    (r): SkippedTool => ({
      server,
      name: r.label,
      ...(r.callable !== undefined ? { callable: r.callable } : {}),
      reason: r.reason,
    }),
  );
  const tools = admitted.map((tool): McpToolInfo => {
    const t = tool.entry;
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
    return {
      server,
      name: tool.name,
      qualifiedName: qualifyToolName(server, tool.callable),
      description,
      inputSchema: tool.inputSchema,
      risk: riskFromAnnotations(annotations),
      ...(title !== undefined && stripControl(title).trim() !== ""
        ? { title: stripControl(title).trim().slice(0, 200) }
        : {}),
      ...(Object.keys(annotations).length > 0
        ? { annotations: JSON.parse(JSON.stringify(annotations)) as McpToolAnnotations }
        : {}),
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.outputSchemaProblem ? { outputSchemaProblem: tool.outputSchemaProblem } : {}),
    };
  });
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
