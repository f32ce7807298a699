import { type McpToolInfo, serverTimeoutMs } from "@capgate/mcp-client";
import { CapgateError, closestMatch, mcpToolLabel } from "@capgate/schema";
import { defineCapability, requireApproval, type ToolContext, type ToolResult } from "@capgate/tools";
import { adHocSession, mcpTimeoutMs } from "./ad-hoc-sessions.js";
import { configuredServerPolicy, getPrompt, listPrompts, listResources, readResource } from "./features.js";
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

/** Tool names quoted when a name is unknown (the rest are counted). */
const NAMES_SHOWN = 20;

/** Why the MCP client refuses a tool by this name although the server may have it (admission), if it does. */
async function refusalOf(target: McpTarget, ctx: ToolContext, tool: string): Promise<string | undefined> {
  if (target.kind === "configured")
    return target.pool.refusalOf?.(target.server, tool, callOptions(target, ctx));
  return (await adHocSession(ctx, target.argv)).refusalOf(tool, callOptions(target, ctx));
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

/**
 * A configured server's `"ask"` override holds through mcp.call too (the model could
 * otherwise reach an ask tool without a question under `approval: "never"`). It is asked
 * even when the approval mode already asked about this mcp.call: that question may have
 * been answered by a grant for `mcp.call` ("allow for the rest of the run"), which must not
 * stand in for the override. The override's own question is never grantable.
 */
async function askWhenConfigured(
  target: Extract<McpTarget, { kind: "configured" }>,
  ctx: ToolContext,
  tool: string,
  toolArgs: Record<string, unknown>,
): Promise<void> {
  const override = await target.pool.approvalOverride?.(target.server, tool, callOptions(target, ctx));
  if (override !== "ask") return;
  const qualified = `${target.server}/${tool}`;
  await requireApproval(
    ctx,
    {
      tool: qualified,
      capability: `mcp:${target.server}`,
      risk: "exec",
      arguments: toolArgs,
      description: `${qualified} (MCP, through mcp.call) ${JSON.stringify(toolArgs).slice(0, 200)}`,
      grantable: false,
    },
    `mcpServers.${target.server}.approval says ask`,
  );
}

/** mcp.*: list and call tools of configured MCP servers, or of ad-hoc stdio servers that pass the shell policy. */
export const capability = defineCapability({
  manifest,
  policies: {
    call: mcpTargetPolicy,
    list_tools: mcpTargetPolicy,
    list_resources: configuredServerPolicy,
    read_resource: configuredServerPolicy,
    list_prompts: configuredServerPolicy,
    get_prompt: configuredServerPolicy,
  },
  handlers: {
    list_resources: listResources,
    read_resource: readResource,
    list_prompts: listPrompts,
    get_prompt: getPrompt,

    call: async (args, ctx) => {
      const target = await resolveTarget(args, ctx);
      try {
        // Check the name against the server's admitted list first: a tool capgate refuses
        // says why, an unknown one gets a suggestion and the names — nothing is sent either way.
        const { tools } = await listToolsOf(target, ctx);
        if (!tools.some((t) => t.name === args.tool)) {
          const refused = await refusalOf(target, ctx, args.tool);
          if (refused)
            return {
              success: false,
              summary: `${refused} Nothing was sent to the server.`,
              data: { code: "unknown_tool", ...targetData(target) },
            };
          const names = tools.map((t) => t.name);
          const guess = closestMatch(args.tool, names);
          const shown = names.slice(0, NAMES_SHOWN).join(", ");
          const rest = names.length > NAMES_SHOWN ? `, … (${names.length} in all)` : "";
          return {
            success: false,
            summary: `${targetName(target)} has no tool ${mcpToolLabel(args.tool)}.${guess ? ` Did you mean '${guess}'?` : ""} Its tools: ${names.length > 0 ? `${shown}${rest}` : "none"} (mcp.list_tools shows their arguments).`,
            data: {
              code: "unknown_tool",
              ...targetData(target),
              tools: names.slice(0, NAMES_SHOWN),
              toolCount: names.length,
            },
          };
        }
        const toolArgs = args.arguments ?? {};
        if (target.kind === "configured") {
          await askWhenConfigured(target, ctx, args.tool, toolArgs);
          return await target.pool.callTool(target.server, args.tool, toolArgs, callOptions(target, ctx));
        }
        const session = await adHocSession(ctx, target.argv);
        const result = await session.callTool(args.tool, toolArgs, callOptions(target, ctx));
        const data = typeof result.data === "object" && result.data !== null ? result.data : {};
        return { ...result, data: { ...data, command: target.argv, pid: session.pid } };
      } catch (error) {
        // An approval refused is a policy refusal of the call, as for any tool, not a server fault.
        if (CapgateError.isInstance(error) && error.code === "policy_denied") throw error;
        return failure(target, error);
      }
    },

    list_tools: async (args, ctx) => {
      const target = await resolveTarget(args, ctx);
      try {
        const { tools, pid } = await listToolsOf(target, ctx);
        const rendered = renderToolList(
          targetName(target),
          args,
          tools,
          target.kind === "configured" ? { server: target.server } : {},
        );
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
