import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { afterAll, describe, expect, it } from "vitest";
import { createHarness } from "./harness.js";

// A real stdio MCP server (raw JSON-RPC, no SDK) whose one tool asks the client for a
// sampling completion and returns what it got (or the error).
const SERVER = `
import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let pending;
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "sampler", version: "1" } } });
  else if (m.method === "tools/list")
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", description: "Asks the host's model.", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") {
    pending = m.id;
    send({ jsonrpc: "2.0", id: "s1", method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: "Say hi" } }], systemPrompt: "Be brief.", maxTokens: 20 } });
  } else if (m.id === "s1") {
    const text = m.result ? "model: " + m.result.content.text : "refused: " + m.error.message;
    send({ jsonrpc: "2.0", id: pending, result: { content: [{ type: "text", text }] } });
  }
});
`;

describe("MCP sampling through the harness", () => {
  const root = mkdtempSync(join(tmpdir(), "capgate-sampling-"));
  const script = join(root, "sampler.mjs");
  writeFileSync(script, SERVER);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const open = (sampling: boolean) =>
    createHarness({
      workspace: root,
      stateDir: join(root, sampling ? "state-on" : "state-off"),
      config: {
        mcpServers: {
          sampler: { command: process.execPath, args: [script], ...(sampling ? { sampling } : {}) },
        },
      },
    });

  it("is refused by default: the server is told no and the model is never asked", async () => {
    const model = createScriptedModel(["never used"]);
    const h = await open(false);
    try {
      h.createChat({ model, mcp: false }).close();
      const r = await h.mcp?.callTool("sampler", "ask", {});
      expect(r?.summary).toMatch(/^refused: .*does not offer sampling/);
      expect(model.calls).toHaveLength(0);
    } finally {
      await h.close();
    }
  });

  it("with \"sampling\": true it uses the run's model, with the server's system prompt and messages", async () => {
    const model = createScriptedModel(["hi from the run's model"]);
    const h = await open(true);
    try {
      h.createChat({ model, mcp: false }).close();
      const r = await h.mcp?.callTool("sampler", "ask", {});
      expect(r?.summary).toBe("model: hi from the run's model");
      expect(model.calls).toHaveLength(1);
      expect(model.calls[0]?.messages).toEqual([{ role: "user", content: "Say hi" }]);
      expect(model.calls[0]?.system).toContain("Be brief.");
      expect(model.calls[0]?.system).toContain("'sampler'");
    } finally {
      await h.close();
    }
  });
});
