// MCP content blocks: one shape for tool results (@capgate/tools) and MCP results (@capgate/mcp-client).

/** MCP content annotations: who a block is for, how much it matters, when it changed. */
export interface ContentAnnotations {
  audience?: Array<"user" | "assistant">;
  priority?: number;
  lastModified?: string;
  [key: string]: unknown;
}

/**
 * One content block of a tool result, in MCP's shapes (text, image, audio, resource_link,
 * embedded resource), with annotations and `_meta` kept as sent. Binary payloads are base64.
 */
export type ContentBlock =
  | { type: "text"; text: string; annotations?: ContentAnnotations; _meta?: Record<string, unknown> }
  | {
      type: "image" | "audio";
      data: string;
      mimeType: string;
      annotations?: ContentAnnotations;
      _meta?: Record<string, unknown>;
    }
  | {
      type: "resource_link";
      uri: string;
      name: string;
      title?: string;
      description?: string;
      mimeType?: string;
      size?: number;
      annotations?: ContentAnnotations;
      _meta?: Record<string, unknown>;
    }
  | {
      type: "resource";
      resource: {
        uri: string;
        mimeType?: string;
        text?: string;
        blob?: string;
        _meta?: Record<string, unknown>;
      };
      annotations?: ContentAnnotations;
      _meta?: Record<string, unknown>;
    };

/**
 * What every tool call returns — a capability's handler, an MCP server's call rendered by
 * @capgate/mcp-client — so each host reads one shape. `summary` is what the model reads;
 * `data` is for programs.
 */
export interface ToolResult {
  success: boolean;
  /** The model-facing text (always present, even when `content` carries more). */
  summary: string;
  data?: unknown;
  /** Rich content (MCP content blocks: images, audio, resource links, embedded resources), unflattened. */
  content?: ContentBlock[];
  /** A structured result (MCP `structuredContent`), e.g. matching a tool's outputSchema. */
  structuredContent?: unknown;
}
