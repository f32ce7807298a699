import { describe, expect, it } from "vitest";
import { SessionTable, type TrackedSession } from "./mcp-sessions.js";

function table(maxSessions: number, maxPerOwner = maxSessions, idleMs = 1000) {
  const t = new SessionTable<TrackedSession>({ maxSessions, maxPerOwner, idleMs });
  const add = (id: string, owner: string, lastSeen: number, active = 0) =>
    t.set(id, { owner, lastSeen, active });
  return { t, add };
}

describe("SessionTable", () => {
  it("admits freely under the caps", () => {
    const { t, add } = table(3);
    add("a", "x", 1);
    expect(t.admit("x")).toEqual({ ok: true, evict: [] });
  });

  it("at the cap evicts the least recently used idle session, never a busy one", () => {
    const { t, add } = table(3);
    add("old-busy", "x", 1, 1);
    add("mid", "y", 2);
    add("new", "x", 3);
    expect(t.admit("z")).toEqual({ ok: true, evict: ["mid"] });
  });

  it("refuses, saying why, only when every session at the cap is busy", () => {
    const { t, add } = table(2);
    add("a", "x", 1, 1);
    add("b", "y", 2, 2);
    const r = t.admit("z");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/All 2 MCP sessions are busy/);
  });

  it("the per-owner cap evicts that owner's own sessions, not others'", () => {
    const { t, add } = table(10, 2);
    add("x1", "x", 1);
    add("y1", "y", 0);
    add("x2", "x", 2);
    expect(t.admit("x")).toEqual({ ok: true, evict: ["x1"] });
    expect(t.admit("y")).toEqual({ ok: true, evict: [] });
  });

  it("both caps at once evict as many as needed, oldest first", () => {
    const { t, add } = table(3, 2);
    add("x1", "x", 1);
    add("x2", "x", 2);
    add("y1", "y", 3);
    // x is at its cap (x1 goes); then 2 of 3 remain, under the overall cap.
    expect(t.admit("x")).toEqual({ ok: true, evict: ["x1"] });
    add("z1", "z", 0);
    // Overall 4 ≥ 3 after none of x's: z1 (oldest idle) goes, then x1.
    expect(t.admit("w")).toEqual({ ok: true, evict: ["z1", "x1"] });
  });

  it("expires sessions idle longer than idleMs, not busy ones", () => {
    const { t, add } = table(10, 10, 1000);
    add("idle", "x", 0);
    add("busy", "x", 0, 1);
    add("fresh", "x", 1500);
    expect(t.expired(2000)).toEqual(["idle"]);
  });

  it("begin/end tracks a request in flight and touches lastSeen", () => {
    const { t, add } = table(1);
    add("a", "x", 0);
    const s = t.get("a")!;
    const end = t.begin(s, 5);
    expect(s).toMatchObject({ active: 1, lastSeen: 5 });
    expect(t.admit("y").ok).toBe(false);
    end();
    end();
    expect(s.active).toBe(0);
    expect(t.admit("y")).toEqual({ ok: true, evict: ["a"] });
  });
  it("a reserved slot counts until released: concurrent admissions cannot pass the caps", () => {
    const { t } = table(1);
    expect(t.admit("x")).toEqual({ ok: true, evict: [] });
    const release = t.reserve("x");
    // The reserved session is initializing (busy): nothing to evict, so the next is refused.
    expect(t.admit("y").ok).toBe(false);
    release();
    release();
    expect(t.admit("y")).toEqual({ ok: true, evict: [] });
  });
});
