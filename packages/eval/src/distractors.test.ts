import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { distractorTools, startDistractorServer } from "./distractors.js";

describe("distractors", () => {
  it("bundles the 199 MetaTool tools in one fixed order with valid, unique names", () => {
    const tools = distractorTools();
    expect(tools).toHaveLength(199);
    expect(distractorTools().map((t) => t.name)).toEqual(tools.map((t) => t.name));
    expect(new Set(tools.map((t) => t.name)).size).toBe(199);
    for (const t of tools) {
      expect(t.name).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
      expect(t.description.length).toBeGreaterThan(10);
    }
  });

  it("serves K real MCP servers of one tool each, and refuses calls as a distractor", async () => {
    const server = await startDistractorServer(3);
    try {
      expect(Object.keys(server.servers)).toEqual(
        distractorTools()
          .slice(0, 3)
          .map((t) => t.name),
      );
      const [name, entry] = Object.entries(server.servers)[1]!;
      const client = new Client({ name: "test", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(entry.url)));
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual([name]);
      expect(listed.tools[0]?.inputSchema.required).toEqual(["request"]);
      const called = await client.callTool({ name, arguments: { request: "anything" } });
      expect(called.isError).toBe(true);
      expect(JSON.stringify(called.content)).toContain("distractor");
      await client.close();
    } finally {
      await server.close();
    }
    await expect(startDistractorServer(200)).rejects.toThrow(/from 0 to 199/);
  });
});
