// SPEC §14.5 — MCP: a warm pooled call vs spawn-per-call (connect, initialize, call, close)
// against the same stdio server, and vs a bare SDK Client.callTool on a kept session.
import { connectAdHoc, createNodeMcpPool } from "@capgate/mcp-client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Figure } from "../figure.js";
import { median } from "../lib/random.js";

export const name = "mcp";

// A tiny MCP server (line-delimited JSON-RPC over stdio) so the figures measure the client,
// not a server framework. It exits when stdin closes, as MCP stdio servers should.
const SERVER = `
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  let result = {};
  if (m.method === "initialize")
    result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "bench", version: "1" } };
  else if (m.method === "tools/list") result = { tools: [{ name: "echo", inputSchema: { type: "object" } }] };
  else if (m.method === "tools/call") result = { content: [{ type: "text", text: String(m.params.arguments?.text ?? "") }] };
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
});
rl.on("close", () => process.exit(0));
`;
const command = process.execPath;
const args = ["-e", SERVER];

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const round = (ms: number) => Math.round(ms * 10_000) / 10_000;

export async function run(): Promise<Figure[]> {
  const pool = createNodeMcpPool({ bench: { command, args } });
  const client = new Client({ name: "bench-sdk", version: "0" });
  await client.connect(new StdioClientTransport({ command, args }));
  const pooled: number[] = [];
  const sdk: number[] = [];
  const spawn: number[] = [];
  try {
    // Warm both kept sessions (JIT, first-call costs), then alternate call by call so
    // machine noise hits both alike.
    for (let i = 0; i < 500; i++) {
      await pool.callTool("bench", "echo", { text: "warm" });
      await client.callTool({ name: "echo", arguments: { text: "warm" } });
    }
    for (let i = 0; i < 3000; i++) {
      pooled.push(await time(() => pool.callTool("bench", "echo", { text: "x" })));
      sdk.push(await time(() => client.callTool({ name: "echo", arguments: { text: "x" } })));
    }
    await connectAdHoc({ command, args }).then((s) => s.close());
    for (let i = 0; i < 25; i++)
      spawn.push(
        await time(async () => {
          const session = await connectAdHoc({ command, args, name: "bench" });
          try {
            await session.callTool("echo", { text: "x" });
          } finally {
            await session.close();
          }
        }),
      );
  } finally {
    await pool.close();
    await client.close();
  }
  const pooledMs = median(pooled);
  const sdkMs = median(sdk);
  const spawnMs = median(spawn);
  const speedup = spawnMs / pooledMs;
  const overhead = pooledMs / sdkMs;
  return [
    {
      key: "mcp.pooled_ms",
      value: round(pooledMs),
      target: `≥20× faster than spawn (${speedup.toFixed(0)}×), ≤1.2× sdk (${overhead.toFixed(2)}×)`,
    },
    {
      key: "mcp.spawn_ms",
      value: round(spawnMs),
      target: "connect + initialize + call + close, median of 25",
    },
    {
      key: "mcp.sdk_ms",
      value: round(sdkMs),
      target: "bare SDK Client.callTool on a kept session, median of 3000",
    },
  ];
}
