import { CapgateError, type CapgateErrorOptions } from "@capgate/schema";

/**
 * Stable codes of MCP client errors. Transport faults are local errors (`mcp_*`); a
 * JSON-RPC error reply from a server keeps its wire code in `rpcCode`.
 */
export type McpErrorCode =
  | "invalid_config"
  | "mcp_unavailable"
  | "mcp_connect_failed"
  | "mcp_timeout"
  | "mcp_closed"
  | "mcp_aborted"
  | "mcp_rpc_error"
  /** A `url` server needs an OAuth login first (`capgate mcp login <server>`). */
  | "mcp_auth_required"
  /** The OAuth flow itself failed (discovery, registration, token endpoint, redirect). */
  | "mcp_auth_failed";

export interface McpClientErrorOptions extends CapgateErrorOptions {
  /** The configured server the error is about. */
  server?: string;
  /** JSON-RPC error code, when the server answered with an error. */
  rpcCode?: number;
}

/** An MCP fault that names its server. Never replayed: the caller decides whether to try again. */
export class McpClientError extends CapgateError {
  readonly server: string | undefined;
  readonly rpcCode: number | undefined;
  constructor(code: McpErrorCode, message: string, options: McpClientErrorOptions = {}) {
    super(code, message, options);
    this.name = "McpClientError";
    this.server = options.server;
    this.rpcCode = options.rpcCode;
  }
}

export interface ConfigProblem {
  property: string;
  message: string;
}

/** The `mcpServers` value is malformed. `problems` lists every fault; `property` names the first. */
export class McpConfigError extends CapgateError {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    const first = problems[0] ?? { property: "mcpServers", message: "mcpServers is invalid" };
    const message =
      problems.length <= 1
        ? first.message
        : `${problems.length} problems in mcpServers: ${problems.map((p) => p.message).join("; ")}`;
    super("invalid_config", message, { property: first.property });
    this.name = "McpConfigError";
    this.problems = problems;
  }
}
