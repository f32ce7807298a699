import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "./memory-store.js";

describe("MemoryStore", () => {
  it("remembers, ranks, forgets, and survives a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-mem-"));
    const m = new MemoryStore(dir);
    const a = await m.remember({ text: "Deploys to staging need the VPN", tags: ["deploy"] });
    await m.remember({ text: "The test suite runs with pnpm test", tags: ["testing"] });
    await m.remember({ text: "Lunch is at noon" });
    const hits = await m.search("deploying staging", 5);
    expect(hits[0]?.id).toBe(a.id);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect(await m.forget(a.id)).toBe(true);
    expect(await m.forget(a.id)).toBe(false);
    const again = new MemoryStore(dir);
    expect(again.size).toBe(2);
    expect((await again.search("staging VPN", 5)).map((h) => h.id)).not.toContain(a.id);
    expect((await again.list(1))[0]?.text).toBe("Lunch is at noon");
    // Append-only: the forget is a tombstone line.
    expect(readFileSync(join(dir, "memory.jsonl"), "utf8").trim().split("\n")).toHaveLength(4);
  });

  it("refuses empty notes", async () => {
    const m = new MemoryStore(mkdtempSync(join(tmpdir(), "capgate-mem-")));
    await expect(m.remember({ text: "   " })).rejects.toThrow(/needs some text/);
  });
});
