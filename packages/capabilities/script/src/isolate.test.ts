import { executeTool } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { testGate } from "../test-support/gate.js";
import { createScriptCapability } from "./index.js";

const data = (r: { data?: unknown }) =>
  r.data as { value?: unknown; failure?: { kind: string }; logs: string[] };

describe("script.run: an isolate, not a process with Node's powers", () => {
  it("has no require, process, fetch, timers, module loading or host globals", async () => {
    const gate = testGate();
    const r = await gate.run(`
      let imported;
      try { await import("node:fs"); imported = "loaded"; } catch (e) { imported = e.message; }
      return {
        types: [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof setInterval,
                typeof queueMicrotask, typeof Buffer, typeof WebAssembly, typeof std, typeof os],
        imported,
        globals: Object.getOwnPropertyNames(globalThis).filter((k) => !/^[A-Z]/.test(k)).sort(),
      };`);
    expect(data(r).value).toEqual({
      types: Array(10).fill("undefined"),
      imported: "import() is not available in scripts: use the tools object to reach tools",
      globals: [
        "console",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "eval",
        "globalThis",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "tools",
        "undefined",
        "unescape",
      ],
    });
  });

  it("a syntax error names line and column", async () => {
    const gate = testGate();
    const r = await gate.run(`const a = 1;\nconst b = (a +;\nreturn b;`);
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/^script failed at line 2, column 15 \(0 tool calls, \d+ ms\): SyntaxError: /);
    const first = await gate.run(`let x = ;`);
    expect(first.summary).toMatch(/^script failed at line 1, column 9 /);
  });

  it("a thrown error names where it was thrown", async () => {
    const gate = testGate();
    const r = await gate.run(`const a = 1;\n\n  missing.call();`);
    expect(r.summary).toMatch(
      /^script failed at line 3, column \d+ \(0 tool calls, \d+ ms\): ReferenceError: 'missing' is not defined$/,
    );
  });

  it("stops at its deadline with a clear error", async () => {
    const gate = testGate();
    const r = await gate.run(`while (true) {}`, 300);
    expect(r.summary).toMatch(
      /^script failed \(0 tool calls, \d+ ms\): the script ran past its deadline of 300 ms and was stopped$/,
    );
  });

  it("a deadline cannot be caught, and no tool runs after it", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { while (true) {} } catch (e) {} await tools.notes.write({ path: "late.txt", text: "x" });`,
      300,
    );
    expect(data(r).failure?.kind).toBe("timeout");
    expect(gate.calls).toEqual([]);
  });

  it("a timeout_ms over the host's maximum is refused naming the property", async () => {
    const gate = testGate({ limits: { timeoutMs: 10_000 } });
    await expect(gate.run("return 1", 20_000)).rejects.toMatchObject({
      code: "invalid_arguments",
      property: "arguments.timeout_ms",
      message:
        "timeout_ms 20000 is over this host's maximum of 10000 ms for a script; ask for 10000 or less.",
    });
  });

  it("runs out of memory at its limit with a clear error, whatever the engine's own accounting says", async () => {
    const script = createScriptCapability({ limits: { memoryBytes: 24 * 1024 * 1024 } });
    const gate = testGate({ script });
    const r = await gate.run(`const keep = []; for (;;) keep.push("x".repeat(65536) + keep.length);`, 60_000);
    expect(r.summary).toMatch(/the script ran out of memory \(limit 25165824 bytes\)$/);
    // The next script gets a fresh instance and runs.
    expect(data(await gate.run("return 1")).value).toBe(1);
  });

  it("stops deep JavaScript recursion at the stack limit", async () => {
    const gate = testGate();
    const r = await gate.run(`function down(n) { return down(n + 1) + 1 } return down(0);`);
    expect(r.summary).toMatch(/the script nested calls too deeply \(stack limit 262144 bytes\)$/);
  });

  it("stops native recursion over a deeply nested value without harming the host, and the next script runs", async () => {
    const gate = testGate();
    const r = await gate.run(
      `let a = []; for (let i = 0; i < 200000; i++) a = [a]; return JSON.stringify(a).length;`,
    );
    expect(data(r).failure?.kind).toBe("stack");
    expect(data(await gate.run("return 2")).value).toBe(2);
  });

  it("caps the output: a huge return value is cut in the middle with a note, console lines past the cap are counted", async () => {
    const gate = testGate({ limits: { outputBytes: 4096 } });
    const r = await gate.run(
      `for (let i = 0; i < 2000; i++) console.log("line " + i); return "v".repeat(100000);`,
    );
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(4096);
    expect(r.summary).toContain(
      "(the returned value is 100002 bytes, over the output limit; it was cut in the middle",
    );
    expect(r.summary).toMatch(/\(\d+ more console lines dropped: over the 4096-byte output limit\)/);
  });

  it("a script waiting on a promise nothing can settle ends at once with a clear error", async () => {
    const gate = testGate();
    const r = await gate.run(`await new Promise(() => {}); return 1;`, 60_000);
    expect(r.summary).toMatch(
      /the script is waiting on a promise that nothing will settle \(there are no timers, and no tool call is in flight\)$/,
    );
  });

  it("an aborted run stops the script while a call is in flight, and nothing runs after", async () => {
    const controller = new AbortController();
    let entered: () => void = () => undefined;
    const inFlight = new Promise<void>((r) => {
      entered = r;
    });
    const gate = testGate({
      approval: "on-risk",
      approve: (_request, signal) => {
        entered();
        return new Promise<boolean>((_, reject) =>
          signal.addEventListener("abort", () => reject(new Error("stopped"))),
        );
      },
    });
    const source = `await tools.notes.write({ path: "a.txt", text: "x" }); await tools.notes.write({ path: "b.txt", text: "y" });`;
    const running = executeTool("script.run", { source }, { ...gate.ctx, signal: controller.signal });
    await inFlight;
    controller.abort();
    const r = await running;
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/aborted/);
    expect(gate.calls.filter((c) => c.args.path === "b.txt")).toEqual([]);
  });

  it("returned getters, Proxies and toJSON run inside the engine; only JSON text comes out", async () => {
    const gate = testGate();
    const r = await gate.run(`
      const tricky = new Proxy({}, { get: (_, k) => k === "toJSON" ? () => ({ fromProxy: true }) : undefined });
      return { get computed() { return 6 * 7 }, tricky, fn: () => 1, sym: Symbol("s") };`);
    expect(data(r).value).toEqual({ computed: 42, tricky: { fromProxy: true } });
  });

  it("prototype pollution inside stays inside", async () => {
    const gate = testGate();
    const r = await gate.run(
      `Object.prototype.polluted = "yes"; Array.prototype.map = null; return { own: 1 };`,
    );
    expect(data(r).value).toEqual({ own: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof [].map).toBe("function");
  });

  it("a script's globals do not survive into the next script", async () => {
    const gate = testGate();
    await gate.run(`globalThis.leftover = 1; Object.prototype.stale = true;`);
    expect(data(await gate.run(`return [typeof leftover, ({}).stale === undefined]`)).value).toEqual([
      "undefined",
      true,
    ]);
  });
});
