import type { Harness } from "@capgate/harness";
import { CapgateError } from "@capgate/schema";
import type { ToolResult } from "@capgate/tools";

/** One MCP server to list and call directly (an operator's check, outside any run). */
export interface McpTarget {
  listTools(): Promise<Array<{ name: string; description?: string; inputSchema?: unknown }>>;
  callTool(tool: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

/**
 * The entry of the configured MCP server `name`.
 * @throws CapgateError `unknown_mcp_server`, naming the configured servers.
 */
export function configuredMcpServer<T>(servers: Readonly<Record<string, T>>, name: string): T {
  const entry = Object.hasOwn(servers, name) ? servers[name] : undefined;
  if (entry === undefined) throw unknownServer(name, Object.keys(servers));
  return entry;
}

function unknownServer(name: string, configured: readonly string[]): CapgateError {
  return new CapgateError(
    "unknown_mcp_server",
    `no MCP server named '${name}' in the config (configured: ${configured.length ? configured.join(", ") : "none"})`,
    { property: "server" },
  );
}

/**
 * A server from the config's mcpServers, reached through `harness` as a run reaches it
 * (sandboxed where its entry says so, its stored login, its tool filters), listed live.
 * The target owns the harness: `close()` closes it, and so does an unknown name.
 */
export async function configuredMcpTarget(harness: Harness, server: string): Promise<McpTarget> {
  const pool = harness.mcp;
  const names = pool?.serverNames() ?? [];
  if (!names.includes(server)) {
    await harness.close();
    throw unknownServer(server, names);
  }
  return {
    listTools: () => (pool as NonNullable<typeof pool>).listTools(server, { refresh: true }),
    callTool: (tool, args) => (pool as NonNullable<typeof pool>).callTool(server, tool, args),
    close: () => harness.close(),
  };
}

/**
 * A server named on the spot: `url` (Streamable HTTP, SSE fallback) or `command`, a command
 * line split into argv by the shell grammar and started without a shell (no expansion, no
 * operators: a line that needs a shell is refused, naming why).
 * @throws CapgateError `usage` for a command line that cannot run without a shell.
 */
export async function adHocMcpTarget(
  target: { url: string } | { command: string },
  timeoutMs: number,
): Promise<McpTarget> {
  const { connectAdHoc, createNodeMcpPool } = await import("@capgate/mcp-client/stdio");
  if ("url" in target) {
    const pool = createNodeMcpPool({ remote: { url: target.url, timeoutMs } });
    return {
      listTools: () => pool.listTools("remote"),
      callTool: (tool, args) => pool.callTool("remote", tool, args),
      close: () => pool.close(),
    };
  }
  const { splitCommandLine } = await import("@capgate/shell-policy");
  const split = await splitCommandLine(target.command);
  if (!split.ok)
    throw new CapgateError("usage", `the command line cannot be run without a shell: ${split.reason}`, {
      property: "command",
    });
  const [command, ...args] = split.argv;
  const session = await connectAdHoc({ command: command as string, args, timeoutMs });
  return {
    listTools: () => session.listTools(),
    callTool: (tool, a) => session.callTool(tool, a),
    close: () => session.close(),
  };
}
