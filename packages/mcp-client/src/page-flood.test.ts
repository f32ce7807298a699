import { describe, expect, it } from "vitest";
import type { McpPoolEvent } from "./pool-types.js";
import { MAX_LISTED_TOOLS } from "./session.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { fixture } from "./test-support/fixtures.js";

// A server that pages out tools with a fresh cursor every time: without a bound on the
// entries read, 1,000 pages of them are admitted and held (measured: 1,000,000 entries took
// 110 s and 970 MB of the gate's process).
describe("a server whose tool list does not end", () => {
  it("is read up to MAX_LISTED_TOOLS entries, and the cut is reported with the refused tools", async () => {
    const events: McpPoolEvent[] = [];
    // 6 pages of 5,000: 30,000 entries, over the bound; each page has a fresh cursor.
    const pool = createNodeMcpPool(
      { flood: fixture("page-flood-server", { env: { PAGE: "5000", PAGES: "6" } }) },
      { onEvent: (e) => events.push(e) },
    );
    try {
      const tools = await pool.listTools("flood");
      expect(tools).toHaveLength(MAX_LISTED_TOOLS);
      expect(tools.at(-1)?.name).toBe(`t3_${5_000 - 1}`);
      const cut = pool.skippedTools("flood").find((s) => s.name === "(the rest of the list)");
      expect(cut?.reason).toContain(`more than ${MAX_LISTED_TOOLS} tools`);
      expect(events.some((e) => e.type === "tools_skipped")).toBe(true);
      // What was read is callable as usual.
      expect(await pool.hasTool("flood", "t0_0")).toBe(true);
      expect(await pool.hasTool("flood", "t5_0")).toBe(false);
    } finally {
      await pool.close();
    }
  }, 120_000);

  it("a list under the bound is read whole, with nothing reported", async () => {
    const pool = createNodeMcpPool({
      flood: fixture("page-flood-server", { env: { PAGE: "100", PAGES: "3" } }),
    });
    try {
      expect(await pool.listTools("flood")).toHaveLength(300);
      expect(pool.skippedTools("flood")).toEqual([]);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
