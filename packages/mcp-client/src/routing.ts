import { CapgateError, closestMatch } from "@capgate/schema";
import { enabledServerNames, type McpServersMap } from "./config.js";

export interface McpRoute {
  server: string;
  /** The tool's name on that server (may itself contain `/`). */
  tool: string;
  /** True for `<server>/<tool>`; false when a bare name went to the first server. */
  explicit: boolean;
}

/** `<server>/<tool>` — the one spelling of an MCP tool everywhere (search, routing, traces). */
export function qualifyToolName(server: string, tool: string): string {
  return `${server}/${tool}`;
}

/**
 * The one routing rule, shared by the model's fallthrough, `/tools/call` and the CLI:
 * `<server>/<tool>` selects that server (the first `/` splits, as server names cannot
 * contain one); a bare name goes to the first enabled server; no enabled server →
 * `undefined` ("none"). Throws `unknown_tool` naming the configured servers when the
 * prefix names no configured server, and when it names a disabled one.
 */
export function routeMcpTool(name: string, servers: McpServersMap | undefined): McpRoute | undefined {
  const enabled = enabledServerNames(servers ?? {});
  if (enabled.length === 0) return undefined;
  const slash = name.indexOf("/");
  if (slash === -1) return { server: enabled[0] as string, tool: name, explicit: false };
  const server = name.slice(0, slash);
  const tool = name.slice(slash + 1);
  const known = `configured MCP servers: ${enabled.join(", ")}`;
  if (server === "")
    throw new CapgateError(
      "unknown_tool",
      `Tool '${name}' has an empty server part; write <server>/<tool> (${known}).`,
      {
        property: "tool",
      },
    );
  if (servers && Object.hasOwn(servers, server) && servers[server]?.enabled === false)
    throw new CapgateError("unknown_tool", `MCP server '${server}' is disabled in the config (${known}).`, {
      property: "tool",
    });
  if (!enabled.includes(server)) {
    const guess = closestMatch(server, enabled);
    throw new CapgateError(
      "unknown_tool",
      `No MCP server named '${server}' for tool '${name}'${guess ? `; did you mean '${guess}/${tool}'?` : "."} (${known}).`,
      { property: "tool" },
    );
  }
  if (tool === "")
    throw new CapgateError(
      "unknown_tool",
      `Tool name is missing after '${server}/'; write ${server}/<tool>.`,
      {
        property: "tool",
      },
    );
  return { server, tool, explicit: true };
}
