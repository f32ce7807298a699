import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineCapability } from "@capgate/tools";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "./index.js";

// The gateway's per-call stop is lazy (no AbortSignal unless the tool reads it): a tool
// that does read it must still be stopped when the client goes away or the server closes.
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-gw-abort-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function waiter() {
  const seen: { started: number; reasons: string[] } = { started: 0, reasons: [] };
  const capability = defineCapability({
    manifest: {
      name: "hold",
      version: "0.0.0",
      description: "Test capability: a tool that waits until its call is stopped.",
      profileFit: [],
      tools: [
        {
          name: "hold.wait",
          description: "Wait until stopped.",
          risk: "read",
          inputSchema: { type: "object", additionalProperties: false, properties: {} },
        },
      ],
    },
    handlers: {
      wait: (_args, ctx) =>
        new Promise((resolve) => {
          seen.started++;
          ctx.signal.addEventListener("abort", () => {
            seen.reasons.push(String((ctx.signal.reason as Error)?.message ?? ctx.signal.reason));
            resolve({ success: false, summary: "stopped" });
          });
        }),
    },
  });
  return { seen, capability };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("POST /tools/call stops a running tool", () => {
  it("when the client disconnects", { timeout: 30_000 }, async () => {
    const { seen, capability } = waiter();
    const server = await startServer({
      workspace: root,
      stateDir: join(root, "state-a"),
      env: {},
      port: 0,
      capabilities: [capability],
    });
    try {
      const client = new AbortController();
      const request = fetch(`${server.url}/tools/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "hold.wait", arguments: {} }),
        signal: client.signal,
      }).catch((error: unknown) => error);
      await until(() => seen.started === 1, "the tool to start");
      client.abort();
      await request;
      await until(() => seen.reasons.length === 1, "the tool to see the abort");
      expect(seen.reasons).toEqual(["the client disconnected"]);
    } finally {
      await server.close();
    }
  });

  it("when the server closes, and answers 503", { timeout: 30_000 }, async () => {
    const { seen, capability } = waiter();
    const server = await startServer({
      workspace: root,
      stateDir: join(root, "state-b"),
      env: {},
      port: 0,
      capabilities: [capability],
    });
    const response = fetch(`${server.url}/tools/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "hold.wait", arguments: {} }),
    });
    await until(() => seen.started === 1, "the tool to start");
    const closed = server.close();
    const answer = await response;
    await closed;
    expect(seen.reasons).toHaveLength(1);
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("shutting_down");
  });
});
