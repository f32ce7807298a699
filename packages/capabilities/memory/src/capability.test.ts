import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createToolContext,
  executeTool,
  type MemoryEntry,
  type MemoryService,
  type ToolContext,
} from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { capability } from "./capability.js";

// A host memory service kept in a Map: the real one (persisted, ranked) lives in @capgate/loop.
function mapMemory(): MemoryService {
  const entries = new Map<string, MemoryEntry>();
  let n = 0;
  return {
    async remember(e) {
      const entry: MemoryEntry = {
        id: `m${++n}`,
        text: e.text,
        tags: e.tags ?? [],
        source: e.source ?? "remember",
        createdAt: new Date(2026, 0, n).toISOString(),
      };
      entries.set(entry.id, entry);
      return entry;
    },
    async forget(id) {
      return entries.delete(id);
    },
    async list(limit) {
      return [...entries.values()].reverse().slice(0, limit);
    },
    async search() {
      return [];
    },
  };
}

function ctx(services: ToolContext["services"]) {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-mem-"));
  return {
    ...createToolContext({
      workspace,
      env: {},
      profile: { name: "Researcher", maySpawnWorkers: false },
      services,
    }),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

describe("memory capability", () => {
  it("remembers, lists newest first and forgets through the host service", async () => {
    const c = ctx({ memory: mapMemory() });
    expect(
      (await executeTool("memory.remember", { text: "staging deploys need VPN", tags: ["deploy"] }, c))
        .summary,
    ).toBe("Remembered as m1.");
    await executeTool("memory.remember", { text: "second" }, c);
    const listed = await executeTool("memory.list", {}, c);
    expect(listed.summary.split("\n")[0]).toContain("m2");
    expect(listed.summary).toContain("[deploy]");
    expect((await executeTool("memory.forget", { id: "m1" }, c)).success).toBe(true);
    const again = await executeTool("memory.forget", { id: "m1" }, c);
    expect(again.success).toBe(false);
    expect(again.summary).toContain("'m1'");
  });

  it("fails clearly when the host provides no memory", async () => {
    const r = await executeTool("memory.list", {}, ctx({}));
    expect(r.success).toBe(false);
    expect(r.summary).toContain("not available in this host");
  });

  it("rejects invalid arguments naming the property", async () => {
    await expect(
      executeTool("memory.remember", { text: "" }, ctx({ memory: mapMemory() })),
    ).rejects.toMatchObject({
      code: "invalid_arguments",
      property: "text",
    });
  });
});
