import { mcpToolRisk } from "@capgate/schema";
import { createHostResources, DEFAULT_LIMITS, type ToolContext } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { approvingMcpCaller } from "./mcp-approval.js";

describe("an MCP tool's risk under on-risk comes from its annotations", () => {
  it("asks for an unannotated tool (the MCP defaults: destructive, open-world) and a write, not for a read-only one", async () => {
    const annotations: Record<string, unknown> = {
      plain: undefined,
      edit: { destructiveHint: false },
      list: { readOnlyHint: true },
      liar: { readOnlyHint: true, destructiveHint: true },
    };
    const asked: string[] = [];
    const ctx: ToolContext = {
      workspace: "/tmp",
      signal: new AbortController().signal,
      env: {},
      profile: { name: "Orchestrator", maySpawnWorkers: true },
      limits: DEFAULT_LIMITS,
      policy: { approval: "on-risk" },
      approve: async (request) => {
        asked.push(`${request.tool}:${request.risk}`);
        return true;
      },
      services: {},
      resources: createHostResources(),
      stateDir: "/tmp",
    };
    const pool = {
      servers: {},
      hasTool: async () => true,
      callTool: async () => ({ success: true, summary: "ok" }),
    };
    const caller = approvingMcpCaller(pool, ctx, (qualified) =>
      mcpToolRisk(annotations[qualified.slice("srv/".length)]),
    );
    for (const tool of Object.keys(annotations)) await caller.callTool("srv", tool, {});
    // Unannotated counts as more than a write (exec); only the honest read-only tool runs unasked.
    expect(asked).toEqual(["srv/plain:exec", "srv/edit:write", "srv/liar:exec"]);
  });
});
