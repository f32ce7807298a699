import type { ManifestLike } from "@capgate/tools";

const command = {
  type: "string",
  minLength: 1,
  maxLength: 10000,
  description:
    "A configured MCP server name, or a command line that starts a stdio MCP server (e.g. 'npx -y @modelcontextprotocol/server-everything').",
} as const;

const args = {
  type: "array",
  maxItems: 100,
  items: { type: "string", maxLength: 4096 },
  description: "Extra argv for an ad-hoc `command` (default none).",
} as const;

/**
 * The explicit MCP path: the model names a server and a tool. (Configured servers are also
 * reachable implicitly as `mcp:<server>` capabilities; both end in the same session pool.)
 */
export const manifest = {
  name: "mcp",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Talk to Model Context Protocol (MCP) servers directly: list a server's tools and call one. An ad-hoc command line passes the same policy as shell.run.",
  profileFit: ["Orchestrator"],
  tools: [
    {
      name: "mcp.call",
      description:
        "Call one tool of an MCP server and return its result as text. `command` names a configured server or starts one over stdio; `arguments` must match the tool's input schema from mcp.list_tools.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          command,
          tool: {
            type: "string",
            minLength: 1,
            maxLength: 200,
            description: "Tool name as the server lists it.",
          },
          args,
          arguments: {
            type: "object",
            additionalProperties: true,
            description: "The tool's own arguments (default {}); checked by the server against its schema.",
          },
        },
        required: ["command", "tool"],
      },
    },
    {
      name: "mcp.list_tools",
      description:
        "List the tools an MCP server offers, with their descriptions and input schemas. Call it before mcp.call to learn tool names and arguments.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { command, args },
        required: ["command"],
      },
    },
  ],
} as const satisfies ManifestLike;
