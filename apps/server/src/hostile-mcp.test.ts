import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "./test-support/server-process.js";

// The MCP client's hostile server, built on the SDK: 10,000 tools, names with an escape
// sequence and a right-to-left override, a 375 KB schema, $ref loops, an unknown type.
const HOSTILE = fileURLToPath(
  new URL("../../../packages/mcp-client/test/fixtures/hostile-sdk-server.mjs", import.meta.url),
);
/** What the gate's search and load replies may hold at most (@capgate/loop REPLY_CHARS). */
const REPLY_CHARS = 6_000;

const REFUSED: Array<[string, string]> = [
  ["hostile/ref_loop", "does not admit it: inputSchema has a $ref loop that never reaches a nested value"],
  [
    "hostile/ref_loop_beside",
    "does not admit it: inputSchema has a $ref loop that never reaches a nested value",
  ],
  ["hostile/bad_type", "does not admit it: inputSchema does not compile"],
  ["hostile/huge_schema", "does not admit it: inputSchema is larger than 65536 characters"],
  ["hostile/esc\u001b[31mred", "is not a tool name capgate admits for MCP server 'hostile'"],
  ["hostile/\u202Eevil_rtl", "is not a tool name capgate admits for MCP server 'hostile'"],
];

let server: ServerProcess;
let log: string;

beforeAll(async () => {
  server = await startServerProcess({
    config: ({ scratch }) => {
      log = join(scratch, "calls.log");
      return {
        mcpServers: {
          hostile: {
            command: process.execPath,
            args: [HOSTILE],
            env: { HOSTILE_CALL_LOG: log },
            timeoutMs: 240_000,
          },
        },
      };
    },
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

const calledNames = (): string[] => {
  try {
    return readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string);
  } catch {
    return [];
  }
};

const text = (r: unknown) =>
  ((r as { content: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("\n");

describe("a hostile upstream MCP server behind the server app", () => {
  it("POST /tools/call refuses every tool the listing leaves out: 404 unknown_tool naming it and why; nothing is sent", async () => {
    const ok = await server.api("/tools/call", {
      body: { tool: "hostile/echo", arguments: { text: "fine" } },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { summary: string }).summary).toBe("echo: fine");
    for (const [tool, why] of REFUSED) {
      const response = await server.api("/tools/call", { body: { tool, arguments: {} } });
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("unknown_tool");
      expect(body.error.message).toContain(why);
      expect(body.error.message).toContain("Nothing was sent to the server.");
    }
    expect(calledNames()).toEqual(["echo"]);
  }, 300_000);

  it("/mcp: search and load replies stay within the budget, and capability_call refuses the same tools", async () => {
    const client = new Client({ name: "hostile-test", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    try {
      // A call lists the server's tools (however long that takes), and search indexes them.
      await client.callTool({ name: "capability_call", arguments: { tool: "hostile/calls" } }, undefined, {
        timeout: 240_000,
      });
      const search = text(
        await client.callTool({ name: "capability_search", arguments: { query: "weather forecast" } }),
      );
      expect(search.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(search).toMatch(
        /^ {2}… \d+ more of its 10002 tools \(all callable once loaded\): capability_search/m,
      );
      const load = text(
        await client.callTool({ name: "capability_load", arguments: { name: "mcp:hostile" } }),
      );
      expect(load.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(load).toMatch(/\n {2}… \d+ more of its 10002 tools, all loaded and callable: capability_search/);
      expect(`${search}\n${load}`).not.toMatch(/ref_loop|huge_schema|bad_type|evil_rtl|esc/);
      for (const [tool, why] of REFUSED) {
        const refused = await client.callTool({
          name: "capability_call",
          arguments: { tool, arguments: {} },
        });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toContain(why);
      }
    } finally {
      await client.close();
    }
    expect(calledNames()).toEqual(["echo"]);
  }, 300_000);
});
