import type { RunningServer } from "@capgate/server";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { httpGate, sandbox, serveSandbox, resultText as text } from "./support.js";

const TOKEN = "e2e-token-e2e-token-e2e-token";
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(config: Record<string, unknown>, files: Record<string, string> = {}) {
  server = await serveSandbox(sandbox(config, files), TOKEN);
  return server;
}

async function status(s: RunningServer): Promise<{ mcpSessions: number }> {
  const r = await fetch(`${s.url}/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await r.json()) as { mcpSessions: number };
}

describe("/mcp sessions never lock clients out", () => {
  it("200 SDK clients that never DELETE, and the 201st still connects and works", async () => {
    const s = await serve({}, { "notes.txt": "still here\n" });
    const abandoned: Client[] = [];
    for (let i = 0; i < 200; i++) {
      const client = await httpGate(s.url, TOKEN);
      await client.listTools();
      abandoned.push(client);
      // Closing the SDK client drops the transport without a DELETE, like the Inspector does.
      await client.close();
    }
    // At the cap (64 by default) the least recently used idle session made room each time.
    expect((await status(s)).mcpSessions).toBe(64);
    const last = await httpGate(s.url, TOKEN);
    try {
      await last.callTool({ name: "capability_load", arguments: { name: "fs" } });
      const read = await last.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "notes.txt" } },
      });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toContain("still here");
    } finally {
      await last.close();
    }
    expect((await status(s)).mcpSessions).toBe(64);
  }, 300_000);

  it("at the per-token cap the token's own least recently used idle session makes room", async () => {
    const s = await serve({ gate: { maxSessions: 5, maxSessionsPerToken: 2 } });
    const a = await httpGate(s.url, TOKEN);
    const b = await httpGate(s.url, TOKEN);
    const c = await httpGate(s.url, TOKEN);
    expect((await status(s)).mcpSessions).toBe(2);
    // `a` was evicted (least recently used): its next request gets 404, so it must re-initialize.
    await expect(a.listTools()).rejects.toThrow(/404|Session not found/);
    expect((await c.listTools()).tools).toHaveLength(4);
    expect((await b.listTools()).tools).toHaveLength(4);
    for (const client of [a, b, c]) await client.close();
  }, 60_000);

  it("concurrent initializes cannot pass the caps, and a token counts once however its header is spelled", async () => {
    // Found in the outside attack: ten parallel initializes all passed admission (a session
    // entered the table only once answered), and `bearer`/extra spaces made one token
    // several owners. Admission now reserves its slot; the owner is the token itself.
    const s = await serve({ gate: { maxSessions: 3, maxSessionsPerToken: 2 } });
    const initialize = (authorization: string) =>
      fetch(`${s.url}/mcp`, {
        method: "POST",
        headers: {
          authorization,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "e2e", version: "0" },
          },
        }),
      });
    const spellings = [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER  ${TOKEN}`, `Bearer ${TOKEN} `];
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => initialize(spellings[i % 4]!)));
    for (const r of answers) await r.body?.cancel();
    // Each answer is a session or a 503 (an idle session may make room for a newcomer, as
    // designed); what never happens is more sessions open than the token's cap.
    for (const r of answers) expect([200, 503]).toContain(r.status);
    expect(answers.some((r) => r.status === 200)).toBe(true);
    expect((await status(s)).mcpSessions).toBeLessThanOrEqual(2);
  }, 60_000);

  it("idle sessions expire (gate.idleMs)", async () => {
    const s = await serve({ gate: { idleMs: 1000 } });
    const client = await httpGate(s.url, TOKEN);
    await client.listTools();
    expect((await status(s)).mcpSessions).toBe(1);
    const deadline = Date.now() + 15_000;
    while ((await status(s)).mcpSessions > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect((await status(s)).mcpSessions).toBe(0);
    await expect(client.listTools()).rejects.toThrow(/404|Session not found/);
    await client.close();
  }, 60_000);

  it("a one-shot client can call a native tool without capability_load when the config preloads it", async () => {
    const s = await serve({ gate: { preload: ["fs"] } }, { "a.txt": "preloaded\n" });
    const client = await httpGate(s.url, TOKEN);
    try {
      const read = await client.callTool({
        name: "capability_call",
        arguments: { tool: "fs.read", arguments: { path: "a.txt" } },
      });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toContain("preloaded");
    } finally {
      await client.close();
    }
  }, 60_000);
});
