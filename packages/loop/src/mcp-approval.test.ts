import { CapgateError } from "@capgate/schema";
import { createHostResources, DEFAULT_LIMITS, type ToolContext } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { approvingMcpCaller } from "./mcp-approval.js";

function context(asked: string[]): ToolContext {
  return {
    workspace: "/tmp",
    signal: new AbortController().signal,
    env: {},
    profile: { name: "Orchestrator", maySpawnWorkers: true },
    limits: DEFAULT_LIMITS,
    policy: { approval: "on-risk" },
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
});
