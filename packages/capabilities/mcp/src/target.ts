import type {
  McpCallOptions,
  McpServersMap,
  McpToolInfo,
  ToolResult as McpToolResult,
} from "@capgate/mcp-client";
import { assertShellAllowed, shellPolicyCheck } from "@capgate/sandbox";
import { checkShellCommand, shellQuote, splitCommandLine } from "@capgate/shell-policy";
import {
  InvalidArgumentsError,
  PolicyDeniedError,
  type PolicyVerdict,
  type ToolContext,
} from "@capgate/tools";

/**
 * What mcp.* needs from the host's session pool. `McpPool` from @capgate/mcp-client has
 * this shape; it is checked structurally so any copy of that package (or a host's own
 * pool) works.
 */
export interface McpPoolLike {
  readonly servers: McpServersMap;
  listTools(server: string, options?: McpCallOptions): Promise<McpToolInfo[]>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options?: McpCallOptions,
  ): Promise<McpToolResult>;
  /** Why the pool refuses a tool by this name although the server may have it (`McpPool.refusalOf`). */
  refusalOf?(server: string, tool: string, options?: McpCallOptions): Promise<string | undefined>;
  /** The server entry's `approval` override for a tool (`McpPool.approvalOverride`). */
  approvalOverride?(
    server: string,
    tool: string,
    options?: McpCallOptions,
  ): Promise<"ask" | "never" | undefined>;
}

/** The server a call goes to: a configured one in the host's pool, or an ad-hoc command line. */
export type McpTarget =
  | { kind: "configured"; pool: McpPoolLike; server: string }
  | {
      kind: "ad-hoc";
      /** The program and its arguments, spawned without a shell. */
      argv: string[];
      /** The command line as the model wrote it, for messages. */
      line: string;
      /** Configured server names, for "did you mean" when the program is not found. */
      configured: string[];
    };

interface TargetArgs {
  command: string;
  args?: readonly string[];
}

/** The host's pool, when `ctx.services.mcp` looks like one. */
export function poolOf(ctx: Pick<ToolContext, "services">): McpPoolLike | undefined {
  const candidate = ctx.services.mcp as Partial<McpPoolLike> | null | undefined;
  if (
    candidate &&
    typeof candidate === "object" &&
    candidate.servers &&
    typeof candidate.servers === "object" &&
    typeof candidate.listTools === "function" &&
    typeof candidate.callTool === "function"
  ) {
    return candidate as McpPoolLike;
  }
  return undefined;
}

/** `command` names a configured server (enabled or not). */
function configuredServer(pool: McpPoolLike | undefined, command: string): string | undefined {
  return pool && Object.hasOwn(pool.servers, command) ? command : undefined;
}

/** Checks for a configured server: `args` belongs to ad-hoc command lines only; disabled servers stay off. */
function checkConfigured(pool: McpPoolLike, server: string, args: TargetArgs): void {
  if (args.args !== undefined) {
    throw new InvalidArgumentsError(
      `\`args\` applies to ad-hoc command lines only; '${server}' is a configured MCP server whose command comes from the configuration. Call it without \`args\`.`,
      { property: "args" },
    );
  }
  if (pool.servers[server]?.enabled === false) {
    throw new PolicyDeniedError(
      `MCP server '${server}' is disabled in the configuration ("enabled": false); it was not started.`,
      { property: "command" },
    );
  }
}

/**
 * argv of an ad-hoc command line: its words (split like bash, no shell) followed by `args`.
 * A line that cannot be split is refused; when the shell policy also objects to it (a GUI
 * opener after `&&`, say), its denial is the one reported, with its advice.
 */
async function adHocArgv(args: TargetArgs, ctx: ToolContext): Promise<string[]> {
  const split = await splitCommandLine(args.command);
  if (!split.ok) {
    await shellPolicyCheck(args.command, ctx, { check: checkShellCommand, property: "command" });
    throw new PolicyDeniedError(
      `The ad-hoc MCP command \`${clip(args.command)}\` cannot be run: ${split.reason}. It is spawned without a shell, so it must be a plain command and its arguments.`,
      { property: "command" },
    );
  }
  return [...split.argv, ...(args.args ?? [])];
}

/**
 * The policy step of mcp.call and mcp.list_tools. A configured server passes (the operator
 * configured it). An ad-hoc command line must split into plain words (no operators,
 * expansions or redirections: nothing a shell would add), and the exact argv that would be
 * spawned — line words plus `args`, quoted — passes the shell policy as shell.run's command
 * would, so `args` cannot smuggle in what a line may not contain. A denial throws before
 * anything is spawned; an ask rule asks the operator.
 */
export async function mcpTargetPolicy(
  args: TargetArgs,
  ctx: ToolContext,
): Promise<PolicyVerdict | undefined> {
  const pool = poolOf(ctx);
  const server = configuredServer(pool, args.command);
  if (pool && server !== undefined) {
    checkConfigured(pool, server, args);
    return undefined;
  }
  const argv = await adHocArgv(args, ctx);
  return shellPolicyCheck(shellQuote(argv), ctx, { check: checkShellCommand, property: "command" });
}

/**
 * Where a call goes. For ad-hoc command lines the shell policy's deny rules are checked
 * again here, so a handler called without the executor cannot spawn what the policy
 * refuses (ask rules were already answered by the executor's approval step).
 */
export async function resolveTarget(args: TargetArgs, ctx: ToolContext): Promise<McpTarget> {
  const pool = poolOf(ctx);
  const server = configuredServer(pool, args.command);
  if (pool && server !== undefined) {
    checkConfigured(pool, server, args);
    return { kind: "configured", pool, server };
  }
  const argv = await adHocArgv(args, ctx);
  const line = shellQuote(argv);
  await assertShellAllowed({
    command: line,
    check: checkShellCommand,
    policy: ctx.policy.shell,
    onAsk: "allow",
  });
  return { kind: "ad-hoc", argv, line, configured: pool ? Object.keys(pool.servers) : [] };
}

/** How messages name the target: "MCP server 'github'" or "ad-hoc MCP server `node srv.js`". */
export function targetName(target: McpTarget): string {
  return target.kind === "configured"
    ? `MCP server '${target.server}'`
    : `ad-hoc MCP server \`${clip(target.line)}\``;
}

/** Long command lines keep their start (the program) and end (the script and its flags). */
function clip(text: string, n = 120): string {
  if (text.length <= n) return text;
  const head = Math.floor(n * 0.4);
  return `${text.slice(0, head)}…${text.slice(text.length - (n - head - 1))}`;
}
