import { CapgateError } from "@capgate/schema";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServersMap } from "./config.js";
import type { McpPool } from "./pool.js";
import type { McpPoolEvent } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything } from "./test-support/fixtures.js";

const pools: McpPool[] = [];
function pool(servers: McpServersMap, events?: McpPoolEvent[]): McpPool {
  const p = createNodeMcpPool(servers, events ? { onEvent: (e) => events.push(e) } : {});
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("McpPool against server-everything", () => {
  it("connects lazily, lists namespaced tools and calls them over one reused session", async () => {
    const events: McpPoolEvent[] = [];
    const p = pool({ everything: everything() }, events);
    expect(await p.pidOf("everything")).toBeUndefined();
    const tools = await p.listTools("everything");
    const echo = tools.find((t) => t.name === "echo");
    expect(echo?.qualifiedName).toBe("everything/echo");
    expect(echo?.inputSchema.type).toBe("object");
    const pid = await p.pidOf("everything");
    expect(pid).toBeTypeOf("number");

    const r = await p.callTool("everything", "echo", { message: "hi there" });
    expect(r.success).toBe(true);
    expect(r.summary).toContain("hi there");
    const sum = await p.callTool("everything", "get-sum", { a: 2, b: 3 });
    expect(sum.summary).toContain("5");
    expect(await p.pidOf("everything")).toBe(pid);
    expect(events.filter((e) => e.type === "connected")).toHaveLength(1);
  }, 30_000);

  it("describes images and keeps small binary payloads in data", async () => {
    const p = pool({ everything: everything() });
    const r = await p.callTool("everything", "get-tiny-image", {});
    expect(r.success).toBe(true);
    expect(r.summary).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const data = r.data as { content: Array<{ type: string; data?: string }> };
    expect(data.content.find((c) => c.type === "image")?.data).toBeTypeOf("string");
  }, 30_000);

  it("rejects wrong argument types before sending, naming the property (invalid_arguments)", async () => {
    const p = pool({ everything: everything() });
    const error = await p.callTool("everything", "get-sum", { a: "1", b: 2 }).catch((e: unknown) => e);
    expect(CapgateError.isInstance(error) && error.code).toBe("invalid_arguments");
    expect((error as CapgateError).property).toBe("a");
    expect((await p.callTool("everything", "get-sum", { a: 1, b: 2 })).summary).toContain("3");
  }, 30_000);
});
