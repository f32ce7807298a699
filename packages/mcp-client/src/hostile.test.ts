import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError, mcpToolLabel } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeCapabilityStep } from "./fallthrough.js";
import type { McpPool } from "./pool.js";
import type { McpPoolEvent } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { FIXTURES, fixture } from "./test-support/fixtures.js";

// The SDK-built hostile server: 10,000 ordinary tools plus hostile names and schemas.
const REFUSED = {
  "esc\u001b[31mred": "contains control or format characters",
  "\u202Eevil_rtl": "contains control or format characters",
  huge_schema: "inputSchema is larger than 65536 characters",
  ref_loop:
    "inputSchema has a $ref loop that never reaches a nested value (#/$defs/a → #/$defs/b → #/$defs/a)",
  ref_loop_beside: "inputSchema has a $ref loop that never reaches a nested value",
  bad_type: "inputSchema does not compile (type must be JSONType",
} as const;

let dir: string;
let pool: McpPool;
const events: McpPoolEvent[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "capgate-hostile-"));
  pool = createNodeMcpPool(
    {
      hostile: fixture("hostile-sdk-server", { env: { HOSTILE_CALL_LOG: join(dir, "calls.log") } }),
      mute: fixture("hostile-sdk-server", {
        args: [join(FIXTURES, "hostile-sdk-server.mjs"), "3", "--refuse-list"],
        env: { HOSTILE_CALL_LOG: join(dir, "mute.log") },
      }),
    },
    { onEvent: (e) => events.push(e) },
  );
});
afterAll(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<CapgateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!CapgateError.isInstance(error)) throw new Error(`expected a CapgateError, got ${String(error)}`);
  return error;
}

describe("a hostile MCP server: one admission rule for listing and calling", () => {
  it("lists the 10,002 admissible tools and reports the six it refuses, with why", async () => {
    const tools = await pool.listTools("hostile");
    expect(tools).toHaveLength(10_002);
    expect(tools.slice(0, 3).map((t) => t.qualifiedName)).toEqual([
      "hostile/echo",
      "hostile/calls",
      "hostile/weather_00000",
    ]);
    const skipped = pool.skippedTools("hostile");
    expect(skipped.map((s) => s.name)).toEqual(Object.keys(REFUSED).map((n) => mcpToolLabel(n)));
    skipped.forEach((s, i) => {
      expect(s.reason).toContain(Object.values(REFUSED)[i]);
    });
    expect(events.find((e) => e.type === "tools_skipped")).toMatchObject({ server: "hostile" });
  }, 60_000);

  it("refuses a call to every refused tool, by its raw or its callable name, naming the tool and why; nothing is sent", async () => {
    for (const [name, why] of Object.entries(REFUSED)) {
      const error = await rejection(pool.callTool("hostile", name, {}));
      expect(error.code).toBe("unknown_tool");
      expect(error.message).toContain(mcpToolLabel(name));
      expect(error.message).toContain(why);
      expect(error.message).toMatch(/Nothing was sent to the server\.$/);
      // No raw control character is echoed back.
      expect(/[\p{Cc}\p{Cf}]/u.test(error.message)).toBe(false);
      expect(await pool.hasTool("hostile", name)).toBe(false);
      expect((await rejection(pool.checkArguments("hostile", name, {}))).code).toBe("unknown_tool");
    }
    expect((await rejection(pool.callTool("hostile", "ref_loop", { x: 1 }))).message).toBe(
      `MCP server 'hostile' lists the tool "ref_loop", but capgate does not admit it: ${REFUSED.ref_loop}. It cannot be called through capgate. Nothing was sent to the server.`,
    );
    // The ordinary tools still work, and the server saw only that call.
    expect((await pool.callTool("hostile", "echo", { text: "hi" })).summary).toBe("echo: hi");
    expect(JSON.parse((await pool.callTool("hostile", "calls", {})).summary)).toEqual(["echo"]);
  }, 60_000);

  it("an unknown name gets a bounded list of the server's tools and a suggestion", async () => {
    const error = await rejection(pool.callTool("hostile", "weather_0001", {}));
    expect(error.code).toBe("unknown_tool");
    expect(error.message).toMatch(
      /^MCP server 'hostile' has no tool "weather_0001"; did you mean 'hostile\/weather_0\d+'\?/,
    );
    expect(error.message).toContain("(10002 in all)");
    expect(error.message.length).toBeLessThan(1_000);
  }, 60_000);

  it("the fallthrough refuses the same tools: explicitly named, the pool's reason; bare, the native error stands", async () => {
    const native = (tool: string) => async () => {
      throw new CapgateError("unknown_tool", `Unknown tool '${tool}'.`, { property: "tool" });
    };
    const explicit = await rejection(
      executeCapabilityStep(
        { tool: "hostile/huge_schema" },
        { native: native("hostile/huge_schema"), mcp: pool },
      ),
    );
    expect(explicit.message).toContain("does not admit it: inputSchema is larger than 65536 characters");
    const bare = await rejection(
      executeCapabilityStep({ tool: "ref_loop" }, { native: native("ref_loop"), mcp: pool }),
    );
    expect(bare.message).toBe("Unknown tool 'ref_loop'.");
    expect(JSON.parse((await pool.callTool("hostile", "calls", {})).summary)).toEqual(["echo"]);
  }, 60_000);

  it("a server whose tool list cannot be had gets no call at all (fail closed)", async () => {
    const error = await rejection(pool.callTool("mute", "echo", { text: "hi" }));
    expect(error.code).toBe("mcp_rpc_error");
    expect(error.message).toMatch(
      /^MCP server 'mute' answered tools\/list with error -32603: this server does not list its tools\. capgate calls only tools it has seen listed, so no tool of 'mute' was called\.$/,
    );
    expect(await rejection(pool.hasTool("mute", "echo"))).toMatchObject({ code: "mcp_rpc_error" });
    await pool.close();
    expect(existsSync(join(dir, "mute.log")) ? readFileSync(join(dir, "mute.log"), "utf8") : "").toBe("");
    expect(readFileSync(join(dir, "calls.log"), "utf8")).toBe('"echo"\n');
  }, 60_000);
});
