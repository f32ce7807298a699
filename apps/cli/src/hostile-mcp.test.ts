import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  HOSTILE_REFUSED,
  HOSTILE_SERVER,
  hostileCalls,
  REPLY_CHARS,
  resultText,
} from "@capgate/test-system-parts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, cli, type Sandbox, sandbox } from "./test-support/cli.js";

/** A workspace whose config names the hostile server (`count` ordinary tools besides the hostile ones). */
function hostileBox(count = 10_000): { box: Sandbox; log: string } {
  const box = sandbox();
  const log = join(box.root, "calls.log");
  const hostile = {
    command: process.execPath,
    args: [HOSTILE_SERVER, String(count)],
    env: { HOSTILE_CALL_LOG: log },
  };
  writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ mcpServers: { hostile } }));
  return { box, log };
}

describe("a hostile upstream MCP server", () => {
  it("`capgate call` refuses every tool the listing leaves out, naming it and why (exit 2); nothing reaches the server", async () => {
    // A hundred ordinary tools are enough here: each `capgate call` starts the server afresh.
    const { box, log } = hostileBox(100);
    // One of each kind (a name, a schema's size, a $ref loop): every call is a fresh process.
    for (const [tool, why] of [HOSTILE_REFUSED[4], HOSTILE_REFUSED[3], HOSTILE_REFUSED[0]] as Array<
      [string, string]
    >) {
      const r = await cli(["call", tool, "{}"], box);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(why);
      expect(r.stderr).toContain("Nothing was sent to the server.");
      expect(/[\p{Cc}\p{Cf}]/u.test(r.stderr.replaceAll("\n", ""))).toBe(false);
    }
    const ok = await cli(["call", "hostile/echo", '{"text":"fine"}'], box);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("echo: fine");
    expect(hostileCalls(log)).toEqual(["echo"]);
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
      expect(resultText(echo)).toContain("echo: hi");

      const search = resultText(
        await client.callTool({ name: "capability_search", arguments: { query: "weather forecast" } }),
      );
      expect(search.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(search).toMatch(/^mcp:hostile — /m);
      expect(search).toMatch(
        /^ {2}… \d+ more of its 10002 tools \(all callable once loaded\): capability_search/m,
      );

      const load = resultText(
        await client.callTool({ name: "capability_load", arguments: { name: "mcp:hostile" } }),
      );
      expect(load.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(load).toMatch(
        /^Loaded mcp:hostile\. Call its tools with capability_call:\n {2}hostile\/weather_/,
      );
      expect(load).toMatch(/\n {2}… \d+ more of its 10002 tools, all loaded and callable: capability_search/);
      // Refused tools are neither found nor loaded.
      expect(`${search}\n${load}`).not.toMatch(/ref_loop|huge_schema|bad_type|evil_rtl|esc/);

      for (const [tool, why] of HOSTILE_REFUSED) {
        const refused = await client.callTool({
          name: "capability_call",
          arguments: { tool, arguments: {} },
        });
        expect(refused.isError).toBe(true);
        expect(resultText(refused)).toContain(why);
      }
      const narrow = resultText(
        await client.callTool({
          name: "capability_search",
          arguments: { query: "mcp:hostile weather_04321" },
        }),
      );
      expect(narrow).toContain("hostile/weather_04321(region: string, days?: integer, units?: enum)");
    } finally {
      await client.close();
    }
    expect(hostileCalls(log)).toEqual(["echo"]);
  }, 300_000);
});
