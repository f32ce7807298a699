// A tiny MCP server over stdio (line-delimited JSON-RPC) for fault tests: `echo` answers,
// `crash` kills the process while the call is pending.
import { createInterface } from "node:readline";

const lines = createInterface({ input: process.stdin });
const reply = (id, result) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined) return;
  if (message.method === "initialize") {
    reply(message.id, {
      protocolVersion: message.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "fault", version: "1.0.0" },
    });
  } else if (message.method === "tools/list") {
    reply(message.id, {
      tools: [
        {
          name: "echo",
          description: "Echo text back.",
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
        },
        { name: "crash", description: "Exit while the call is pending.", inputSchema: { type: "object" } },
      ],
    });
  } else if (message.method === "tools/call" && message.params.name === "crash") {
    process.exit(3);
  } else if (message.method === "tools/call") {
    reply(message.id, { content: [{ type: "text", text: `echo: ${message.params.arguments?.text ?? ""}` }] });
  } else {
    process.stdout.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } })}\n`,
    );
  }
});
lines.on("close", () => process.exit(0));
