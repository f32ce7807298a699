import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { afterEach, describe, expect, it } from "vitest";
import type { McpServersMap } from "./config.js";
import { executeCapabilityStep } from "./fallthrough.js";
import type { McpPool } from "./pool.js";
import type { McpPoolEvent, ToolListCache } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything, FIXTURES as FIXTURES_DIR, fixture } from "./test-support/fixtures.js";
import type { McpToolInfo } from "./tool-list.js";

const pools: McpPool[] = [];
function pool(servers: McpServersMap, options: Parameters<typeof createNodeMcpPool>[1] = {}): McpPool {
  const p = createNodeMcpPool(servers, options);
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const FILTER = { allow: ["echo", "get-*"], deny: ["get-tiny-*"] };
const unknownNative = () => Promise.reject(new CapgateError("unknown_tool", "no native tool by that name"));

describe("tools.allow / tools.deny on server-everything", () => {
  it("leaves filtered tools out of the listing and refuses calls to them, naming server, tool and rule", async () => {
    const all = (await pool({ every: everything() }).listTools("every")).map((t) => t.name);
    const outside = all.find((n) => n !== "echo" && !n.startsWith("get-"));
    expect(all).toContain("get-tiny-image");
    expect(outside).toBeDefined();

    const events: McpPoolEvent[] = [];
    const p = pool({ every: everything({ tools: FILTER }) }, { onEvent: (e) => events.push(e) });
    const names = (await p.listTools("every")).map((t) => t.name);
    expect(names).toContain("echo");
    expect(names).toContain("get-sum");
    expect(names).not.toContain("get-tiny-image");
    expect(names.every((n) => n === "echo" || n.startsWith("get-"))).toBe(true);
    // Leaving a tool out by config is not a warning about the server.
    expect(events.some((e) => e.type === "tools_skipped")).toBe(false);
    expect(p.listedTools("every")?.map((t) => t.name)).toEqual(names);

    const denied = await p.callTool("every", "get-tiny-image", {}).catch((e: unknown) => e);
    expect(denied).toMatchObject({ code: "policy_denied", property: "tool" });
    const message = (denied as Error).message;
    expect(message).toContain("MCP server 'every'");
    expect(message).toContain('the tool "get-tiny-image"');
    expect(message).toContain('mcpServers.every.tools.deny matches it ("get-tiny-*")');
    expect(message).toContain("nothing was sent");
    await expect(p.callTool("every", outside as string, {})).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringContaining("no tools.allow pattern matches it"),
    });
    // The same refusal before arguments are looked at, and for the scope a gate session uses.
    await expect(p.checkArguments("every", "get-tiny-image", {})).rejects.toMatchObject({
      code: "policy_denied",
    });
    const scope = p.scope();
    await expect(scope.callTool("every", "get-tiny-image", {})).rejects.toMatchObject({
      code: "policy_denied",
    });
    expect(await scope.hasTool("every", "get-tiny-image")).toBe(false);
    expect(await scope.excludedBy?.("every", "get-tiny-image")).toMatch(/tools\.deny/);
    await scope.close();

    expect(await p.hasTool("every", "get-tiny-image")).toBe(false);
    expect(await p.excludedBy("every", "get-tiny-image")).toBe('tools.deny matches it ("get-tiny-*")');
    expect(await p.excludedBy("every", "echo")).toBeUndefined();
    expect(await p.excludedBy("every", "no-such-tool")).toBeUndefined();
    expect(await p.refusalOf("every", "get-tiny-image")).toMatch(/config excludes it/);
    // A name the server never listed is still unknown.
    await expect(p.callTool("every", "no-such-tool", {})).rejects.toMatchObject({ code: "unknown_tool" });

    expect((await p.callTool("every", "echo", { message: "still here" })).summary).toContain("still here");
    expect((await p.callTool("every", "get-sum", { a: 2, b: 3 })).summary).toContain("5");
  }, 60_000);

  it("the fallthrough refuses a filtered tool by <server>/<tool> and by bare name, not as unknown", async () => {
    const p = pool({ every: everything({ tools: FILTER }) });
    for (const tool of ["every/get-tiny-image", "get-tiny-image"])
      await expect(
        executeCapabilityStep({ tool, arguments: {} }, { native: unknownNative, mcp: p }),
      ).rejects.toMatchObject({ code: "policy_denied", message: expect.stringContaining("tools.deny") });
    const ok = await executeCapabilityStep(
      { tool: "echo", arguments: { message: "bare" } },
      { native: unknownNative, mcp: p },
    );
    expect(ok).toMatchObject({ via: "mcp", server: "every", tool: "echo" });
    // A bare name the server does not list stays the native error.
    await expect(
      executeCapabilityStep({ tool: "nothing-like-it", arguments: {} }, { native: unknownNative, mcp: p }),
    ).rejects.toMatchObject({ code: "unknown_tool", message: "no native tool by that name" });
  }, 60_000);

  it("filters a cached tool list too, so search never indexes a filtered tool before the server starts", async () => {
    const listed = await pool({ every: everything() }).listTools("every");
    const cache: ToolListCache = {
      load: async () => listed as McpToolInfo[],
      save: async () => {},
    };
    const p = pool({ every: everything({ tools: FILTER }) }, { toolCache: cache });
    const cached = (await p.cachedTools("every"))?.map((t) => t.name) ?? [];
    expect(cached).toContain("echo");
    expect(cached).not.toContain("get-tiny-image");
    const known = await p.knownTools();
    expect(known[0]?.tools.map((t) => t.name)).toEqual(cached);
  }, 60_000);

  it("resolves approval overrides by the tool a call names, most specific glob first", async () => {
    const p = pool({
      every: everything({ approval: { "get-*": "never", "get-sum": "ask", "*": "never", "ec?o": "ask" } }),
    });
    expect(await p.approvalOverride("every", "get-sum")).toBe("ask");
    expect(await p.approvalOverride("every", "get-tiny-image")).toBe("never");
    expect(await p.approvalOverride("every", "echo")).toBe("ask");
    const plain = pool({ every: everything() });
    expect(await plain.approvalOverride("every", "echo")).toBeUndefined();
  }, 60_000);

  it("sends nothing to the server for a filtered tool (the server's own call log)", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "capgate-filter-")), "calls.log");
    const p = pool({
      hostile: fixture("hostile-sdk-server", {
        args: [join(FIXTURES_DIR, "hostile-sdk-server.mjs"), "5"],
        env: { HOSTILE_CALL_LOG: log },
        tools: { deny: ["weather_*", "ech?"] },
      }),
    });
    expect((await p.listTools("hostile")).map((t) => t.name)).toEqual(["calls"]);
    for (const tool of ["echo", "weather_00001"])
      await expect(p.callTool("hostile", tool, { text: "x", region: "FR" })).rejects.toMatchObject({
        code: "policy_denied",
      });
    // The server's own record of the calls that reached it: none.
    expect(existsSync(log)).toBe(false);
    expect((await p.callTool("hostile", "calls", {})).summary).toContain("[]");
  }, 60_000);
});
