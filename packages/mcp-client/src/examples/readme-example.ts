// The README example (there imported as @capgate/mcp-client and @capgate/mcp-client/stdio), kept as a file so the typecheck covers it.
import { CapgateError } from "@capgate/schema";
import { executeCapabilityStep, parseMcpServersConfig, toCapabilityManifest } from "../index.js";
import { createNodeMcpPool } from "../stdio.js";

export async function example(): Promise<void> {
  // The same shape as Claude Desktop's / Cursor's "mcpServers".
  const servers = parseMcpServersConfig({
    everything: {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
      timeoutMs: 20_000,
    },
  });
  const pool = createNodeMcpPool(servers, { stateDir: ".capgate" });
  try {
    // Lists every page once; the search index sees them as capability "mcp:everything".
    const tools = await pool.listTools("everything");
    console.log(toCapabilityManifest("everything", tools).tools.map((t) => t.name)); // everything/echo, …

    const result = await pool.callTool("everything", "echo", { message: "hello" });
    console.log(result.success, result.summary);

    // Native first; an unknown native tool falls through to MCP by the routing rule.
    const step = await executeCapabilityStep(
      { tool: "everything/echo", arguments: { message: "via fallthrough" } },
      {
        native: async () => {
          throw new CapgateError("unknown_tool", "Unknown tool 'everything/echo'.");
        },
        mcp: pool,
      },
    );
    console.log(step.via, step.server, step.result.summary); // mcp everything Echo: via fallthrough
  } finally {
    await pool.close(); // ends every server and its whole process group
  }
}
