import type { RunEvent } from "@capgate/loop";
import { describe, expect, it } from "vitest";
import { PLAIN_TEXT, describeEvent as renderEvent } from "./event-text.js";

const p = PLAIN_TEXT;
const stamp = { runId: "r", time: "2026-01-01T00:00:00.000Z" };

describe("renderEvent", () => {
  it("draws a script's nested calls under the script.run that made them", () => {
    const parent = { step: 3, tool: "script.run", index: 1 };
    const events: RunEvent[] = [
      {
        ...stamp,
        seq: 1,
        type: "tool_called",
        step: 3,
        tool: "script.run",
        arguments: { source: "…" },
        risk: "read",
      },
      {
        ...stamp,
        seq: 2,
        type: "tool_called",
        step: 3,
        tool: "fs.read",
        arguments: { path: "a.txt" },
        risk: "read",
        parent,
      },
      {
        ...stamp,
        seq: 3,
        type: "tool_result",
        step: 3,
        tool: "fs.read",
        parent,
        success: true,
        summary: "a.txt",
        via: "native",
        durationMs: 2,
      },
      {
        ...stamp,
        seq: 4,
        type: "tool_result",
        step: 3,
        tool: "script.run",
        success: true,
        summary: "script returned (1 tool call, 9 ms):\n1",
        via: "native",
        durationMs: 9,
      },
    ];
    expect(events.map((e) => renderEvent(e, p))).toEqual([
      '→ script.run {"source":"…"}',
      '  │ 1. → fs.read {"path":"a.txt"}',
      "  │     ✓ a.txt 2 ms",
      "  ✓ script returned (1 tool call, 9 ms): 1 9 ms",
    ]);
  });

  it("says who decided an approval and how far it reaches (what `capgate trace` prints)", () => {
    const resolved = (extra: Record<string, unknown>): RunEvent =>
      ({ ...stamp, seq: 9, type: "approval_resolved", approvalId: "ap-1", ...extra }) as RunEvent;
    expect(renderEvent(resolved({ approved: true, scope: "once", decidedBy: "cli" }), p)).toBe(
      "  approved by cli",
    );
    expect(renderEvent(resolved({ approved: true, scope: "run", decidedBy: "api:abc" }), p)).toBe(
      "  approved for the rest of the run by api:abc",
    );
    expect(
      renderEvent(resolved({ approved: true, scope: "run", tool: "fs.write", decidedBy: "grant:ap-0" }), p),
    ).toBe("✓ allowed fs.write by grant:ap-0");
    expect(
      renderEvent(
        resolved({ approved: false, decidedBy: "timeout", reason: "nobody answered within 900 s" }),
        p,
      ),
    ).toBe("  denied by timeout (nobody answered within 900 s)");
    // A trace written before approvals named who decided still reads.
    expect(renderEvent(resolved({ approved: false }), p)).toBe("  denied");
  });
});

describe("describeQueueRunEvent", () => {
  it("says a run started, how it ended and where its changes went, and what publishing stripped", async () => {
    const { describeQueueRunEvent } = await import("./queue-worker.js");
    expect(describeQueueRunEvent({ type: "started", runId: "r1" })).toEqual(["run r1 started"]);
    expect(
      describeQueueRunEvent({
        type: "ended",
        runId: "r1",
        outcome: "finished",
        result: {
          kind: "branch",
          branch: "capgate/r1",
          commit: "c",
          repository: "/repo",
          notice: "removed a nested repository at vendor/x",
        },
      }),
    ).toEqual(["run r1 finished → branch capgate/r1", "run r1 removed a nested repository at vendor/x"]);
    expect(
      describeQueueRunEvent({
        type: "ended",
        runId: "r2",
        outcome: "error",
        result: { kind: "patch", patch: "", files: ["a", "b"], truncated: false },
        error: "boom",
      }),
    ).toEqual(["run r2 error → patch (2 file(s)) — boom"]);
  });
});

describe("terminalSafe", () => {
  it("escapes what could drive a terminal in any event string, keeping newlines and tabs", async () => {
    const { terminalSafe } = await import("./event-text.js");
    expect(terminalSafe("a\u001b]0;title\u0007b\u001b[2J\u202e\n\tc")).toBe(
      "a\\u001b]0;title\\u0007b\\u001b[2J\\u202e\n\tc",
    );
    const line = renderEvent(
      { ...stamp, seq: 1, type: "finished", step: 1, summary: "done\u001b[31m red\u009b" } as RunEvent,
      p,
    );
    expect(line?.includes("\u001b") || line?.includes("\u009b")).toBe(false);
    expect(line).toContain("done\\u001b[31m red\\u009b");
  });
});
