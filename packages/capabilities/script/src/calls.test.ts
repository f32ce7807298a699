import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ApprovalRequest, executeTool } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { testGate } from "../test-support/gate.js";

const data = (r: { data?: unknown }) => (r.data as { value?: unknown }).value;

describe("script.run: tools inside the script are the session's loaded tools", () => {
  it("chains calls, keeps console lines, and returns only what the script returns", async () => {
    const gate = testGate();
    const r = await gate.run(`
      for (const name of ["a", "b", "c"]) await tools.notes.write({ path: name + ".txt", text: "note " + name });
      const texts = [];
      for (const name of ["a", "b", "c"]) texts.push((await tools.notes.read({ path: name + ".txt" })).data.text);
      console.log("read", texts.length, "notes");
      return { count: texts.length, last: texts[2] };
    `);
    expect(r.success).toBe(true);
    expect(data(r)).toEqual({ count: 3, last: "note c" });
    expect(r.summary).toBe(
      `script returned (6 tool calls, ${(r.data as { durationMs: number }).durationMs} ms):\n{"count":3,"last":"note c"}\nconsole (1 line):\nread 3 notes`,
    );
    // The intermediate texts never reached the result.
    expect(r.summary).not.toContain("note a");
    expect(readFileSync(join(gate.workspace, "b.txt"), "utf8")).toBe("note b");
  });

  it("names JavaScript reads by itself (then, toString, valueOf, toJSON) call nothing", async () => {
    const gate = testGate();
    const r = await gate.run(`
      const seen = [JSON.stringify(tools.notes), JSON.stringify(tools), typeof tools.notes.toString, typeof tools.valueOf];
      for (const convert of [() => String(tools.notes), () => \`\${tools}\`, () => tools.notes + 1]) {
        try { seen.push(convert()) } catch (e) { seen.push(e.name) }
      }
      return seen;
    `);
    expect(r.success).toBe(true);
    expect(data(r)).toEqual(["{}", "{}", "undefined", "undefined", "TypeError", "TypeError", "TypeError"]);
    expect(r.summary).toMatch(/^script returned \(0 tool calls,/);
  });

  it("reaches any tool by its full name with tools.call", async () => {
    const gate = testGate();
    const r = await gate.run(`return (await tools.call("notes.echo", { value: [1, "two"] })).data`);
    expect(data(r)).toEqual([1, "two"]);
  });

  it("a schema error throws an Error whose code and property are the gate's", async () => {
    const gate = testGate();
    const caught = await gate.run(`
      try { await tools.notes.read({ pth: "a.txt" }); } catch (e) {
        return { code: e.code, property: e.property, tool: e.tool, isError: e instanceof Error, message: e.message };
      }`);
    // The same rejection executeTool gives a direct call.
    const gateError = (await executeTool("notes.read", { pth: "a.txt" }, gate.ctx).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code: string; property: string; message: string };
    expect(data(caught)).toEqual({
      code: "invalid_arguments",
      property: gateError.property,
      tool: "notes.read",
      isError: true,
      message: gateError.message,
    });
    expect(gateError.property).toBe("pth");
  });

  it("an uncaught call error fails the script naming the code, the property and the tool", async () => {
    const gate = testGate();
    const r = await gate.run(`await tools.notes.write({ path: "a.txt" })`);
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(
      /^script failed \(1 tool call, \d+ ms\): Error: Invalid arguments for notes\.write: .*\[invalid_arguments at `text` from notes\.write\]$/s,
    );
  });

  it("a tool that is not loaded fails with the gate's own 'load it first' error", async () => {
    const gate = testGate({ loaded: ["script"] });
    const r = await gate.run(
      `try { await tools.notes.read({ path: "a.txt" }) } catch (e) { return [e.code, e.message] }`,
    );
    expect(data(r)).toEqual([
      "unknown_tool",
      `Tool 'notes.read' is not loaded: capability 'notes' is not loaded; call capability_load {"name":"notes"} first.`,
    ]);
  });

  it("a tool that returns success: false throws code tool_failed with what it returned", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { await tools.notes.echo({ value: 7, fail: true }) } catch (e) { return [e.code, e.message, e.result] }`,
    );
    expect(data(r)).toEqual([
      "tool_failed",
      "echo failed as asked",
      { summary: "echo failed as asked", data: { value: 7 } },
    ]);
  });

  it("a policy refusal is policy_denied with its property, and the handler never runs", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { await tools.notes.write({ path: "../escape.txt", text: "x" }) } catch (e) { return [e.code, e.property] }`,
    );
    expect(data(r)).toEqual(["policy_denied", "path"]);
  });

  it("arguments with __proto__, constructor or duplicate-looking tricks are refused before the gate, naming where", async () => {
    const gate = testGate();
    const r = await gate.run(`
      const args = JSON.parse('{"value": {"__proto__": {"polluted": true}}}');
      try { await tools.notes.echo(args) } catch (e) { return [e.code, e.property, ({}).polluted === undefined] }`);
    expect(data(r)).toEqual(["invalid_arguments", "arguments.value.__proto__", true]);
    expect(gate.calls).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("runs calls concurrently up to the limit and queues the rest", async () => {
    const gate = testGate();
    const r = await gate.run(`
      const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => tools.notes.echo({ value: i })));
      return replies.map((x) => x.data);`);
    expect(data(r)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it("makes a thousand calls in one script, and refuses the thousand-and-first", async () => {
    const gate = testGate();
    const r = await gate.run(
      `let sum = 0; for (let i = 0; i < 1000; i++) sum += (await tools.notes.echo({ value: i })).data; return sum;`,
      120_000,
    );
    expect(data(r)).toBe(499_500);
    expect(gate.calls).toHaveLength(1000);
    const over = await gate.run(
      `for (let i = 0; i < 1000; i++) await tools.notes.echo({ value: i });
       try { await tools.notes.echo({ value: 0 }) } catch (e) { return [e.code, e.message] }`,
      120_000,
    );
    expect(data(over)).toEqual([
      "call_limit",
      "notes.echo was not called: a script may make at most 1000 tool calls. Do the rest in another script.run.",
    ]);
    expect(gate.calls).toHaveLength(2000);
  }, 300_000);

  it("refuses script.run from inside a script", async () => {
    const gate = testGate();
    const r = await gate.run(
      `try { await tools.script.run({ source: "return 1" }) } catch (e) { return [e.code, e.message] }`,
    );
    expect(data(r)).toEqual([
      "policy_denied",
      "script.run cannot run inside a script: call the tools directly from the outer script.",
    ]);
  });
});

describe("script.run: approvals pause the script", () => {
  const write = `await tools.notes.write({ path: "w.txt", text: "x" }); return "written"`;

  it("asks for a nested write under on-risk, and resumes with the result once granted", async () => {
    const asked: ApprovalRequest[] = [];
    const gate = testGate({
      approval: "on-risk",
      approve: async (request) => {
        asked.push(request);
        return true;
      },
    });
    const r = await gate.run(write);
    expect(data(r)).toBe("written");
    expect(asked.map((a) => [a.tool, a.risk])).toEqual([["notes.write", "write"]]);
  });

  it("a refusal throws inside the script with a clear message, and the tool does not run", async () => {
    const gate = testGate({ approval: "on-risk", approve: async () => false });
    const r = await gate.run(
      `try { await tools.notes.write({ path: "w.txt", text: "x" }) } catch (e) { return [e.code, e.message] }`,
    );
    expect(data(r)).toEqual(["policy_denied", "The operator denied notes.write; it was not run."]);
    expect(() => readFileSync(join(gate.workspace, "w.txt"))).toThrow();
  });

  it("an approval nobody answers in time is a refusal", async () => {
    const gate = testGate({
      approval: "on-risk",
      approve: async () => {
        throw new Error("nobody answered within 1 s");
      },
    });
    const r = await gate.run(write);
    expect(r.success).toBe(false);
    expect(r.summary).toContain(
      "Approval for notes.write failed: nobody answered within 1 s; it was not run.",
    );
  });

  it("time spent waiting for the operator counts neither against the script's deadline nor the call's timeout", async () => {
    let release: (answer: boolean) => void = () => undefined;
    let asked: () => void = () => undefined;
    const approvalAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const gate = testGate({
      approval: "on-risk",
      approve: () =>
        new Promise<boolean>((resolve) => {
          release = resolve;
          asked();
        }),
      limits: { timeoutMs: 3_000 },
    });
    // Both clocks are long enough for the script to reach its call on a busy machine; the
    // approval is asked (an event), then answered after both would have run out.
    const running = gate.run(write, 3_000);
    await approvalAsked;
    await new Promise((r) => setTimeout(r, 3_500));
    release(true);
    const r = await running;
    expect(data(r)).toBe("written");
  });
});
