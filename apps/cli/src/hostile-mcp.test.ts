import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, cli, type Sandbox, sandbox } from "./test-support/cli.js";

// The MCP client's hostile server, built on the SDK: 10,000 tools, names with an escape
// sequence and a right-to-left override, a 375 KB schema, $ref loops, an unknown type.
const HOSTILE = fileURLToPath(
  new URL("../../../packages/mcp-client/test/fixtures/hostile-sdk-server.mjs", import.meta.url),
);
/** What capgate's replies to the gate's search and load may hold at most (@capgate/loop REPLY_CHARS). */
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

/** A workspace whose config names the hostile server (`count` ordinary tools besides the hostile ones). */
function hostileBox(count = 10_000): { box: Sandbox; log: string } {
  const box = sandbox();
  const log = join(box.root, "calls.log");
  const hostile = {
    command: process.execPath,
    args: [HOSTILE, String(count)],
    env: { HOSTILE_CALL_LOG: log },
  };
  writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ mcpServers: { hostile } }));
  return { box, log };
}

const calledNames = (log: string): string[] => {
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

describe("a hostile upstream MCP server", () => {
  it("`capgate call` refuses every tool the listing leaves out, naming it and why (exit 2); nothing reaches the server", async () => {
    // A hundred ordinary tools are enough here: each `capgate call` starts the server afresh.
    const { box, log } = hostileBox(100);
    // One of each kind (a name, a schema's size, a $ref loop): every call is a fresh process.
    for (const [tool, why] of [REFUSED[4], REFUSED[3], REFUSED[0]] as Array<[string, string]>) {
      const r = await cli(["call", tool, "{}"], box);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(why);
      expect(r.stderr).toContain("Nothing was sent to the server.");
      expect(/[\p{Cc}\p{Cf}]/u.test(r.stderr.replaceAll("\n", ""))).toBe(false);
    }
    const ok = await cli(["call", "hostile/echo", '{"text":"fine"}'], box);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("echo: fine");
    expect(calledNames(log)).toEqual(["echo"]);
  }, 300_000);

  it("`capgate mcp serve`: search and load replies stay within the budget, and the gate refuses the same tools", async () => {
    const { box, log } = hostileBox();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    try {
      // A call lists the server's tools (all of them, however long that takes) and search indexes them.
      const echo = await client.callTool(
        { name: "capability_call", arguments: { tool: "hostile/echo", arguments: { text: "hi" } } },
        undefined,
        { timeout: 240_000 },
      );
      expect(text(echo)).toContain("echo: hi");

      const search = text(
        await client.callTool({ name: "capability_search", arguments: { query: "weather forecast" } }),
      );
      expect(search.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(search).toMatch(/^mcp:hostile — /m);
      expect(search).toMatch(
        /^ {2}… \d+ more of its 10002 tools \(all callable once loaded\): capability_search/m,
      );

      const load = text(
        await client.callTool({ name: "capability_load", arguments: { name: "mcp:hostile" } }),
      );
      expect(load.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(load).toMatch(
        /^Loaded mcp:hostile\. Call its tools with capability_call:\n {2}hostile\/weather_/,
      );
      expect(load).toMatch(/\n {2}… \d+ more of its 10002 tools, all loaded and callable: capability_search/);
      // Refused tools are neither found nor loaded.
      expect(`${search}\n${load}`).not.toMatch(/ref_loop|huge_schema|bad_type|evil_rtl|esc/);

      for (const [tool, why] of REFUSED) {
        const refused = await client.callTool({
          name: "capability_call",
          arguments: { tool, arguments: {} },
        });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toContain(why);
      }
      const narrow = text(
        await client.callTool({
          name: "capability_search",
          arguments: { query: "mcp:hostile weather_04321" },
        }),
      );
      expect(narrow).toContain("hostile/weather_04321(region: string, days?: integer, units?: enum)");
    } finally {
      await client.close();
    }
    expect(calledNames(log)).toEqual(["echo"]);
  }, 300_000);
});
