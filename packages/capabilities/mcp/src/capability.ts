import { type McpToolInfo, serverTimeoutMs } from "@capgate/mcp-client";
import { CapgateError, closestMatch } from "@capgate/schema";
import { defineCapability, type ToolContext, type ToolResult } from "@capgate/tools";
import { adHocSession, mcpTimeoutMs } from "./ad-hoc-sessions.js";
import { manifest } from "./manifest.js";
import { renderToolList } from "./render-tools.js";
import { type McpTarget, mcpTargetPolicy, resolveTarget, targetName } from "./target.js";

/** Identifies the target in `data`: the configured server's name or the spawned argv. */
function targetData(target: McpTarget): { server: string } | { command: string[] } {
  return target.kind === "configured" ? { server: target.server } : { command: target.argv };
}

/** Abort with the call; time out with the tool call's limit, or a configured server's own if lower. */
function callOptions(target: McpTarget, ctx: ToolContext) {
  let timeoutMs = mcpTimeoutMs(ctx);
  if (target.kind === "configured") {
    const config = target.pool.servers[target.server];
    if (config) timeoutMs = Math.min(timeoutMs, serverTimeoutMs(config));
  }
  return { signal: ctx.signal, timeoutMs };
}

/**
 * The target's tool list (cached by the pool or the ad-hoc session until the server says it
 * changed), and for an ad-hoc server the pid of its process.
 */
async function listToolsOf(
  target: McpTarget,
  ctx: ToolContext,
): Promise<{ tools: McpToolInfo[]; pid?: number }> {
  if (target.kind === "configured")
    return { tools: await target.pool.listTools(target.server, callOptions(target, ctx)) };
  const session = await adHocSession(ctx, target.argv);
  const tools = await session.listTools(callOptions(target, ctx));
  return session.pid === undefined ? { tools } : { tools, pid: session.pid };
}

/**
 * A fault (timeout, crash, failed start, RPC error) as a failed result that names the
 * server or the command line and keeps the error's code for programs.
 */
function failure(target: McpTarget, error: unknown): ToolResult {
  const code = CapgateError.isInstance(error) ? error.code : "mcp_error";
  const message = error instanceof Error ? error.message : String(error);
  let summary = `${targetName(target)}: ${message}`;
  if (target.kind === "ad-hoc" && target.argv.length === 1 && code === "mcp_connect_failed") {
    // A single word that failed to start may have been meant as a configured server.
    const guess = closestMatch(target.argv[0]!, target.configured);
    const names = target.configured.length > 0 ? target.configured.join(", ") : "none";
    summary += ` ('${target.argv[0]}' is not a configured MCP server either — configured: ${names}${guess ? `; did you mean '${guess}'?` : ""})`;
  }
  return { success: false, summary, data: { code, ...targetData(target) } };
}

/** mcp.*: list and call tools of configured MCP servers, or of ad-hoc stdio servers that pass the shell policy. */
export const capability = defineCapability({
  manifest,
  policies: {
    call: mcpTargetPolicy,
    list_tools: mcpTargetPolicy,
  },
  handlers: {
    call: async (args, ctx) => {
      const target = await resolveTarget(args, ctx);
      try {
        // Check the name against the server's list first: an unknown tool gets the list
        // and a suggestion instead of whatever the server answers to an unknown name.
        const { tools } = await listToolsOf(target, ctx);
        if (!tools.some((t) => t.name === args.tool)) {
          const names = tools.map((t) => t.name);
          const guess = closestMatch(args.tool, names);
          return {
            success: false,
            summary: `${targetName(target)} has no tool '${args.tool}'.${guess ? ` Did you mean '${guess}'?` : ""} Its tools: ${names.length > 0 ? names.join(", ") : "none"} (mcp.list_tools shows their arguments).`,
            data: { code: "unknown_tool", ...targetData(target), tools: names },
          };
        }
        const toolArgs = args.arguments ?? {};
        if (target.kind === "configured") {
          return await target.pool.callTool(target.server, args.tool, toolArgs, callOptions(target, ctx));
        }
        const session = await adHocSession(ctx, target.argv);
        const result = await session.callTool(args.tool, toolArgs, callOptions(target, ctx));
        const data = typeof result.data === "object" && result.data !== null ? result.data : {};
        return { ...result, data: { ...data, command: target.argv, pid: session.pid } };
      } catch (error) {
        return failure(target, error);
      }
    },

    list_tools: async (args, ctx) => {
      const target = await resolveTarget(args, ctx);
      try {
        const { tools, pid } = await listToolsOf(target, ctx);
        const rendered = renderToolList(targetName(target), args, tools);
        return {
          success: true,
          summary: rendered.summary,
          data: { ...targetData(target), ...(pid === undefined ? {} : { pid }), tools: rendered.tools },
        };
      } catch (error) {
        return failure(target, error);
      }
    },
  },
});
