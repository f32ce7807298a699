import { existsSync } from "node:fs";
import { join } from "node:path";
import { executeTool } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { testGate } from "../test-support/gate.js";
import { createScriptCapability } from "./index.js";

const value = (r: { data?: unknown }) => (r.data as { value?: unknown }).value;
const failure = (r: { data?: unknown }) =>
  (r.data as { failure?: { kind: string; message: string } }).failure;

/**
 * What a script may cost the host besides its own thread (an outside review of the engine
 * thread found each of these): the host's work per call, its memory for calls not yet
 * answered, a script's whole life under approvals, and the share of the host's script
 * slots one session may hold.
 */
describe("what a script may cost the host", () => {
  it("arguments holding more values than the limit are refused in the engine's thread, before the host sees them", async () => {
    // Bytes alone do not bound the host's work: 8 MiB is two million array items, each
    // copied across and checked against the tool's schema on the host's thread.
    const gate = testGate();
    const r = await gate.run(
      `try { await tools.notes.echo({ value: new Array(200000).fill(1) }) } catch (e) { return [e.code, e.property, e.message] }`,
    );
    expect(value(r)).toEqual([
      "too_large",
      "arguments",
      "The arguments of notes.echo hold more than 100000 values (array items and object members together); pass fewer at once, e.g. in several calls.",
    ]);
    expect(gate.calls).toEqual([]);
    // Just under the limit crosses.
    const fine = await gate.run(
      `await tools.notes.echo({ value: new Array(1000).fill(1) }); return "crossed";`,
    );
    expect(value(fine)).toBe("crossed");
  });

  it("calls not yet answered may hold only so many bytes of arguments; the next is refused", async () => {
    const script = createScriptCapability({ limits: { pendingBytes: 10_000 } });
    const gate = testGate({ script });
    const r = await gate.run(`
      const big = "x".repeat(4000);
      const calls = [1, 2, 3].map((i) => tools.notes.echo({ value: big }).then(() => "ok", (e) => e.code));
      return await Promise.all(calls);`);
    expect(value(r)).toEqual(["ok", "ok", "too_large"]);
    // Once answered, their bytes are free again.
    const again = await gate.run(`
      const big = "x".repeat(4000);
      for (let i = 0; i < 5; i++) await tools.notes.echo({ value: big });
      return "done";`);
    expect(value(again)).toBe("done");
  });

  it("the clock stops for an approval only while every call in flight waits for a person", async () => {
    // Found: with one write waiting for an answer, the same script went on making reads
    // for as long as it liked — its deadline was paused for all of it.
    const gate = testGate({
      script: createScriptCapability({ limits: { maxCalls: 1_000_000 } }),
      approval: "on-risk",
      approve: (_request, signal) =>
        new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 5_000);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve(false);
          });
        }),
    });
    const r = await gate.run(
      `const asked = tools.notes.write({ path: "w.txt", text: "x" }).catch(() => "refused");
       const end = Date.now() + 3000;
       let reads = 0;
       while (Date.now() < end) { await tools.notes.echo({ value: 1 }); reads++; }
       return reads;`,
      500,
    );
    expect(failure(r)).toEqual({
      kind: "timeout",
      message: "the script ran past its deadline of 500 ms and was stopped",
    });
    expect(existsSync(join(gate.workspace, "w.txt"))).toBe(false);
  }, 30_000);

  it("a script ends at its lifetime however long its approvals wait", async () => {
    const script = createScriptCapability({ limits: { maxLifetimeMs: 600 } });
    const gate = testGate({
      script,
      approval: "on-risk",
      approve: (_request, signal) =>
        new Promise<boolean>((resolve) => {
          signal?.addEventListener("abort", () => resolve(false));
        }),
    });
    const r = await gate.run(
      `await tools.notes.write({ path: "w.txt", text: "x" }); return "written";`,
      60_000,
    );
    expect(failure(r)).toEqual({
      kind: "timeout",
      message:
        "the script was stopped after 600 ms in all, the longest a script may live (waiting for approvals included)",
    });
    expect(existsSync(join(gate.workspace, "w.txt"))).toBe(false);
  }, 30_000);

  it("a stop that comes before the script begins is reported as the stop, not as an engine failure", async () => {
    const gate = testGate();
    for (let i = 0; i < 5; i++) {
      const r = await gate.run("let s = 0; for (let i = 0; i < 1e7; i++) s += i; return s;", 1);
      const kind = failure(r)?.kind;
      // A machine fast enough may finish in a millisecond; anything else is the deadline.
      if (kind !== undefined)
        expect(failure(r)?.message).toBe("the script ran past its deadline of 1 ms and was stopped");
    }
    expect(value(await gate.run("return 1;"))).toBe(1);
  });

  it("one session may hold at most four of the host's script slots", async () => {
    const gate = testGate();
    const runs = [1, 2, 3, 4, 5].map(() => gate.run("for (;;) {}", 1_000));
    const results = await Promise.all(runs);
    const kinds = results.map((r) => failure(r)?.kind).sort();
    expect(kinds).toEqual(["busy", "timeout", "timeout", "timeout", "timeout"]);
    const busy = results.find((r) => failure(r)?.kind === "busy");
    expect(failure(busy ?? {})?.message).toBe(
      "4 scripts of this session are already running; try again when one has finished.",
    );
    // Another session (its own resources) is not held back by this one's scripts.
    const other = testGate();
    const mine = [1, 2, 3, 4].map(() => gate.run("for (;;) {}", 1_000));
    const theirs = await executeTool("script.run", { source: "return 2;" }, other.ctx);
    expect(value(theirs)).toBe(2);
    await Promise.all(mine);
  }, 30_000);
});
