import { CapgateError } from "@capgate/schema";
import { createHostResources, DEFAULT_LIMITS, type ToolContext } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { approvingMcpCaller } from "./mcp-approval.js";

function context(asked: string[], approval: "never" | "on-risk" | "always" = "on-risk"): ToolContext {
  return {
    workspace: "/tmp",
    signal: new AbortController().signal,
    env: {},
    profile: { name: "Orchestrator", maySpawnWorkers: true },
    limits: DEFAULT_LIMITS,
    policy: { approval },
    approve: async (request) => {
      asked.push(request.tool);
      return true;
    },
    services: {},
    resources: createHostResources(),
    stateDir: "/tmp",
  };
}

describe("approvingMcpCaller", () => {
  it("rejects arguments that fail the tool's schema before asking the approver, and sends nothing", async () => {
    const asked: string[] = [];
    const sent: string[] = [];
    const pool = {
      servers: {},
      hasTool: async () => true,
      checkArguments: async (_server: string, _tool: string, args: Record<string, unknown>) => {
        if (typeof args.a !== "number")
          throw new CapgateError("invalid_arguments", "`a` must be number", { property: "a" });
      },
      callTool: async (_server: string, tool: string) => {
        sent.push(tool);
        return { success: true, summary: "ok" };
      },
    };
    const caller = approvingMcpCaller(pool, context(asked), () => "exec");
    await expect(caller.callTool("srv", "add", { a: "1" })).rejects.toMatchObject({
      code: "invalid_arguments",
      property: "a",
    });
    expect(asked).toEqual([]);
    expect(sent).toEqual([]);
    await expect(caller.callTool("srv", "add", { a: 1 })).resolves.toMatchObject({ success: true });
    expect(asked).toEqual(["srv/add"]);
    expect(sent).toEqual(["add"]);
  });

  it("applies the pool's per-tool overrides: ask under never, no question under always", async () => {
    const asked: string[] = [];
    const sent: string[] = [];
    const overrides: Record<string, "ask" | "never"> = { risky: "ask", safe: "never" };
    const pool = {
      servers: { srv: { command: "x", approval: { risky: "ask", safe: "never" } } } as const,
      hasTool: async () => true,
      approvalOverride: async (_server: string, tool: string) => overrides[tool],
      callTool: async (_server: string, tool: string) => {
        sent.push(tool);
        return { success: true, summary: "ok" };
      },
    };
    const quiet = approvingMcpCaller(pool, context(asked, "never"), () => "exec");
    await quiet.callTool("srv", "risky", {});
    await quiet.callTool("srv", "other", {});
    expect(asked).toEqual(["srv/risky"]);
    const strict = approvingMcpCaller(pool, context(asked, "always"), () => "read");
    await strict.callTool("srv", "safe", {});
    await strict.callTool("srv", "other", {});
    expect(asked).toEqual(["srv/risky", "srv/other"]);
    expect(sent).toEqual(["risky", "other", "safe", "other"]);
    // No one to ask: refused like a native tool, saying which rule asked.
    const alone = approvingMcpCaller(pool, { ...context(asked, "never"), approve: undefined }, () => "exec");
    await expect(alone.callTool("srv", "risky", {})).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringContaining("srv/risky needs approval (mcpServers.srv.approval says ask)"),
    });
    expect(sent).toHaveLength(4);
  });
});
