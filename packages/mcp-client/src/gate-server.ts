import { topLevelToolSchemas, topLevelTools, validate } from "@capgate/schema";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type {
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpProgress } from "./session.js";

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
export type GateHandler = (args: Record<string, unknown>, extra: GateCallExtra) => Promise<unknown>;

/** What a gate tool's handler gets beside its arguments. */
export interface GateCallExtra {
  /** Aborted when the client cancels the call (`notifications/cancelled`) or the connection ends. */
  signal: AbortSignal;
  /** Present when the client asked for progress (a `progressToken`): reports go to it as `notifications/progress`. */
  onProgress?: (progress: McpProgress) => void;
}

/**
 * Resources the gate serves: those its tools returned links to (`resource_link` blocks of
 * upstream results), each read from the server that returned it. `read` throws for any
 * other URI.
 */
export interface GateResources {
  list(): Resource[];
  read(uri: string, extra: { signal: AbortSignal }): Promise<ReadResourceResult>;
}

/** The upstream servers' prompts, named `<server>/<prompt>`. */
export interface GatePrompts {
  list(extra: { signal: AbortSignal }): Promise<Prompt[]>;
  get(name: string, args: Record<string, string>, extra: { signal: AbortSignal }): Promise<GetPromptResult>;
}

export interface GateServerOptions {
  name: string;
  version: string;
  handlers: Record<GateToolName, GateHandler>;
  /** Shown to clients in initialize (default: how to use search → load → call). */
  instructions?: string;
  /** Serve `resources/list` and `resources/read` (declares the resources capability). */
  resources?: GateResources;
  /** Serve `prompts/list` and `prompts/get` (declares the prompts capability). */
  prompts?: GatePrompts;
}

/** Code of a JSON-RPC error for a resource the server does not have (MCP spec). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error whose message goes on the wire as written. The SDK's McpError puts
 * "MCP error <code>: " into its message, which the SDK sends, and a client built on the
 * SDK prefixes its own again ("MCP error -32602: MCP error -32602: …").
 */
export function rpcError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
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
export async function createGateServer(options: GateServerOptions): Promise<Server> {
  const schemas = topLevelToolSchemas();
  const definitions = topLevelTools().filter((t) => (GATE_TOOL_NAMES as readonly string[]).includes(t.name));
  for (const name of GATE_TOOL_NAMES)
    if (typeof options.handlers?.[name] !== "function")
      throw new TypeError(`createGateServer: handlers.${name} must be a function`);
  // The SDK (and zod under it) loads when a gate server is made, not with this package:
  // a process that only calls tools never pays for it.
  const [{ Server }, sdk] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: {
        tools: {},
        ...(options.resources ? { resources: {} } : {}),
        ...(options.prompts ? { prompts: {} } : {}),
      },
      instructions: options.instructions ?? DEFAULT_INSTRUCTIONS,
    },
  );
  server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({
    tools: definitions.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object"; [key: string]: unknown },
    })),
  }));
  server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    // An unknown tool is a protocol error (JSON-RPC -32602), as the MCP spec says, not a tool result.
    if (!(GATE_TOOL_NAMES as readonly string[]).includes(name))
      throw rpcError(
        sdk.ErrorCode.InvalidParams,
        `Unknown tool '${name}'. This server exposes: ${GATE_TOOL_NAMES.join(", ")}.`,
      );
    const tool = name as GateToolName;
    const args = request.params.arguments ?? {};
    const check = validate(schemas[tool], args);
    if (!check.ok)
      return errorResult(
        check.errors.map((e) => (e.property ? `${e.property}: ${e.message}` : e.message)).join("\n"),
      );
    const token = request.params._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (progress: McpProgress) =>
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { ...progress, progressToken: token },
              })
              .catch(() => undefined);
    try {
      return toCallToolResult(
        await options.handlers[tool](args, { signal: extra.signal, ...(onProgress ? { onProgress } : {}) }),
      );
    } catch (error) {
      return errorResult(error instanceof Error ? error.message : String(error));
    }
  });
  const resources = options.resources;
  if (resources) {
    server.setRequestHandler(sdk.ListResourcesRequestSchema, async () => ({ resources: resources.list() }));
    server.setRequestHandler(sdk.ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
    server.setRequestHandler(sdk.ReadResourceRequestSchema, (request, extra) =>
      resources.read(request.params.uri, { signal: extra.signal }),
    );
  }
  const prompts = options.prompts;
  if (prompts) {
    server.setRequestHandler(sdk.ListPromptsRequestSchema, async (_request, extra) => ({
      prompts: await prompts.list({ signal: extra.signal }),
    }));
    server.setRequestHandler(sdk.GetPromptRequestSchema, (request, extra) =>
      prompts.get(request.params.name, request.params.arguments ?? {}, { signal: extra.signal }),
    );
  }
  return server;
}
