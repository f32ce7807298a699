import { afterEach, describe, expect, it } from "vitest";
import { McpClientError } from "./errors.js";
import type { McpPool } from "./pool.js";
import type { McpProgress } from "./session.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything } from "./test-support/fixtures.js";

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("progress (notifications/progress) of server-everything's trigger-long-running-operation", () => {
  it("sends a progress token, hands every report on, and lives past timeoutMs while reports arrive", async () => {
    // Twelve steps of half a second: 6 s in all against a 4 s timeout, an eighth of it per step.
    const pool = createNodeMcpPool({ everything: everything({ timeoutMs: 4_000 }) });
    pools.push(pool);
    await pool.listTools("everything");
    const reports: McpProgress[] = [];
    const r = await pool.callTool(
      "everything",
      "trigger-long-running-operation",
      { duration: 6, steps: 12 },
      { onProgress: (p) => reports.push(p) },
    );
    expect(r.success).toBe(true);
    expect(r.summary).toContain("Long running operation completed");
    // The SDK handles notifications a tick after responses, so the last report may lose the race
    // with the result it precedes; every earlier one arrives, in order.
    expect(reports.length).toBeGreaterThanOrEqual(11);
    expect(reports.map((p) => p.progress)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].slice(0, reports.length),
    );
    expect(reports.every((p) => p.total === 12)).toBe(true);
  }, 60_000);

  it("stops a call that keeps reporting at maxTotalTimeoutMs, saying so", async () => {
    const pool = createNodeMcpPool({
      everything: everything({ timeoutMs: 4_000, maxTotalTimeoutMs: 5_000 }),
    });
    pools.push(pool);
    await pool.listTools("everything");
    const error = await pool
      .callTool("everything", "trigger-long-running-operation", { duration: 30, steps: 60 })
      .catch((e: unknown) => e);
    expect(McpClientError.isInstance(error) && error.code).toBe("mcp_timeout");
    expect((error as Error).message).toContain("hard limit of 5000 ms");
    expect((error as Error).message).toContain("maxTotalTimeoutMs");
  }, 60_000);
});
