import { join } from "node:path";
import {
  HOSTILE_REFUSED,
  HOSTILE_SERVER,
  hostileCalls,
  REPLY_CHARS,
  resultText,
} from "@capgate/test-system-parts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "./test-support/server-process.js";

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
            args: [HOSTILE_SERVER],
            env: { HOSTILE_CALL_LOG: log },
            timeoutMs: 240_000,
          },
        },
      };
    },
  });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

describe("a hostile upstream MCP server behind the server app", () => {
  it("POST /tools/call refuses every tool the listing leaves out: 404 unknown_tool naming it and why; nothing is sent", async () => {
    const ok = await server.api("/tools/call", {
      body: { tool: "hostile/echo", arguments: { text: "fine" } },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { summary: string }).summary).toBe("echo: fine");
    for (const [tool, why] of HOSTILE_REFUSED) {
      const response = await server.api("/tools/call", { body: { tool, arguments: {} } });
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("unknown_tool");
      expect(body.error.message).toContain(why);
      expect(body.error.message).toContain("Nothing was sent to the server.");
    }
    expect(hostileCalls(log)).toEqual(["echo"]);
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
      const search = resultText(
        await client.callTool({ name: "capability_search", arguments: { query: "weather forecast" } }),
      );
      expect(search.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(search).toMatch(
        /^ {2}… \d+ more of its 10002 tools \(all callable once loaded\): capability_search/m,
      );
      const load = resultText(
        await client.callTool({ name: "capability_load", arguments: { name: "mcp:hostile" } }),
      );
      expect(load.length).toBeLessThanOrEqual(REPLY_CHARS);
      expect(load).toMatch(/\n {2}… \d+ more of its 10002 tools, all loaded and callable: capability_search/);
      expect(`${search}\n${load}`).not.toMatch(/ref_loop|huge_schema|bad_type|evil_rtl|esc/);
      for (const [tool, why] of HOSTILE_REFUSED) {
        const refused = await client.callTool({
          name: "capability_call",
          arguments: { tool, arguments: {} },
        });
        expect(refused.isError).toBe(true);
        expect(resultText(refused)).toContain(why);
      }
    } finally {
      await client.close();
    }
    expect(hostileCalls(log)).toEqual(["echo"]);
  }, 300_000);
});
