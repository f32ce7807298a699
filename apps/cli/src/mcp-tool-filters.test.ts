import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOSTILE_SERVER, hostileCalls, resultText } from "@capgate/test-system-parts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, cli, sandbox } from "./test-support/cli.js";

/** A workspace whose config names the hostile fixture (echo, calls, three weather tools) with a filter. */
function filteredBox() {
  const box = sandbox();
  const log = join(box.root, "calls.log");
  const hostile = {
    command: process.execPath,
    args: [HOSTILE_SERVER, "3"],
    env: { HOSTILE_CALL_LOG: log },
    tools: { allow: ["echo", "weather_*"], deny: ["weather_00001"] },
  };
  writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ mcpServers: { hostile } }));
  return { box, log };
}

describe("mcpServers.<name>.tools in the CLI", () => {
  it("`capgate mcp tools` lists only reachable tools; `capgate call` refuses the rest (exit 2), sending nothing", async () => {
    const { box, log } = filteredBox();
    const listed = await cli(["mcp", "tools", "hostile", "--json"], box);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((t) => t.name)).toEqual([
      "echo",
      "weather_00000",
      "weather_00002",
    ]);
    for (const [tool, why] of [
      ["hostile/weather_00001", 'tools.deny matches it ("weather_00001")'],
      ["hostile/calls", "no tools.allow pattern matches it"],
    ] as const) {
      const r = await cli(["call", tool, "{}"], box);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("MCP server 'hostile'");
      expect(r.stderr).toContain(why);
    }
    const ok = await cli(["call", "hostile/echo", '{"text":"fine"}'], box);
    expect(ok.code, ok.stderr).toBe(0);
    expect(hostileCalls(log)).toEqual(["echo"]);
  }, 300_000);

  it("`capgate mcp serve`: search and load leave filtered tools out, tools/call refuses them", async () => {
    const { box, log } = filteredBox();
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
      const refused = await client.callTool({
        name: "capability_call",
        arguments: { tool: "hostile/weather_00001", arguments: { region: "FR-75" } },
      });
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toContain("policy_denied");
      expect(resultText(refused)).toContain('mcpServers.hostile.tools.deny matches it ("weather_00001")');
      const search = resultText(
        await client.callTool({ name: "capability_search", arguments: { query: "weather forecast" } }),
      );
      expect(search).toContain("hostile/weather_00000");
      expect(search).not.toContain("weather_00001");
      const load = resultText(
        await client.callTool({ name: "capability_load", arguments: { name: "mcp:hostile" } }),
      );
      expect(load).toContain("hostile/echo");
      expect(load).not.toContain("weather_00001");
      expect(load).not.toContain("hostile/calls");
      const ok = await client.callTool({
        name: "capability_call",
        arguments: { tool: "hostile/weather_00002", arguments: { region: "FR-75" } },
      });
      expect(ok.isError, resultText(ok)).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(hostileCalls(log)).toEqual(["weather_00002"]);
  }, 300_000);
});
