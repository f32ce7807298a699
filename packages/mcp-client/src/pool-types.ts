import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpToolInfo, SkippedTool } from "./tool-list.js";

/** Answers a server's `sampling/createMessage` request. Without one, servers get a polite JSON-RPC error. */
export type SamplingHandler = (request: {
  server: string;
  params: CreateMessageRequest["params"];
  signal: AbortSignal;
}) => Promise<CreateMessageResult>;

/** Answers a server's `elicitation/create` request. Without one, servers get a polite JSON-RPC error. */
export type ElicitationHandler = (request: {
  server: string;
  params: ElicitRequest["params"];
  signal: AbortSignal;
}) => Promise<ElicitResult>;

/** What the pool tells its host about servers (for logs and `--debug`; never needed for correctness). */
export type McpPoolEvent =
  | { type: "connected"; server: string; transport: "stdio" | "streamable-http" | "sse"; pid?: number }
  | { type: "disconnected"; server: string; reason: string }
  | { type: "stderr"; server: string; text: string }
  | { type: "garbage"; server: string; line: string }
  | { type: "protocol_error"; server: string; message: string }
  | { type: "tools_skipped"; server: string; skipped: SkippedTool[] }
  /** Every fresh listing, with what admission kept: a host's search index stays the list calls go by. */
  | { type: "tools_listed"; server: string; tools: McpToolInfo[] }
  | { type: "tools_changed"; server: string; tools: McpToolInfo[] }
  | {
      type: "schema_warning";
      server: string;
      tool: string;
      schema: "inputSchema" | "outputSchema";
      message: string;
    };

/**
 * Where tool lists survive between processes, so search can index a server's tools
 * before connecting to it. Keyed by server name and a hash of its config entry, so an
 * edited entry never serves a stale list. `fileToolListCache` (stdio entry) is the disk one.
 */
export interface ToolListCache {
  load(server: string, configHash: string): Promise<McpToolInfo[] | undefined>;
  save(server: string, configHash: string, tools: McpToolInfo[]): Promise<void>;
}

/** One server's tools for search indexing, and where they came from. */
export interface McpServerTools {
  server: string;
  tools: McpToolInfo[];
  /** `live` from the server, `cache` from the ToolListCache, `none` when neither had them. */
  source: "live" | "cache" | "none";
  /** Why the live listing failed, when it did. */
  error?: string;
  /** Tools the live listing left out, with why. */
  skipped?: SkippedTool[];
}
