import type { McpCaller } from "@capgate/mcp-client";
import type { ToolRisk } from "@capgate/schema";
import { approvalNeeded, requireApproval, type ToolContext } from "@capgate/tools";

/**
 * The configured MCP pool as the fallthrough sees it, with the approval mode applied:
 * an MCP tool call asks the approver like a native exec tool would (read-only tools,
 * per their annotations, only in `always` mode), unless the server entry's `approval`
 * override for the tool says `ask` (always) or `never`. Native tools get this from the executor.
 */
export function approvingMcpCaller(
  pool: McpCaller,
  ctx: ToolContext,
  riskOf: (qualified: string) => ToolRisk,
): McpCaller {
  const mode = ctx.policy.approval ?? "never";
  const overrides = Object.values(pool.servers).some((entry) => entry.approval !== undefined);
  if (mode === "never" && !overrides) return pool;
  return {
    servers: pool.servers,
    hasTool: (server, tool, options) => pool.hasTool(server, tool, options),
    ...(pool.excludedBy ? { excludedBy: pool.excludedBy.bind(pool) } : {}),
    async callTool(server, tool, args, options) {
      const qualified = `${server}/${tool}`;
      const risk = riskOf(qualified);
      const override = await pool.approvalOverride?.(server, tool, options);
      if (override === "ask" || (override !== "never" && approvalNeeded(mode, risk))) {
        // Arguments that cannot go out are rejected before anyone is asked to approve them.
        await pool.checkArguments?.(server, tool, args);
        const request = {
          tool: qualified,
          capability: `mcp:${server}`,
          risk,
          arguments: args,
          description: `${qualified} (MCP, ${risk}) ${JSON.stringify(args).slice(0, 200)}`,
          // The server entry's "ask" asks every time; only a question of the mode is grantable.
          grantable: override !== "ask",
        };
        const why = override === "ask" ? `mcpServers.${server}.approval says ask` : `approval mode '${mode}'`;
        await requireApproval(ctx, request, why);
      }
      return pool.callTool(server, tool, args, options);
    },
  };
}
