import { describe, expect, it } from "vitest";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything } from "./test-support/fixtures.js";

describe("roots (roots/list)", () => {
  it("are declared when the host gives them, so servers show the tools that need them, and answer with exactly them", async () => {
    const roots = [{ uri: "file:///work/project", name: "project" }];
    const withRoots = createNodeMcpPool({ everything: everything() }, { roots });
    const without = createNodeMcpPool({ everything: everything() });
    try {
      const names = (await withRoots.listTools("everything")).map((t) => t.name);
      expect(names).toContain("get-roots-list");
      const r = await withRoots.callTool("everything", "get-roots-list", {});
      expect(r.summary).toContain("file:///work/project");
      expect((await without.listTools("everything")).map((t) => t.name)).not.toContain("get-roots-list");
    } finally {
      await withRoots.close();
      await without.close();
    }
  }, 60_000);
});
