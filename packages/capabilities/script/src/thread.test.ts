import { existsSync } from "node:fs";
import { join } from "node:path";
import { executeTool } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { afterAskProbe, testGate } from "../test-support/gate.js";

const value = (r: { data?: unknown }) => (r.data as { value?: unknown }).value;
const failure = (r: { data?: unknown }) =>
  (r.data as { failure?: { kind: string; message: string } }).failure;

/**
 * Native loops of the engine that never reach its interrupt check (found by an outside
 * review: `indexOf` over an array-like whose length is 2^53 − 1 loops in C for hours). The
 * engine runs on its own thread, so the host's event loop stays free, and the host ends the
 * thread when the script does not stop. The forms below are examples; the guarantee does not
 * depend on which native loop it is.
 */
const NATIVE_LOOPS = [
  "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)",
  "Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)",
  "Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)",
];

/** Count the host's timer ticks while `work` runs: a blocked event loop counts none. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  try {
    return { result: await work, ticks };
  } finally {
    clearInterval(timer);
  }
}

describe("the engine's thread", () => {
  it("a native loop that never reaches the interrupt check ends at the deadline, and the host stays responsive meanwhile", async () => {
    const gate = testGate();
    for (const loop of NATIVE_LOOPS) {
      const { result, ticks } = await ticksDuring(gate.run(`${loop}; return "finished";`, 400));
      expect(failure(result)).toEqual({
        kind: "timeout",
        message: "the script ran past its deadline of 400 ms and was stopped",
      });
      // 400 ms of deadline plus the stop grace, at a tick per 20 ms: a blocked host counts none.
      expect(ticks).toBeGreaterThan(5);
    }
    // The next script gets a working engine (a new thread replaces the ended one).
    expect(value(await gate.run("return 6 * 7;"))).toBe(42);
  }, 60_000);

  it("stopping the run ends a native loop too", async () => {
    const gate = testGate();
    const controller = new AbortController();
    const running = executeTool(
      "script.run",
      { source: `${NATIVE_LOOPS[0]}; return "finished";`, timeout_ms: 60_000 },
      { ...gate.ctx, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const r = await running;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r)).toMatch(/abort|stopped/);
  }, 60_000);

  it("a native loop while an approval is pending (the wall clock paused) still ends: the engine's time counts", async () => {
    let asked: () => void = () => undefined;
    const approvalAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const probe = afterAskProbe(() => approvalAsked);
    const gate = testGate({
      extra: [probe],
      loaded: ["script", "notes", "probe"],
      approval: "on-risk",
      // Answers "yes" long after the script's time is up; the pending write must never run.
      approve: (_request, signal) =>
        new Promise<boolean>((resolve) => {
          asked();
          const timer = setTimeout(() => resolve(true), 5_000);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve(false);
          });
        }),
    });
    const started = Date.now();
    const r = await gate.run(
      `tools.notes.write({ path: "w.txt", text: "x" }); await tools.probe.afterAsk(); ${NATIVE_LOOPS[0]};`,
      500,
    );
    expect(failure(r)).toEqual({
      kind: "timeout",
      message: "the script ran past its deadline of 500 ms and was stopped",
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(existsSync(join(gate.workspace, "w.txt"))).toBe(false);
  }, 60_000);

  it("console lines written before the thread had to be ended are kept", async () => {
    const gate = testGate();
    const r = await gate.run(`console.log("before the loop"); ${NATIVE_LOOPS[0]};`, 300);
    expect(failure(r)?.kind).toBe("timeout");
    expect((r.data as { logs: string[] }).logs).toEqual(["before the loop"]);
  }, 60_000);

  it("several scripts run at once, each on its own thread", async () => {
    const gate = testGate();
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => gate.run(`let s = 0; for (let i = 0; i < 1e5; i++) s += ${n}; return s;`)),
    );
    expect(results.map(value)).toEqual([1e5, 2e5, 3e5, 4e5]);
  });
});
