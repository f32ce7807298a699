import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { BIN, sandbox } from "./test-support/cli.js";

const text = (r: unknown) => ((r as { content: Array<{ text: string }> }).content[0]?.text ?? "") as string;

describe("capgate mcp serve: script.run with approvals asked of the client's user", () => {
  it("pauses the script on a nested write until the client answers; yes runs it, no throws inside the script", async () => {
    const box = sandbox();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--approval", "on-risk"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "ignore",
    });
    // The client's user: approves yes.txt, refuses no.txt.
    const asked: string[] = [];
    const client = new Client(
      { name: "desktop", version: "1" },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const message = (request.params as { message: string }).message;
      asked.push(message);
      return { action: "accept", content: { approve: message.includes("yes.txt") } };
    });
    await client.connect(transport);
    try {
      await client.callTool({ name: "capability_load", arguments: { name: "fs" } });
      await client.callTool({ name: "capability_load", arguments: { name: "script" } });
      const reply = await client.callTool({
        name: "capability_call",
        arguments: {
          tool: "script.run",
          arguments: {
            source: `
              await tools.fs.write({ path: "yes.txt", content: "approved" });
              try { await tools.fs.write({ path: "no.txt", content: "refused" }); }
              catch (e) { return [e.code, e.message]; }`,
          },
        },
      });
      expect(reply.isError).toBeFalsy();
      expect(text(reply)).toContain('["policy_denied","The operator denied fs.write; it was not run."]');
      expect(asked).toHaveLength(2);
      expect(asked[0]).toBe(
        ["Allow fs.write (write)?", "arguments:", '  path: "yes.txt"', '  content: "approved"'].join("\n"),
      );
      expect(readFileSync(join(box.workspace, "yes.txt"), "utf8")).toBe("approved");
      expect(existsSync(join(box.workspace, "no.txt"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("refuses clearly when the client cannot be asked (no elicitation support)", async () => {
    const box = sandbox();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--approval", "on-risk", "--preload", "fs"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "plain", version: "1" });
    await client.connect(transport);
    try {
      const reply = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.write", arguments: { path: "x.txt", content: "x" } },
      });
      expect(reply.isError).toBe(true);
      expect(text(reply)).toContain("the MCP client cannot be asked (it does not support elicitation)");
      expect(existsSync(join(box.workspace, "x.txt"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("a script stuck in a native loop does not hold the server: other requests are answered, and it ends at its deadline", async () => {
    // Found by an outside review: `indexOf` over an array-like of length 2^53 − 1 loops in
    // the engine's C code without reaching its interrupt check, which held the host's only
    // thread — every other client request waited, for hours. The engine now runs on its own
    // thread, which the host ends when the script does not stop.
    const box = sandbox();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--preload", "fs,script"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "desktop", version: "1" });
    await client.connect(transport);
    try {
      const stuck = client.callTool({
        name: "capability_call",
        arguments: {
          tool: "script.run",
          arguments: {
            source: "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1); return 1;",
            timeout_ms: 3000,
          },
        },
      });
      let stuckDone = false;
      void stuck.finally(() => {
        stuckDone = true;
      });
      // Let the script start, then ask for something else while it loops.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const listed = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.list", arguments: { path: "." } },
      });
      expect(listed.isError).toBeFalsy();
      expect(stuckDone).toBe(false);
      const reply = await stuck;
      expect(reply.isError).toBe(true);
      expect(text(reply)).toContain("the script ran past its deadline of 3000 ms and was stopped");
    } finally {
      await client.close();
    }
  }, 60_000);
});
