// One server's tools/list (every page), its serverInfo and instructions, as JSON on stdout:
// node bench/scripts/mcp-evals/list-tools.mjs <command> [args…]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "ignore" });
const client = new Client({ name: "corpus", version: "0.0.0" });
await client.connect(transport);
const tools = [];
let cursor;
do {
  const r = await client.listTools(cursor ? { cursor } : undefined);
  tools.push(...r.tools);
  cursor = r.nextCursor;
} while (cursor);
console.log(
  JSON.stringify(
    { serverInfo: client.getServerVersion(), instructions: client.getInstructions(), tools },
    null,
    1,
  ),
);
await client.close();
