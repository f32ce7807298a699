import { CapgateError } from "@capgate/schema";
import { afterEach, describe, expect, it } from "vitest";
import type { McpPool } from "./pool.js";
import type { McpPoolEvent } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { fixture } from "./test-support/fixtures.js";

const pools: McpPool[] = [];
function open(events: McpPoolEvent[] = []): McpPool {
  const p = createNodeMcpPool({ checks: fixture("checks-server") }, { onEvent: (e) => events.push(e) });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function rejection(promise: Promise<unknown>): Promise<CapgateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!CapgateError.isInstance(error)) throw new Error(`expected a CapgateError, got ${String(error)}`);
  return error;
}

async function callsSoFar(p: McpPool): Promise<number> {
  return Number((await p.callTool("checks", "count", {})).summary);
}

describe("arguments are validated against the server's inputSchema before sending", () => {
  it("draft-07 with $ref: a wrong type is invalid_arguments naming `a` (the executor's shape), and nothing reaches the server", async () => {
    const p = open();
    expect(await callsSoFar(p)).toBe(0);
    const error = await rejection(p.callTool("checks", "add", { a: "1", b: 2 }));
    expect(error.code).toBe("invalid_arguments");
    expect(error.property).toBe("a");
    expect(error.message).toContain("Signature: checks/add(a: ");
    expect((await rejection(p.callTool("checks", "add", { a: 1 }))).property).toBe("b");
    expect((await rejection(p.callTool("checks", "add", { a: 1, b: 2, c: 3 }))).property).toBe("c");
    // Only the first count reached the server: the three rejected calls sent nothing.
    expect(await callsSoFar(p)).toBe(1);
    expect((await p.callTool("checks", "add", { a: 1, b: 2 })).summary).toBe("3");
  }, 30_000);

  it("2020-12 with $defs/$ref and prefixItems", async () => {
    const p = open();
    const error = await rejection(p.callTool("checks", "place", { at: { x: 1.5 } }));
    expect(error.property).toBe("at.x");
    expect((await rejection(p.callTool("checks", "place", { at: { x: 1 }, tags: [3] }))).property).toBe(
      "tags[0]",
    );
    expect((await p.callTool("checks", "place", { at: { x: 1 }, tags: ["a"] })).success).toBe(true);
  }, 30_000);

  it("checkArguments (used before asking an approver) rejects the same way", async () => {
    const p = open();
    expect((await rejection(p.checkArguments("checks", "add", { a: "1", b: 2 }))).property).toBe("a");
    await expect(p.checkArguments("checks", "add", { a: 1, b: 2 })).resolves.toBeUndefined();
  }, 30_000);

  it("a tool whose schema does not compile is not listed and refuses calls, saying why; nothing is sent (fail closed)", async () => {
    const p = open();
    expect((await p.listTools("checks")).map((t) => t.name)).not.toContain("broken");
    expect(p.skippedTools("checks")).toEqual([
      expect.objectContaining({
        name: '"broken"',
        callable: "broken",
        reason: expect.stringMatching(/^inputSchema does not compile \(/),
      }),
    ]);
    const error = await rejection(p.callTool("checks", "broken", { a: 1 }));
    expect(error.code).toBe("unknown_tool");
    expect(error.message).toMatch(
      /^MCP server 'checks' lists the tool "broken", but capgate does not admit it: inputSchema does not compile \(type must be JSONType.*\)\. It cannot be called through capgate\. Nothing was sent to the server\.$/,
    );
    expect((await rejection(p.checkArguments("checks", "broken", {}))).code).toBe("unknown_tool");
    expect(await p.hasTool("checks", "broken")).toBe(false);
    expect(await callsSoFar(p)).toBe(0);
  }, 30_000);
});

describe("results", () => {
  it("structuredContent is checked against the outputSchema: a mismatch is reported, the result kept", async () => {
    const p = open();
    const good = await p.callTool("checks", "shaped", {});
    expect(good).toMatchObject({ success: true, structuredContent: { n: 1 } });
    expect(good.summary).not.toContain("warning");
    const bad = await p.callTool("checks", "shaped", { bad: true });
    expect(bad.success).toBe(true);
    expect(bad.structuredContent).toEqual({ n: "one" });
    expect(bad.summary).toMatch(
      /warning: structuredContent does not match the tool's outputSchema: .*structuredContent\.n/,
    );
    expect((bad.data as { outputSchemaProblems?: string[] }).outputSchemaProblems).toHaveLength(1);
  }, 30_000);

  it("an error result is success: false, not a throw", async () => {
    const p = open();
    expect(await p.callTool("checks", "fails", {})).toMatchObject({ success: false, summary: "it failed" });
  }, 30_000);

  it("keeps title, annotations and outputSchema in the tool list", async () => {
    const p = open();
    const shaped = (await p.listTools("checks")).find((t) => t.name === "shaped");
    expect(shaped).toMatchObject({
      title: "Shaped result",
      annotations: { readOnlyHint: true, title: "Shaped" },
      outputSchema: { required: ["n"] },
      risk: "read",
    });
  }, 30_000);
});

describe("callable names", () => {
  it("a tool named with a space is called as get_weather and sent under its own name", async () => {
    const p = open();
    const tools = await p.listTools("checks");
    expect(tools.find((t) => t.name === "get weather")?.qualifiedName).toBe("checks/get_weather");
    expect(await p.hasTool("checks", "get_weather")).toBe(true);
    expect((await p.callTool("checks", "get_weather", {})).summary).toBe("get weather ran with {}");
  }, 30_000);
});
