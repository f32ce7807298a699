import { CapgateError } from "@capgate/schema";
import type { McpServersMap } from "./config.js";
import { McpClientError } from "./errors.js";
import type { McpCaller } from "./pool.js";
import type { ToolResult } from "./render.js";
import { routeMcpTool } from "./routing.js";
import type { McpProgress } from "./session.js";
import { toolExcludedError } from "./tool-filter.js";

export interface CapabilityStep {
  tool: string;
  arguments?: Record<string, unknown>;
}

export interface CapabilityStepOptions {
  /** Native dispatch (the executor). Runs first, always. */
  native: () => Promise<ToolResult>;
  /**
   * MCP fallthrough policy as an argument: a pool (chat loop), an empty map (goal loop:
   * native only until it opts in), or undefined (no MCP at all).
   */
  mcp: McpCaller | McpServersMap | undefined;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Progress an MCP server reports while the call runs. */
  onProgress?: (progress: McpProgress) => void;
}

export interface CapabilityStepOutcome {
  via: "native" | "mcp";
  /** The server that answered, for `via: "mcp"`. */
  server?: string;
  /** The tool's name on that server, for `via: "mcp"`. */
  tool?: string;
  result: ToolResult;
}

/**
 * The fallthrough trigger, checked structurally so any copy of @capgate/tools (or any
 * CapgateError with code `unknown_tool`) counts: an unknown or not-loaded tool.
 */
export function isUnknownToolErrorLike(error: unknown): error is CapgateError {
  return CapgateError.isInstance(error) && error.code === "unknown_tool";
}

/** A registered native capability owns the name; it is merely not loaded. */
function ownedByNativeCapability(error: CapgateError): boolean {
  return typeof (error as { owner?: unknown }).owner === "string";
}

function isCaller(mcp: McpCaller | McpServersMap): mcp is McpCaller {
  return typeof (mcp as Partial<McpCaller>).callTool === "function";
}

/**
 * Run native dispatch; only when it fails with an unknown-tool error, try MCP by the one
 * routing rule. When routing answers "none" (no enabled server), the original native
 * error is rethrown, so a misspelled `fs.read` is told about `fs.read`, not about MCP.
 * A bare name reaches MCP only if it is not a native capability's tool (not-loaded `fs.read`
 * stays a native error: a server cannot shadow native tools) and the first server lists it.
 * `<server>/<tool>` always goes to that server; other native errors are never retried.
 */
export async function executeCapabilityStep(
  step: CapabilityStep,
  options: CapabilityStepOptions,
): Promise<CapabilityStepOutcome> {
  let nativeError: unknown;
  try {
    return { via: "native", result: await options.native() };
  } catch (error) {
    nativeError = error;
  }
  if (!isUnknownToolErrorLike(nativeError)) throw nativeError;
  const mcp = options.mcp;
  if (mcp === undefined) throw nativeError;
  const servers = isCaller(mcp) ? mcp.servers : mcp;
  const route = routeMcpTool(step.tool, servers);
  if (!route) throw nativeError;
  if (!isCaller(mcp))
    throw new McpClientError(
      "mcp_unavailable",
      `Tool '${step.tool}' would go to MCP server '${route.server}', but no MCP session pool was given; pass an McpPool as \`mcp\`.`,
      { server: route.server },
    );
  const callOptions = {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  if (!route.explicit) {
    if (ownedByNativeCapability(nativeError)) throw nativeError;
    if (!(await mcp.hasTool(route.server, route.tool, callOptions))) {
      // A tool the config keeps out is refused as such, not as unknown.
      const why = await mcp.excludedBy?.(route.server, route.tool, callOptions);
      if (why !== undefined) throw toolExcludedError(route.server, route.tool, why);
      throw nativeError;
    }
  }
  const result = await mcp.callTool(route.server, route.tool, step.arguments ?? {}, callOptions);
  return { via: "mcp", server: route.server, tool: route.tool, result };
}
