import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, cli, sandbox } from "./test-support/cli.js";

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const everythingCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(everything)} stdio`;

describe("capgate mcp", () => {
  it("lists and calls one server's tools from a command line (no shell)", async () => {
    const box = sandbox();
    const tools = await cli(["mcp", "tools", "--command", everythingCommand, "--json"], box);
    expect(tools.code).toBe(0);
    const names = (JSON.parse(tools.stdout) as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain("echo");
    const call = await cli(
      ["mcp", "call", "echo", '{"message":"hi there"}', "--command", everythingCommand],
      box,
    );
    expect(call.code).toBe(0);
    expect(call.stdout).toContain("hi there");
    const piped = await cli(["mcp", "tools", "--command", `${everythingCommand} | cat`], box);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("without a shell");
    expect((await cli(["mcp", "tools"], box)).code).toBe(2);
  });

  it("routes `capgate call <server>/<tool>` and bare names through the configured servers", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ mcpServers: { every: { command: process.execPath, args: [everything, "stdio"] } } }),
    );
    const routed = await cli(["call", "every/echo", '{"message":"routed"}', "--json"], box);
    expect(routed.code).toBe(0);
    expect(JSON.parse(routed.stdout)).toMatchObject({ success: true, via: "mcp", server: "every" });
    const bare = await cli(["call", "echo", '{"message":"bare"}'], box);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("bare");
    // A misspelled native tool is told about the native tool, not about MCP.
    const typo = await cli(["call", "fs.raed", "{}"], box);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("fs.read");
  });

  it("serves the gate over stdio: four tools, search → load → call", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "note.txt"), "served through the gate");
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
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "capability_call",
        "capability_load",
        "capability_search",
        "memory_search",
      ]);
      const text = (r: unknown) =>
        ((r as { content: Array<{ text: string }> }).content[0]?.text ?? "") as string;
      expect(
        text(await client.callTool({ name: "capability_search", arguments: { query: "read files" } })),
      ).toContain("fs");
      await client.callTool({ name: "capability_load", arguments: { name: "fs" } });
      const read = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "note.txt" } },
      });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toContain("served through the gate");
      const denied = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "../../etc/passwd" } },
      });
      expect(denied.isError).toBe(true);
      expect(text(denied)).toContain("policy_denied");
    } finally {
      await client.close();
    }
  });
});
