import { describe, expect, it } from "vitest";
import { buildContextPacket, PACKET_SUFFIX } from "./packet.js";

describe("buildContextPacket", () => {
  const base = {
    promptDelta: "Inspect code, patch narrowly, run verification, and avoid broad rewrites.",
    loadedSignatures: ["fs.read(path: string, offset?: integer, limit?: integer)"],
    goal: "Fix the failing test",
    steps: [],
    charBudget: 48_000,
  };

  it("puts base + delta + the fixed suffix + eight signatures + loaded signatures in the system part", () => {
    const p = buildContextPacket(base);
    expect(PACKET_SUFFIX.endsWith("and do not finish without verification evidence.")).toBe(true);
    expect(p.system).toContain(base.promptDelta);
    expect(p.system).toContain(PACKET_SUFFIX);
    for (const name of [
      "capability_search(query: string, limit?: integer)",
      "capability_load(name: string)",
      "capability_call(tool: string, arguments?: object)",
      "goal_update(",
      "memory_search(",
      "verify(claim: string, command: string, timeout_ms?: integer)",
      "finish(summary: string, evidence?: string)",
      "mark_impossible(reason: string, attempts?: string[])",
    ]) {
      expect(p.system).toContain(name);
    }
    expect(p.system).toContain("fs.read(path: string, offset?: integer, limit?: integer)");
    expect(p.messages[0]).toEqual({ role: "user", content: "Goal: Fix the failing test" });
  });

  it("shows the goal state", () => {
    const p = buildContextPacket({
      ...base,
      goalState: { status: "working", plan: ["read", "patch"], notes: ["the bug is in add()"] },
    });
    expect(p.messages[0]?.content).toContain("status: working");
    expect(p.messages[0]?.content).toContain("2. patch");
    expect(p.messages[0]?.content).toContain("the bug is in add()");
  });

  it("stays within the budget by dropping the oldest steps, never the system part or the goal", () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({
      action: `{"name":"capability_search","arguments":{"query":"q${i}"}}`,
      result: `result ${i} ${"x".repeat(900)}`,
    }));
    const p = buildContextPacket({ ...base, steps, charBudget: 12_000 });
    expect(p.totalChars).toBeLessThanOrEqual(12_000);
    expect(p.droppedSteps).toBeGreaterThan(0);
    const text = p.messages.map((m) => m.content).join("\n");
    expect(text).toContain("Goal: Fix the failing test");
    expect(text).toContain("result 59");
    expect(text).not.toContain("result 0 ");
    expect(text).toContain("earlier step(s) omitted");
    expect(p.system).toContain(PACKET_SUFFIX);
  });

  it("alternates roles: actions are assistant turns, results user turns", () => {
    const p = buildContextPacket({ ...base, steps: [{ action: "A", result: "R" }] });
    expect(p.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });
});
