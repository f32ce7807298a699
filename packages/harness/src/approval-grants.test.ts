// "Allow for the rest of this run" covers questions of the approval mode only. A question a
// configured rule asks — a shell `ask` rule, an MCP server's `"ask"` override, also through
// mcp.call — is asked every time: an outside review (stop 28) had a grant given for one
// command or one tool stand in for all of them. Real server-everything, real shell.
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
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
const open: Harness[] = [];
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

type Event = { type: string; [key: string]: unknown };
const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

/** A chat whose operator answers every question "allow for the rest of this run"; what was asked, and the events. */
async function chatAnsweringAlways(config: CapgateConfig, actions: string[]) {
  const root = mkdtempSync(join(tmpdir(), "capgate-grants-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const asked: Array<{ tool: string; grantable: boolean | undefined }> = [];
  const h = await createHarness({
    workspace,
    stateDir: join(root, "state"),
    approve: async (request) => {
      asked.push({ tool: request.tool, grantable: request.grantable });
      return { approved: true, scope: "run", decidedBy: "test" };
    },
    config: { ...config, shell: { ...shellForTests(), ...config.shell } },
  });
  open.push(h);
  const events: Event[] = [];
  const chat = h.createChat({
    model: createScriptedModel([
      ...actions,
      act("verify", { claim: "done", command: "true" }),
      act("finish", { summary: "done" }),
    ]),
    onEvent: (e) => events.push(e as Event),
  });
  await chat.send("go");
  await chat.close();
  return { asked: asked.filter((a) => a.tool !== "verify"), events, workspace };
}

describe("run grants cover questions of the approval mode only", () => {
  it("a grant for shell.run does not answer a configured shell ask rule for another command", async () => {
    const { asked, events, workspace } = await chatAnsweringAlways(
      { approval: "never", shell: { ask: [{ prefix: ["echo"] }, { prefix: ["touch"] }] } } as CapgateConfig,
      [
        act("capability_load", { name: "shell" }),
        act("capability_call", { tool: "shell.run", arguments: { command: "echo hi" } }),
        act("capability_call", { tool: "shell.run", arguments: { command: "touch MADE" } }),
      ],
    );
    expect(asked).toEqual([
      { tool: "shell.run", grantable: false },
      { tool: "shell.run", grantable: false },
    ]);
    // The operator's "always" to a rule's question was a yes to that call: the trace says once.
    const resolved = events.filter((e) => e.type === "approval_resolved");
    expect(resolved.map((e) => [e.scope, e.decidedBy])).toEqual([
      ["once", "test"],
      ["once", "test"],
    ]);
    expect(existsSync(join(workspace, "MADE"))).toBe(true);
  }, 120_000);

  it("a grant for mcp.call does not answer an MCP server's ask override, through mcp.call", async () => {
    const { asked, events } = await chatAnsweringAlways(
      { approval: "on-risk", mcpServers: { every: every({ approval: { echo: "ask" } }) } } as CapgateConfig,
      [
        act("capability_load", { name: "mcp" }),
        act("capability_call", {
          tool: "mcp.call",
          arguments: { command: "every", tool: "get-sum", arguments: { a: 1, b: 2 } },
        }),
        act("capability_call", {
          tool: "mcp.call",
          arguments: { command: "every", tool: "echo", arguments: { message: "asked" } },
        }),
      ],
    );
    // mcp.call asked once (the mode; granted for the run), then the override asked for echo.
    expect(asked).toEqual([
      { tool: "mcp.call", grantable: true },
      { tool: "every/echo", grantable: false },
    ]);
    const echo = events.filter((e) => e.type === "tool_result" && e.tool === "mcp.call")[1];
    expect(echo?.success).toBe(true);
  }, 120_000);

  it("an ask-override tool answered 'always' is asked again on its next call", async () => {
    const { asked } = await chatAnsweringAlways(
      { approval: "never", mcpServers: { every: every({ approval: { echo: "ask" } }) } } as CapgateConfig,
      [
        act("capability_call", { tool: "every/echo", arguments: { message: "one" } }),
        act("capability_call", { tool: "every/echo", arguments: { message: "two" } }),
      ],
    );
    expect(asked).toEqual([
      { tool: "every/echo", grantable: false },
      { tool: "every/echo", grantable: false },
    ]);
  }, 120_000);
});
