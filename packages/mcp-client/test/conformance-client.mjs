// Client under test for the official MCP conformance suite (scripts/mcp-conformance.sh):
// the suite starts a scenario server and runs `node conformance-client.mjs <server-url>`.
import { McpPool } from "../dist/index.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

function sampleArguments(schema) {
  const args = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    args[key] =
      type === "number" || type === "integer"
        ? 1
        : type === "boolean"
          ? true
          : type === "array"
            ? []
            : type === "object"
              ? {}
              : "test";
  }
  return args;
}

const pool = new McpPool(
  { conformance: { url } },
  {
    clientInfo: { name: "capgate-mcp-client", version: "0.1.0" },
    onEvent: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
  },
);
try {
  const tools = await pool.listTools("conformance");
  console.log(`[${scenario}] tools: ${tools.map((t) => t.name).join(", ") || "(none)"}`);
  const calls =
    Array.isArray(context.tool_calls) && context.tool_calls.length > 0
      ? context.tool_calls.map((c) => ({ name: c.name, arguments: c.arguments ?? {} }))
      : scenario === "tools_call"
        ? tools.map((t) => ({ name: t.name, arguments: sampleArguments(t.inputSchema) }))
        : [];
  for (const call of calls) {
    const result = await pool.callTool("conformance", call.name, call.arguments);
    console.log(`[${scenario}] ${call.name} -> ${result.success ? "ok" : "error"}: ${result.summary}`);
  }
} finally {
  await pool.close();
}
