import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** One distractor: a real public tool's name and description (MetaTool's plugin list). */
export interface DistractorTool {
  /** The server name and the tool name (`^[a-z][a-z0-9_]*$`), from the plugin's name. */
  name: string;
  /** The plugin's name as published. */
  source: string;
  description: string;
}

export interface DistractorServer {
  tools: DistractorTool[];
  /** `mcpServers` entries: one Streamable HTTP server per tool. */
  servers: Record<string, { url: string }>;
  close(): Promise<void>;
}

const DATA = resolve(dirname(fileURLToPath(import.meta.url)), "..", "distractors", "metatool-tools.json");

/**
 * The bundled distractor tools (199, MetaTool), in a fixed shuffled order: `--distractors K`
 * takes the first K, so K = 10 is a subset of K = 20 and every run sees the same tools.
 */
export function distractorTools(): DistractorTool[] {
  const raw = JSON.parse(readFileSync(DATA, "utf8")) as Record<string, unknown>;
  const entries = Object.entries(raw)
    .filter((e): e is [string, string] => typeof e[1] === "string")
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const random = mulberry32(24);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const used = new Set<string>();
  return entries.map(([source, description]) => {
    // Names as their authors wrote them (no marker a model could learn to skip).
    const snaked = snake(source);
    const base = (/^[a-z]/.test(snaked) ? snaked : `t_${snaked}`).slice(0, 60);
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return { name, source, description };
  });
}

/**
 * Serve `count` distractor tools as that many MCP servers of one tool each, over Streamable
 * HTTP on 127.0.0.1 (one process, one port, a path per server), for the whole evaluation.
 * Listing works as for any server; a call is answered with an error saying it is a distractor.
 */
export async function startDistractorServer(count: number): Promise<DistractorServer> {
  const all = distractorTools();
  if (!Number.isInteger(count) || count < 0 || count > all.length) {
    throw new RangeError(`distractors must be an integer from 0 to ${all.length}; got ${count}`);
  }
  const tools = all.slice(0, count);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const http = createServer((req, res) => {
    void handle(req, res, byName).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((done, fail) => {
    http.once("error", fail);
    http.listen(0, "127.0.0.1", done);
  });
  const { port } = http.address() as AddressInfo;
  const servers: Record<string, { url: string }> = {};
  for (const t of tools) servers[t.name] = { url: `http://127.0.0.1:${port}/${t.name}/mcp` };
  return {
    tools,
    servers,
    close: () =>
      new Promise<void>((done) => {
        http.closeAllConnections();
        http.close(() => done());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, tools: Map<string, DistractorTool>) {
  const match = /^\/([a-z0-9_]+)\/mcp$/.exec(new URL(req.url ?? "/", "http://x").pathname);
  const tool = match ? tools.get(match[1]!) : undefined;
  if (!tool) {
    res.writeHead(404).end("not found");
    return;
  }
  // Stateless: each request gets its own server and transport, so nothing is kept between calls.
  const server = new Server({ name: tool.name, version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: tool.name,
        description: tool.description,
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { request: { type: "string", description: "What you want done, in a sentence." } },
          required: ["request"],
        },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    isError: true,
    content: [
      {
        type: "text",
        text: `distractor: ${tool.name} is one of the evaluation's distractor tools and does nothing here. Use the tools the task needs.`,
      },
    ],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** A small seeded generator: the distractor order must not depend on the Node version. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
