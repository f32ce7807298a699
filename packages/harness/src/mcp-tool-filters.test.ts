import { mkdirSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import type { CapgateConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const every = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [EVERYTHING, "stdio"],
  ...extra,
});
const FILTER = { allow: ["echo", "get-*"], deny: ["get-tiny-*"] };

const open: Harness[] = [];
async function harness(
  config: CapgateConfig,
  options: Omit<Parameters<typeof createHarness>[0], "config"> = {},
): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), "capgate-tool-filters-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const h = await createHarness({
    workspace,
    stateDir: join(root, "state"),
    ...options,
    config: { ...config, shell: shellForTests() },
  });
  open.push(h);
  return h;
}
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

describe("mcpServers.<name>.tools through the harness", () => {
  it("keeps filtered tools out of search and load, and every call path refuses them by name and rule", async () => {
    const h = await harness({ mcpServers: { every: every({ tools: FILTER }) } });
    await h.indexMcpTools();
    const manifest = h.registry.get("mcp:every");
    const names = manifest?.tools.map((t) => t.name) ?? [];
    expect(names).toContain("every/echo");
    expect(names).toContain("every/get-sum");
    expect(names).not.toContain("every/get-tiny-image");
    const hits = h.registry.search("tiny image", { limit: 20 });
    expect(hits.flatMap((hit) => hit.tools.map((t) => t.name))).not.toContain("every/get-tiny-image");

    // The gate (capgate mcp serve, /mcp): load shows the filtered list; calls are refused.
    const gate = h.createGateSession();
    type Reply = { success: boolean; summary: string };
    const extra = { signal: new AbortController().signal };
    const load = (await gate.handlers.capability_load({ name: "mcp:every" }, extra)) as Reply;
    expect(load.summary).toContain("every/echo");
    expect(load.summary).not.toContain("get-tiny-image");
    for (const tool of ["every/get-tiny-image", "get-tiny-image"]) {
      const refused = (await gate.handlers.capability_call({ tool, arguments: {} }, extra)) as Reply;
      expect(refused.success, tool).toBe(false);
      expect(refused.summary).toContain("policy_denied");
      expect(refused.summary).toContain("MCP server 'every'");
      expect(refused.summary).toContain('mcpServers.every.tools.deny matches it ("get-tiny-*")');
    }
    const echoed = (await gate.handlers.capability_call(
      { tool: "every/echo", arguments: { message: "allowed" } },
      extra,
    )) as Reply;
    expect(echoed.success).toBe(true);
    expect(echoed.summary).toContain("allowed");
    await gate.close();

    // A direct call (capgate call, /tools/call).
    await expect(h.callTool("every/get-tiny-image", {})).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringContaining("tools.deny"),
    });
    expect((await h.callTool("every/get-sum", { a: 1, b: 2 })).result.summary).toContain("3");

    // mcp.call and mcp.list_tools on the configured server read the same list.
    const viaMcp = await h.callTool("mcp.call", { command: "every", tool: "get-tiny-image", arguments: {} });
    expect(viaMcp.result.success).toBe(false);
    expect(viaMcp.result.summary).toContain("tools.deny");
    const listed = await h.callTool("mcp.list_tools", { command: "every" });
    expect(listed.result.summary).toContain("echo");
    expect(listed.result.summary).not.toContain("get-tiny-image");
  }, 90_000);

  it("the chat loop's fallthrough refuses a filtered tool, and the model reads why", async () => {
    const h = await harness({ mcpServers: { every: every({ tools: FILTER }) } });
    const model = createScriptedModel([
      act("capability_call", { tool: "every/get-tiny-image", arguments: {} }),
      act("capability_call", { tool: "every/echo", arguments: { message: "fine" } }),
      act("verify", { claim: "nothing broke", command: "true" }),
      act("finish", { summary: "done" }),
    ]);
    const events: Array<{ type: string; [k: string]: unknown }> = [];
    const chat = h.createChat({ model, onEvent: (e) => events.push(e) });
    expect((await chat.send("try both")).reply).toBe("done");
    await chat.close();
    const results = events.filter((e) => e.type === "tool_result") as unknown as Array<{
      tool: string;
      success: boolean;
      summary: string;
    }>;
    const denied = results.find((r) => r.tool === "every/get-tiny-image");
    expect(denied?.success).toBe(false);
    expect(denied?.summary).toContain("tools.deny");
    expect(results.find((r) => r.tool === "every/echo")?.success).toBe(true);
  }, 90_000);
});

describe("mcpServers.<name>.approval overrides with the loop's approval hook", () => {
  const script = () =>
    createScriptedModel([
      act("capability_call", { tool: "every/echo", arguments: { message: "one" } }),
      act("capability_call", { tool: "every/get-sum", arguments: { a: 1, b: 2 } }),
      act("verify", { claim: "nothing broke", command: "true" }),
      act("finish", { summary: "done" }),
    ]);

  it('"ask" asks under approval "never"; "never" skips asking under approval "always"', async () => {
    const asked: string[] = [];
    const approve = async (request: { tool: string }) => {
      asked.push(request.tool);
      return true;
    };
    const quiet = await harness(
      { approval: "never", mcpServers: { every: every({ approval: { echo: "ask" } }) } },
      { approve },
    );
    const first = quiet.createChat({ model: script() });
    expect((await first.send("call both")).reply).toBe("done");
    await first.close();
    expect(asked.filter((t) => t.startsWith("every/"))).toEqual(["every/echo"]);

    asked.length = 0;
    const strict = await harness(
      { approval: "always", mcpServers: { every: every({ approval: { "get-*": "never" } }) } },
      { approve },
    );
    const second = strict.createChat({ model: script() });
    expect((await second.send("call both")).reply).toBe("done");
    await second.close();
    expect(asked.filter((t) => t.startsWith("every/"))).toEqual(["every/echo"]);
  }, 90_000);

  it('refuses an "ask" tool when no one can approve, with the error native tools get', async () => {
    const h = await harness({ mcpServers: { every: every({ approval: { "ech?": "ask" } }) } });
    await expect(h.callTool("every/echo", { message: "x" })).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringMatching(
        /every\/echo needs approval \(mcpServers\.every\.approval says ask\), and no one can approve here/,
      ),
    });
    expect((await h.callTool("every/get-sum", { a: 1, b: 1 })).result.success).toBe(true);
    // Through mcp.call too: the override is the tool's, whatever path reaches it.
    await expect(
      h.callTool("mcp.call", { command: "every", tool: "echo", arguments: { message: "x" } }),
    ).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringContaining("mcpServers.every.approval says ask"),
    });
  }, 90_000);
});
