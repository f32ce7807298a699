import { mkdirSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpProgress } from "@capgate/mcp-client";
import { shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import type { CapgateConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const HANG = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "mcp-client",
  "test",
  "fixtures",
  "hang-server.mjs",
);

const open: Harness[] = [];
async function harness(config: CapgateConfig): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), "capgate-gate-mcp-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const h = await createHarness({
    workspace,
    stateDir: join(root, "state"),
    config: { ...config, shell: shellForTests() },
  });
  open.push(h);
  return h;
}
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

describe("a gate session's MCP calls", () => {
  it("hand progress to the client and into the run's events (tool_progress), and outlive timeoutMs while it arrives", async () => {
    const h = await harness({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, "stdio"], timeoutMs: 4_000 },
      },
    });
    const gate = h.createGateSession();
    const reports: McpProgress[] = [];
    const r = (await gate.handlers.capability_call(
      { tool: "everything/trigger-long-running-operation", arguments: { duration: 6, steps: 12 } },
      { signal: new AbortController().signal, onProgress: (p) => reports.push(p) },
    )) as { success: boolean; summary: string };
    expect(r.success, r.summary).toBe(true);
    expect(reports.length).toBeGreaterThanOrEqual(11);
    await gate.close();
    const events = h.store.read(gate.runId).events;
    const progress = events.filter((e) => e.type === "tool_progress");
    expect(progress.length).toBe(reports.length);
    expect(progress[0]).toMatchObject({
      tool: "everything/trigger-long-running-operation",
      progress: 1,
      total: 12,
    });
    // Progress comes between the call and its result.
    const types = events.map((e) => e.type);
    expect(types.indexOf("tool_called")).toBeLessThan(types.indexOf("tool_progress"));
    expect(types.lastIndexOf("tool_progress")).toBeLessThan(types.indexOf("tool_result"));
  }, 60_000);

  it("stop when the client cancels (the upstream request is cancelled), not at the server's timeout", async () => {
    const h = await harness({
      mcpServers: { slow: { command: process.execPath, args: [HANG], timeoutMs: 600_000 } },
    });
    const gate = h.createGateSession();
    const controller = new AbortController();
    const pending = gate.handlers.capability_call(
      { tool: "slow/hang", arguments: {} },
      { signal: controller.signal },
    ) as Promise<{ success: boolean; summary: string }>;
    // Abort once the call is in flight: the run's trace shows it was made.
    await new Promise<void>((resolve) => {
      const check = () => {
        try {
          if (h.store.read(gate.runId).events.some((e) => e.type === "tool_called")) return resolve();
        } catch {}
        setTimeout(check, 20);
      };
      check();
    });
    controller.abort();
    const r = await pending.catch((e: unknown) => ({ success: false, summary: String(e) }));
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/abort|cancel/i);
    await gate.close();
  }, 30_000);
});
