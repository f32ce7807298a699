import {
  type McpCallOptions,
  type McpPromptInfo,
  type McpResourceListing,
  type ToolResult as McpToolResult,
  serverTimeoutMs,
} from "@capgate/mcp-client";
import { CapgateError, closestMatch } from "@capgate/schema";
import { InvalidArgumentsError, PolicyDeniedError, type ToolContext, type ToolResult } from "@capgate/tools";
import { mcpTimeoutMs } from "./ad-hoc-sessions.js";
import { type McpPoolLike, poolOf } from "./target.js";

/** Resources, templates and prompts a listing shows the model at most (the count of the rest follows). */
const SHOWN = 50;

/** What mcp.list_resources, mcp.read_resource, mcp.list_prompts and mcp.get_prompt need of the host's pool. */
export interface McpFeaturesLike extends McpPoolLike {
  listResources(server: string, options?: McpCallOptions): Promise<McpResourceListing>;
  readResource(server: string, uri: string, options?: McpCallOptions): Promise<McpToolResult>;
  listPrompts(server: string, options?: McpCallOptions): Promise<McpPromptInfo[]>;
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
    options?: McpCallOptions,
  ): Promise<McpToolResult>;
}

/**
 * The host's pool and a configured, enabled server of it. Resources and prompts are read
 * from configured servers only: an ad-hoc command line has nothing to keep them for.
 */
function configured(ctx: ToolContext, server: string): McpFeaturesLike {
  const pool = poolOf(ctx) as Partial<McpFeaturesLike> | undefined;
  if (!pool || typeof pool.readResource !== "function" || typeof pool.getPrompt !== "function")
    throw new PolicyDeniedError(
      "No MCP servers are configured here: resources and prompts are read from servers in the configuration's mcpServers.",
      { property: "server" },
    );
  const names = Object.keys(pool.servers ?? {});
  if (!names.includes(server)) {
    const guess = closestMatch(server, names);
    throw new InvalidArgumentsError(
      `'${server}' is not a configured MCP server.${guess ? ` Did you mean '${guess}'?` : ""} Configured: ${names.join(", ") || "none"}.`,
      { property: "server" },
    );
  }
  if (pool.servers?.[server]?.enabled === false)
    throw new PolicyDeniedError(
      `MCP server '${server}' is disabled in the configuration ("enabled": false); it was not started.`,
      { property: "server" },
    );
  return pool as McpFeaturesLike;
}

/** Abort with the call; time out with the tool call's limit, or the server's own if lower. */
function options(ctx: ToolContext, pool: McpPoolLike, server: string): McpCallOptions {
  const config = pool.servers[server];
  const limit = mcpTimeoutMs(ctx);
  return { signal: ctx.signal, timeoutMs: config ? Math.min(limit, serverTimeoutMs(config)) : limit };
}

function failure(server: string, error: unknown): ToolResult {
  if (error instanceof InvalidArgumentsError || error instanceof PolicyDeniedError) throw error;
  const code = CapgateError.isInstance(error) ? error.code : "mcp_error";
  const message = error instanceof Error ? error.message : String(error);
  return { success: false, summary: `MCP server '${server}': ${message}`, data: { code, server } };
}

/**
 * The policy step of the resource and prompt tools: the server must be configured and
 * enabled (nothing is spawned for them from a command line), checked before the handler runs.
 */
export async function configuredServerPolicy(args: { server: string }, ctx: ToolContext): Promise<undefined> {
  configured(ctx, args.server);
  return undefined;
}

export async function listResources(args: { server: string }, ctx: ToolContext): Promise<ToolResult> {
  const pool = configured(ctx, args.server);
  try {
    const listing = await pool.listResources(args.server, options(ctx, pool, args.server));
    const lines = [
      `MCP server '${args.server}': ${listing.resources.length} resources, ${listing.templates.length} templates${listing.complete ? "" : " (list cut: the server has more)"}. Read one with mcp.read_resource {"server":"${args.server}","uri":"<uri>"}.`,
      ...listing.resources
        .slice(0, SHOWN)
        .map(
          (r) =>
            `- ${r.uri} (${r.name}${r.mimeType ? `, ${r.mimeType}` : ""})${r.description ? `: ${r.description.slice(0, 200)}` : ""}`,
        ),
      ...(listing.resources.length > SHOWN ? [`- … ${listing.resources.length - SHOWN} more resources`] : []),
      ...listing.templates
        .slice(0, SHOWN)
        .map(
          (t) =>
            `- template ${t.uriTemplate} (${t.name})${t.description ? `: ${t.description.slice(0, 200)}` : ""}`,
        ),
      ...(listing.templates.length > SHOWN ? [`- … ${listing.templates.length - SHOWN} more templates`] : []),
    ];
    return {
      success: true,
      summary: lines.join("\n"),
      data: {
        server: args.server,
        resources: listing.resources.slice(0, SHOWN),
        templates: listing.templates.slice(0, SHOWN),
        resourceCount: listing.resources.length,
        templateCount: listing.templates.length,
        complete: listing.complete,
      },
    };
  } catch (error) {
    return failure(args.server, error);
  }
}

export async function readResource(
  args: { server: string; uri: string },
  ctx: ToolContext,
): Promise<ToolResult> {
  const pool = configured(ctx, args.server);
  try {
    return (await pool.readResource(args.server, args.uri, options(ctx, pool, args.server))) as ToolResult;
  } catch (error) {
    return failure(args.server, error);
  }
}

export async function listPrompts(args: { server: string }, ctx: ToolContext): Promise<ToolResult> {
  const pool = configured(ctx, args.server);
  try {
    const prompts = await pool.listPrompts(args.server, options(ctx, pool, args.server));
    const lines = [
      `MCP server '${args.server}': ${prompts.length} prompts. Get one with mcp.get_prompt {"server":"${args.server}","name":"<name>","arguments":{…}}.`,
      ...prompts.slice(0, SHOWN).map((p) => {
        const params = p.arguments.map((a) => `${a.name}${a.required ? "" : "?"}`).join(", ");
        return `- ${p.name}(${params})${p.description ? `: ${p.description.slice(0, 200)}` : ""}`;
      }),
      ...(prompts.length > SHOWN ? [`- … ${prompts.length - SHOWN} more prompts`] : []),
    ];
    return {
      success: true,
      summary: lines.join("\n"),
      data: { server: args.server, prompts: prompts.slice(0, SHOWN), promptCount: prompts.length },
    };
  } catch (error) {
    return failure(args.server, error);
  }
}

export async function getPrompt(
  args: { server: string; name: string; arguments?: Record<string, unknown> | undefined },
  ctx: ToolContext,
): Promise<ToolResult> {
  const pool = configured(ctx, args.server);
  try {
    // The schema admits string values only.
    const values = Object.fromEntries(Object.entries(args.arguments ?? {}).map(([k, v]) => [k, String(v)]));
    return (await pool.getPrompt(
      args.server,
      args.name,
      values,
      options(ctx, pool, args.server),
    )) as ToolResult;
  } catch (error) {
    return failure(args.server, error);
  }
}
