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

const server = {
  type: "string",
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z0-9_-]{1,64}$",
  description: "A configured MCP server's name.",
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
    "Talk to Model Context Protocol (MCP) servers directly: list a server's tools and call one; read a configured server's resources and prompts. An ad-hoc command line passes the same policy as shell.run.",
  profileFit: ["Orchestrator"],
  tools: [
    {
      name: "mcp.call",
      description:
        "Call one tool of an MCP server and return its result. `command` names a configured server or starts one over stdio; `arguments` must match the tool's input schema from mcp.list_tools.",
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
    {
      name: "mcp.list_resources",
      description:
        "List a configured MCP server's resources (what it exposes by URI) and URI templates. Read one with mcp.read_resource.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { server },
        required: ["server"],
      },
    },
    {
      name: "mcp.read_resource",
      description:
        "Read one resource of a configured MCP server by URI: one from mcp.list_resources, a URI matching its templates, or a resource_link a tool of that server returned.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          server,
          uri: { type: "string", minLength: 1, maxLength: 2048, description: "The resource's URI." },
        },
        required: ["server", "uri"],
      },
    },
    {
      name: "mcp.list_prompts",
      description:
        "List a configured MCP server's prompts (message templates it offers) with their arguments. Fill one in with mcp.get_prompt.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { server },
        required: ["server"],
      },
    },
    {
      name: "mcp.get_prompt",
      description:
        "Fill in one prompt of a configured MCP server with its arguments and return its messages.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          server,
          name: {
            type: "string",
            minLength: 1,
            maxLength: 200,
            description: "The prompt's name from mcp.list_prompts.",
          },
          arguments: {
            type: "object",
            maxProperties: 100,
            additionalProperties: { type: "string", maxLength: 10000 },
            description: "The prompt's arguments as strings (default {}).",
          },
        },
        required: ["server", "name"],
      },
    },
  ],
} as const satisfies ManifestLike;
