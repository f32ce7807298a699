import type { McpCaller } from "@capgate/mcp-client";
import type { ToolRisk } from "@capgate/schema";
import { approvalNeeded, requireApproval, type ToolContext } from "@capgate/tools";

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
      if (approvalNeeded(mode, risk)) {
        // Arguments that cannot go out are rejected before anyone is asked to approve them.
        await pool.checkArguments?.(server, tool, args);
        const request = {
          tool: qualified,
          capability: `mcp:${server}`,
          risk,
          arguments: args,
          description: `${qualified} (MCP, ${risk}) ${JSON.stringify(args).slice(0, 200)}`,
        };
        await requireApproval(ctx, request, `approval mode '${mode}'`);
      }
      return pool.callTool(server, tool, args, options);
    },
  };
}
