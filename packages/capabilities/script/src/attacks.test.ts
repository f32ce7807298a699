import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineCapability } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { afterAskProbe, testGate } from "../test-support/gate.js";

// The attack pass on the isolate: what a hostile script tried, and what it gets. Each
// attack was first run against the built capability; the ones that got through were fixed.

const value = (r: { data?: unknown }) => (r.data as { value?: unknown }).value;
const failure = (r: { data?: unknown }) =>
  (r.data as { failure?: { kind: string; message: string } }).failure;

describe("attacks on the isolate", () => {
  it("a toJSON on Object.prototype cannot forge the script's reply to the host", async () => {
    // Found: the result and error records were JSON-stringified on ordinary objects, so the
    // script's toJSON replaced them ("script failed: forged"). They are prototype-free now.
    const gate = testGate();
    const r = await gate.run(
      `Object.prototype.toJSON = function () { return { ok: false, message: "forged" } }; return 5;`,
    );
    expect(r.success).toBe(true);
    expect(value(r)).toBe(5);
    const thrown = await gate.run(
      `Object.prototype.toJSON = function () { return { message: "forged", code: "policy_denied" } }; throw new Error("real");`,
    );
    expect(thrown.summary).toMatch(/: Error: real$/);
  });

  it("getters in a returned value or a thrown error cannot start tool calls once the script has ended", async () => {
    // Found: a getter read while the result was turned into JSON started a call that ran
    // after the script's result was reported. Calls are refused once the script has settled.
    const gate = testGate();
    await gate.run(`return { get x() { tools.notes.write({ path: "late.txt", text: "late" }); return 1 } };`);
    await gate.run(
      `const e = new Error("x"); Object.defineProperty(e, "message", { get() { tools.notes.write({ path: "late2.txt", text: "late" }); return "m" } }); throw e;`,
    );
    expect(gate.calls).toEqual([]);
    expect(existsSync(join(gate.workspace, "late.txt"))).toBe(false);
    expect(existsSync(join(gate.workspace, "late2.txt"))).toBe(false);
  });

  it("a call left running when the script returns ends before the script does", async () => {
    // Found: a call the script did not await was still running (here: winding down after its
    // stop) when script.run answered. Calls in flight are stopped and awaited first.
    let started = false;
    let ended = false;
    const slow = defineCapability({
      manifest: {
        name: "slow",
        version: "0.1.0",
        description: "Waits until stopped, then takes a while to wind down.",
        profileFit: ["Orchestrator"],
        tools: [
          {
            name: "slow.wait",
            description: "Wait until stopped.",
            risk: "read",
            inputSchema: { type: "object", additionalProperties: false, properties: {} },
          },
        ],
      } as const,
      handlers: {
        wait: (_args, ctx) =>
          new Promise((resolve) => {
            started = true;
            ctx.signal.addEventListener("abort", () =>
              setTimeout(() => {
                ended = true;
                resolve({ success: false, summary: "stopped" });
              }, 100),
            );
          }),
      },
    });
    const gate = testGate({ extra: [slow], loaded: ["script", "notes", "slow"] });
    const r = await gate.run(
      `tools.slow.wait(); for (let i = 0; i < 5; i++) await tools.notes.echo({ value: i }); return "returned";`,
    );
    expect(value(r)).toBe("returned");
    expect(started).toBe(true);
    expect(ended).toBe(true);
  });

  it("errors carry no host stack frames or paths", async () => {
    const gate = testGate();
    const r = await gate.run(`
      const stacks = [];
      try { await tools.call(Symbol("x")) } catch (e) { stacks.push(String(e.stack)) }
      try { await tools.notes.read({ path: "missing.txt" }) } catch (e) { stacks.push(String(e.stack), e.message) }
      return stacks;`);
    const text = JSON.stringify(value(r));
    expect(text).not.toMatch(/node_modules|\/work\/|\.ts:|\.mjs|file:/);
  });

  it("the tools object exposes no host object: no own keys, no prototype, only functions of the script's own realm", async () => {
    const gate = testGate();
    const r = await gate.run(`
      return [
        Object.getOwnPropertyNames(tools), Reflect.getPrototypeOf(tools),
        tools.call.constructor === (async () => {}).constructor,
        ({}).constructor.constructor("return typeof process + typeof require")(),
        Reflect.set(tools, "fs", 1), delete tools.call,
      ];`);
    expect(value(r)).toEqual([[], null, true, "undefinedundefined", false, false]);
  });

  it("a huge tool name is refused at the boundary without reaching the gate", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { await tools.call("x".repeat(5e6), {}) } catch (e) { return [e.code, e.message] }`,
    );
    expect(value(r)).toEqual([
      "unknown_tool",
      'A tool name is 1 to 256 characters, like "fs.read" or "server/tool".',
    ]);
    expect(gate.calls).toEqual([]);
  });

  it("a synchronous flood of calls is capped and nothing runs once the deadline stops it", async () => {
    const gate = testGate();
    const r = await gate.run(
      `for (let i = 0; ; i++) tools.notes.write({ path: "f" + i + ".txt", text: "x" });`,
      1000,
    );
    expect(failure(r)?.kind).toBe("timeout");
    expect(r.summary).toMatch(/^script failed \(1000 tool calls, /);
    expect(gate.calls).toEqual([]);
  });

  it("promise and microtask floods end at the deadline", async () => {
    const gate = testGate();
    for (const source of [
      `for (let i = 0; i < 1e7; i++) Promise.resolve(i).then(() => 0); return "queued";`,
      `const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});`,
    ])
      expect(failure(await gate.run(source, 1000))?.kind).toMatch(/timeout|memory/);
    // Found: the flood filled the engine, whose failed allocations surface as a thrown null
    // (first form) or a dead promise chain (second): both were reported as the script's own
    // "threw null" or "stalled". With memory free, those stay the script's own.
    expect(failure(await gate.run(`throw null`))).toMatchObject({
      kind: "thrown",
      message: /non-Error value: null/,
    });
    expect(failure(await gate.run(`await new Promise(() => {})`))?.kind).toBe("stalled");
  });

  it("catastrophic regular expressions and huge native work end at the deadline or the memory limit", async () => {
    const gate = testGate();
    expect(failure(await gate.run(`return /(a+)+$/.test("a".repeat(40) + "b")`, 1000))?.kind).toBe("timeout");
    expect(
      failure(
        await gate.run(
          `const a = Array.from({ length: 3e6 }, (_, i) => i % 1000); a.sort(); return a.length`,
          20_000,
        ),
      )?.kind,
    ).toMatch(/memory|timeout/);
  });

  it("a finally block cannot run tool calls after the deadline", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { for (;;) {} } finally { await tools.notes.write({ path: "fin.txt", text: "x" }) }`,
      500,
    );
    expect(failure(r)?.kind).toBe("timeout");
    expect(gate.calls).toEqual([]);
  });

  it("replacing JSON, Promise.prototype.then or Object.prototype.then only changes the script's own view", async () => {
    const gate = testGate();
    const r = await gate.run(
      `JSON.stringify = () => "{}"; JSON.parse = () => ({ ok: true, value: "forged" }); return (await tools.notes.echo({ value: 3 })).data;`,
    );
    expect(value(r)).toBe(3);
    const hijacked = await gate.run(
      `Object.prototype.then = function (r) { delete Object.prototype.then; r("own") }; return await tools.notes.echo({ value: 1 });`,
    );
    expect(value(hijacked)).toBe("own");
    expect(({} as { then?: unknown }).then).toBeUndefined();
  });

  it("values that are not JSON are refused with a clear error", async () => {
    const gate = testGate();
    expect((await gate.run(`return 10n;`)).summary).toContain(
      "the returned value could not be turned into JSON: Do not know how to serialize a BigInt",
    );
    expect((await gate.run(`const a = {}; a.a = a; return a;`)).summary).toContain("circular reference");
  });

  it("deeply nested arguments are stopped without harming the host, and the next script runs", async () => {
    const gate = testGate();
    const r = await gate.run(
      `let a = {}; for (let i = 0; i < 1e5; i++) a = { a }; await tools.notes.echo({ value: a });`,
    );
    expect(failure(r)?.kind).toBe("stack");
    expect(gate.calls).toEqual([]);
    const shallow = await gate.run(
      `let a = {}; for (let i = 0; i < 70; i++) a = { a }; try { await tools.notes.echo({ value: a }) } catch (e) { return e.code }`,
    );
    expect(value(shallow)).toBe("too_deep");
  });

  it("huge console lines are cut inside the engine", async () => {
    const gate = testGate();
    const r = await gate.run(`console.log("y".repeat(1e6)); return 1`);
    const logs = (r.data as { logs: string[] }).logs;
    expect(logs[0]?.length).toBeLessThan(17_000);
    expect(logs[0]).toMatch(/…\[line cut\]$/);
  });

  it("a busy loop while an approval is pending still ends at the deadline, and the write asked about never runs", async () => {
    // Found: the deadline stops while a person is asked to approve a call, and the engine's
    // interrupt check read only that deadline. A script started a write without awaiting it,
    // went on once the approval was asked, then looped: the loop ran forever, blocking the
    // host's event loop (not even the answer could arrive). The engine's running time now
    // counts against the deadline whether or not a pause is active.
    let askedTimes = 0;
    // Made anew for each script below.
    let asked: () => void = () => undefined;
    let approvalAsked: Promise<void> = Promise.resolve();
    // A tool that returns once the approval has been asked (the approver answers "yes" three
    // seconds later, long after the script has been stopped: the host is free while the
    // engine loops on its own thread, so an earlier answer would be a granted write).
    const probe = afterAskProbe(() => approvalAsked);
    const gate = testGate({
      extra: [probe],
      loaded: ["script", "notes", "probe"],
      approval: "on-risk",
      approve: () =>
        new Promise<boolean>((resolve) => {
          askedTimes++;
          asked();
          setTimeout(() => resolve(true), 3_000);
        }),
    });
    // First a loop that ends by itself after 10 s (a regression fails here instead of
    // hanging the test run: a blocked event loop fires no test timeout), then the plain one.
    for (const loop of [
      `const end = Date.now() + 10000; while (Date.now() < end) {} return "looped";`,
      `for (;;) {}`,
    ]) {
      approvalAsked = new Promise<void>((resolve) => {
        asked = resolve;
      });
      const r = await gate.run(
        `tools.notes.write({ path: "w.txt", text: "x" }); await tools.probe.afterAsk(); ${loop}`,
        1_000,
      );
      expect(failure(r)).toEqual({
        kind: "timeout",
        message: "the script ran past its deadline of 1000 ms and was stopped",
      });
      expect(existsSync(join(gate.workspace, "w.txt"))).toBe(false);
    }
    expect(askedTimes).toBe(2);
  }, 60_000);

  it("a loop that keeps calling async functions cannot take the interrupt inside them and run on", async () => {
    // Found while fixing the approval-pause finding (the call flood above hung now and then):
    // QuickJS turns any exception inside an async function, the uncatchable interrupt
    // included, into that function's rejected promise. With every interrupt landing inside
    // a long async function, the loop calling it never ended. From the stop on, no function
    // can be entered at all, so the frames still running end at their next interrupt check.
    // (Without the fix this test never ends: a blocked worker fires no test timeout.)
    const gate = testGate();
    for (const loop of [`for (;;) f();`, `for (;;) g().next();`]) {
      const r = await gate.run(
        `const f = async () => { for (let i = 0; i < 20000; i++); };
         const g = async function* () { for (let i = 0; i < 20000; i++); };
         ${loop}`,
        500,
      );
      expect(failure(r)).toEqual({
        kind: "timeout",
        message: "the script ran past its deadline of 500 ms and was stopped",
      });
    }
  }, 60_000);

  it("replacing String.prototype.slice, Array.prototype.map or join cannot get a huge console line through uncut", async () => {
    // Found: console.log built its line with values.map(show).join(" ") and cut it with
    // line.slice, all looked up when called: a script that replaced slice sent a 40,000-
    // character line to the host whole. The prelude calls only what it captured at its start.
    const gate = testGate();
    const logs = async (source: string) => ((await gate.run(source)).data as { logs: string[] }).logs;
    const cut = (line: string | undefined) => {
      expect(line?.length).toBeLessThan(17_000);
      expect(line).toMatch(/^y+ …\[line cut\]$/);
    };
    cut(
      (
        await logs(
          `String.prototype.slice = function () { return String(this) }; console.log("y".repeat(40000))`,
        )
      )[0],
    );
    const replaced = await logs(`
      String.prototype.slice = function () { return String(this) };
      Array.prototype.map = function () { return ["y".repeat(40000)] };
      Array.prototype.join = function () { return "y".repeat(40000) };
      console.log("a", 1, { b: 2 });
      console.log("y".repeat(40000));`);
    expect(replaced[0]).toBe('a 1 {"b":2}');
    cut(replaced[1]);
  });

  it("replacing the array iterator does not change the result the script reports", async () => {
    // Found with the console finding: the reply records were built with for-of, which
    // calls the array iterator the script may replace (here: the returned value was lost).
    const gate = testGate();
    const r = await gate.run(`Array.prototype[Symbol.iterator] = function* () {}; return 5;`);
    expect(r.success).toBe(true);
    expect(value(r)).toBe(5);
  });

  it("a tool name crosses the boundary whole: a NUL in it cannot cut it short", async () => {
    // Found: the host read the name as a C string, which ends at a NUL, so
    // tools.call("notes.read\u0000anything") ran notes.read. A name with a control
    // character is refused at the boundary, and any other name reaches the gate intact.
    const gate = testGate();
    writeFileSync(join(gate.workspace, "a.txt"), "secret");
    const r = await gate.run(`
      const out = [];
      for (const call of [
        () => tools.call("notes.read\\u0000anything", { path: "a.txt" }),
        () => tools.notes["read\\u0000"]({ path: "a.txt" }),
        () => tools.call("notes.read\\n", { path: "a.txt" }),
      ]) {
        try { out.push((await call()).summary) } catch (e) { out.push([e.code, e.property, e.tool, e.message]) }
      }
      return out;`);
    const refused = (name: string) => [
      "unknown_tool",
      "tool",
      name,
      `The tool name ${JSON.stringify(name)} contains a control character (such as NUL); no tool is named that way.`,
    ];
    expect(value(r)).toEqual([
      refused("notes.read\u0000anything"),
      refused("notes.read\u0000"),
      refused("notes.read\n"),
    ]);
    expect(gate.calls).toEqual([]);
    // A name the engine cannot write as UTF-8 (a lone surrogate) reaches the gate as it was passed.
    const lone = await gate.run(
      `try { await tools.call("notes.read\\ud800", { path: "a.txt" }) } catch (e) { return [e.code, e.tool === "notes.read\\ud800"] }`,
    );
    expect(value(lone)).toEqual(["unknown_tool", true]);
    expect(gate.calls.map((c) => c.tool)).toEqual(["notes.read\ud800"]);
  });
});
