import { CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { fixture } from "./test-support/fixtures.js";

describe('tools for the MCP App only (_meta.ui.visibility without "model")', () => {
  it("are not listed, are refused from model calls saying why, and stay callable for the app", async () => {
    const pool = createNodeMcpPool({ app: fixture("app-server") });
    try {
      expect((await pool.listTools("app")).map((t) => t.name)).toEqual(["show"]);
      expect(await pool.hasTool("app", "refresh")).toBe(false);
      const refused = await pool.callTool("app", "refresh", {}).catch((e: unknown) => e);
      expect(CapgateError.isInstance(refused) && refused.code).toBe("unknown_tool");
      expect((refused as Error).message).toContain("for its app only");
      expect((refused as Error).message).toContain("Nothing was sent");
      expect((await pool.callTool("app", "show", {})).summary).toBe("called show");
      expect((await pool.appTools("app")).map((t) => t.name)).toEqual(["refresh"]);
      expect((await pool.callTool("app", "refresh", {}, { app: true })).summary).toBe("called refresh");
    } finally {
      await pool.close();
    }
  }, 30_000);
});
