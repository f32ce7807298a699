import { topLevelToolSchemas, topLevelTools, validate } from "@capgate/schema";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

/** The four top-level tools the gate exposes to MCP clients (the loop-only ones stay inside). */
export const GATE_TOOL_NAMES = [
  "capability_search",
  "capability_load",
  "capability_call",
  "memory_search",
] as const;
export type GateToolName = (typeof GATE_TOOL_NAMES)[number];

/**
 * Implements one gate tool. Arguments arrive already validated against the tool's schema.
 * Return a string (sent as text), a ToolResult-like `{ success, summary }` (summary as
 * text, `isError` = !success), or any JSON value (sent pretty-printed). A ToolResult with
 * `content` (MCP content blocks) is sent as those blocks, unchanged, with its
 * `structuredContent`, and any `warnings` (strings) as one more text block. A rejection
 * becomes `isError: true` with its message.
 */
export type GateHandler = (args: Record<string, unknown>, extra: { signal: AbortSignal }) => Promise<unknown>;

export interface GateServerOptions {
  name: string;
  version: string;
  handlers: Record<GateToolName, GateHandler>;
  /** Shown to clients in initialize (default: how to use search → load → call). */
  instructions?: string;
}

const DEFAULT_INSTRUCTIONS =
  "This server is a capability gate. Find tools with capability_search, load a capability with capability_load (the reply lists exact signatures), then call a tool with capability_call { tool, arguments }.";

function isToolResultLike(value: unknown): value is { success: boolean; summary: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { success?: unknown }).success === "boolean" &&
    typeof (value as { summary?: unknown }).summary === "string"
  );
}

function toCallToolResult(value: unknown): CallToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (isToolResultLike(value)) {
    const rich = value as { content?: unknown; structuredContent?: unknown; warnings?: unknown };
    const blocks = Array.isArray(rich.content) && rich.content.length > 0 ? rich.content : undefined;
    const warnings = Array.isArray(rich.warnings) ? rich.warnings.filter((w) => typeof w === "string") : [];
    const content = [
      ...(blocks ?? [{ type: "text", text: value.summary }]),
      ...(blocks && warnings.length > 0 ? [{ type: "text", text: warnings.join("\n") }] : []),
    ] as CallToolResult["content"];
    const structured =
      typeof rich.structuredContent === "object" &&
      rich.structuredContent !== null &&
      !Array.isArray(rich.structuredContent)
        ? { structuredContent: rich.structuredContent as Record<string, unknown> }
        : {};
    return { content, ...structured, ...(value.success ? {} : { isError: true }) };
  }
  const text = value === undefined ? "(no result)" : (JSON.stringify(value, null, 2) ?? String(value));
  return { content: [{ type: "text", text }] };
}

function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * The gate as an MCP server, transport-independent: exactly the four tools above, with the
 * schemas of `topLevelToolSchemas()` and descriptions of `topLevelTools()`, implemented by
 * the injected callbacks. The host connects it (`serveGateOverStdio` from the stdio entry,
 * or a Streamable HTTP transport in the server app). Uses the SDK's low-level `Server`
 * because the tools are defined by JSON Schema, not zod.
 */
export function createGateServer(options: GateServerOptions): Server {
  const schemas = topLevelToolSchemas();
  const definitions = topLevelTools().filter((t) => (GATE_TOOL_NAMES as readonly string[]).includes(t.name));
  for (const name of GATE_TOOL_NAMES)
    if (typeof options.handlers?.[name] !== "function")
      throw new TypeError(`createGateServer: handlers.${name} must be a function`);
  const server = new Server(
    { name: options.name, version: options.version },
    { capabilities: { tools: {} }, instructions: options.instructions ?? DEFAULT_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: definitions.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object"; [key: string]: unknown },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    // An unknown tool is a protocol error (JSON-RPC -32602), as the MCP spec says, not a tool result.
    if (!(GATE_TOOL_NAMES as readonly string[]).includes(name))
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool '${name}'. This server exposes: ${GATE_TOOL_NAMES.join(", ")}.`,
      );
    const tool = name as GateToolName;
    const args = request.params.arguments ?? {};
    const check = validate(schemas[tool], args);
    if (!check.ok)
      return errorResult(
        check.errors.map((e) => (e.property ? `${e.property}: ${e.message}` : e.message)).join("\n"),
      );
    try {
      return toCallToolResult(await options.handlers[tool](args, { signal: extra.signal }));
    } catch (error) {
      return errorResult(error instanceof Error ? error.message : String(error));
    }
  });
  return server;
}
