import type { McpCaller } from "@capgate/mcp-client";
import type { ToolRisk } from "@capgate/schema";
import { PolicyDeniedError, type ToolContext } from "@capgate/tools";

/**
 * The configured MCP pool as the fallthrough sees it, with the approval mode applied:
 * an MCP tool call asks the approver like a native exec tool would (read-only tools,
 * per their annotations, only in `always` mode). Native tools get this from the executor.
 */
export function approvingMcpCaller(
  pool: McpCaller,
  ctx: ToolContext,
  riskOf: (qualified: string) => ToolRisk,
): McpCaller {
  const mode = ctx.policy.approval ?? "never";
  if (mode === "never") return pool;
  return {
    servers: pool.servers,
    hasTool: (server, tool, options) => pool.hasTool(server, tool, options),
    async callTool(server, tool, args, options) {
      const qualified = `${server}/${tool}`;
      const risk = riskOf(qualified);
      if (mode === "always" || risk !== "read") {
        const request = {
          tool: qualified,
          capability: `mcp:${server}`,
          risk,
          arguments: args,
          description: `${qualified} (MCP, ${risk}) ${JSON.stringify(args).slice(0, 200)}`,
        };
        const approved = ctx.approve ? await ctx.approve(request, ctx.signal).catch(() => false) : false;
        if (!approved) {
          throw new PolicyDeniedError(
            ctx.approve
              ? `The operator denied ${qualified}; it was not run.`
              : `${qualified} needs approval (approval mode '${mode}') and no one can approve here; it was not run.`,
          );
        }
      }
      return pool.callTool(server, tool, args, options);
    },
  };
}
