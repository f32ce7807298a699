import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { CapabilitySet, defineCapability } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { act, makeEnv } from "./test-support/env.js";

// chain.all stands in for script.run: a tool that calls other tools through ctx.services.calls.
const chainCall = (calls: unknown[]) => act("capability_call", { tool: "chain.all", arguments: { calls } });

function nested(events: RunEvent[]) {
  return events.filter(
    (e): e is Extract<RunEvent, { type: "tool_called" | "tool_result" }> =>
      (e.type === "tool_called" || e.type === "tool_result") && e.parent !== undefined,
  );
}

describe("nested calls in a session (the service behind script.run)", () => {
  it("go through the gate and are traced as nested in the enclosing call, which the verification gate counts", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_load", { name: "chain" }),
      chainCall([
        { tool: "notes.write", arguments: { path: "a.txt", text: "hi" } },
        { tool: "notes.read", arguments: { path: "a.txt" } },
        { tool: "notes.read", arguments: { pth: "a.txt" } },
        { tool: "clock.now" },
      ]),
      // The nested write changed the workspace: finish needs a verify after it.
      act("finish", { summary: "done" }),
      act("verify", { claim: "a.txt exists", command: "test -f a.txt" }),
      act("finish", { summary: "done" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "notes",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("finished");
    expect(seen.some((e) => e.type === "finish_refused")).toBe(true);
    const step = (seen.find((e) => e.type === "tool_called" && e.tool === "chain.all") as { step: number })
      .step;
    const events = nested(seen).map((e) => [
      e.type,
      e.tool,
      e.parent,
      ...(e.type === "tool_result" ? [e.success, e.rejected ?? null] : []),
    ]);
    const parent = (index: number) => ({ step, tool: "chain.all", index });
    expect(events).toEqual([
      ["tool_called", "notes.write", parent(1)],
      ["tool_result", "notes.write", parent(1), true, null],
      ["tool_called", "notes.read", parent(2)],
      ["tool_result", "notes.read", parent(2), true, null],
      ["tool_called", "notes.read", parent(3)],
      ["tool_result", "notes.read", parent(3), false, "invalid_arguments"],
      ["tool_called", "clock.now", parent(4)],
      ["tool_result", "clock.now", parent(4), false, "unknown_tool"],
    ]);
    // Nested events sit between the enclosing call's tool_called and tool_result.
    const order = seen.map((e) =>
      e.type === "tool_called" || e.type === "tool_result" ? `${e.type}:${e.tool}` : e.type,
    );
    expect(order.indexOf("tool_called:chain.all")).toBeLessThan(order.indexOf("tool_called:notes.write"));
    expect(order.indexOf("tool_result:clock.now")).toBeLessThan(order.indexOf("tool_result:chain.all"));
    const reply = seen.find((e) => e.type === "tool_result" && e.tool === "chain.all") as { summary: string };
    expect(JSON.parse(reply.summary)).toEqual([
      { tool: "notes.write", ok: true, summary: "wrote 2 chars to a.txt" },
      { tool: "notes.read", ok: true, summary: "hi" },
      expect.objectContaining({ tool: "notes.read", ok: false, code: "invalid_arguments", property: "pth" }),
      expect.objectContaining({
        tool: "clock.now",
        ok: false,
        code: "unknown_tool",
        summary: `Tool 'clock.now' is not loaded: capability 'clock' is not loaded; call capability_load {"name":"clock"} first.`,
      }),
    ]);
  });

  it("are recorded with long strings cut, the call itself getting them whole", async () => {
    const { env, workspace } = makeEnv();
    const big = "x".repeat(100_000);
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_load", { name: "chain" }),
      chainCall([{ tool: "notes.write", arguments: { text: big, path: "big.txt" } }]),
      act("mark_impossible", { reason: "shown" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "notes",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const written = seen.find((e) => e.type === "tool_result" && e.tool === "notes.write") as {
      summary: string;
    };
    expect(written.summary).toBe("wrote 100000 chars to big.txt");
    const called = nested(seen).find((e) => e.type === "tool_called" && e.tool === "notes.write") as {
      arguments: { text: string; path: string };
    };
    expect(called.arguments.path).toBe("big.txt");
    expect(called.arguments.text).toBe(`${"x".repeat(2048)}… (97952 more characters, not recorded)`);
    // The enclosing call's own record is cut the same way.
    const chain = seen.find((e) => e.type === "tool_called" && e.tool === "chain.all");
    expect(JSON.stringify(chain).length).toBeLessThan(10_000);
  });

  it("count against the run's tool-call budget", async () => {
    const { env, workspace } = makeEnv({ maxToolCalls: 3 });
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_load", { name: "chain" }),
      chainCall([
        { tool: "notes.write", arguments: { path: "a.txt", text: "1" } },
        { tool: "notes.write", arguments: { path: "b.txt", text: "2" } },
        { tool: "notes.write", arguments: { path: "c.txt", text: "3" } },
      ]),
      act("capability_call", { tool: "notes.read", arguments: { path: "a.txt" } }),
      act("mark_impossible", { reason: "budget" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "notes",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const reply = seen.find((e) => e.type === "tool_result" && e.tool === "chain.all") as { summary: string };
    expect(JSON.parse(reply.summary).map((c: { ok: boolean; code?: string }) => c.code ?? c.ok)).toEqual([
      true,
      true,
      "budget_exhausted",
    ]);
    const direct = seen.find((e) => e.type === "tool_result" && e.tool === "notes.read") as {
      rejected?: string;
      summary: string;
    };
    expect(direct.rejected).toBe("budget_exhausted");
    expect(direct.summary).toBe(
      "budget_exhausted: notes.read was not called: this run has used its 3 tool calls (a script's calls count too).",
    );
  });

  it("ask the operator like direct calls, and a nested call cannot call tools itself", async () => {
    const asked: string[] = [];
    const { env, workspace } = makeEnv({
      policy: { approval: "on-risk" },
      approve: async (request) => {
        asked.push(request.tool);
        return request.tool !== "notes.write" || request.arguments.path !== "no.txt";
      },
    });
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_load", { name: "chain" }),
      chainCall([
        { tool: "notes.write", arguments: { path: "yes.txt", text: "1" } },
        { tool: "notes.write", arguments: { path: "no.txt", text: "2" } },
        { tool: "chain.all", arguments: { calls: [{ tool: "notes.read", arguments: { path: "yes.txt" } }] } },
      ]),
      act("mark_impossible", { reason: "done" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "notes",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(asked).toEqual(["notes.write", "notes.write"]);
    expect(
      seen
        .filter((e) => e.type === "approval_resolved")
        .map((e) => e.type === "approval_resolved" && e.approved),
    ).toEqual([true, false]);
    const reply = seen.find((e) => e.type === "tool_result" && e.tool === "chain.all" && !e.parent) as {
      summary: string;
    };
    const out = JSON.parse(reply.summary) as Array<{ ok: boolean; code?: string; summary: string }>;
    expect(out[0]?.ok).toBe(true);
    expect(out[1]).toMatchObject({
      ok: false,
      code: "policy_denied",
      summary: "The operator denied notes.write; it was not run.",
    });
    // The inner chain ran (depth 1) but its own call was refused (depth 2).
    expect(JSON.parse(out[2]?.summary ?? "[]")).toEqual([
      expect.objectContaining({
        ok: false,
        code: "policy_denied",
        summary: expect.stringMatching(/cannot call tools itself/),
      }),
    ]);
  });
});

// A tool a script calls starts host programs (git, an MCP server) just as a direct call's
// does, so it gets the same PATH: no entry inside the workspace, which the model writes.
describe("a nested call's environment", () => {
  it("has no PATH entry the model can write, as a direct call's has not", async () => {
    const { env, workspace } = makeEnv();
    const bin = join(workspace, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    env.env = { ...env.env, PATH: `${bin}:/usr/bin:/bin` };
    const probe = defineCapability({
      manifest: {
        name: "probe",
        version: "0.1.0",
        description: "Say which PATH a tool sees.",
        profileFit: ["Orchestrator"],
        tools: [
          {
            name: "probe.path",
            description: "The PATH a tool sees.",
            risk: "read",
            inputSchema: { type: "object", additionalProperties: false, properties: {} },
          },
        ],
      } as const,
      handlers: { path: async (_args, ctx) => ({ success: true, summary: ctx.env.PATH ?? "" }) },
    });
    env.capabilities = new CapabilitySet([...env.capabilities.list(), probe]);
    env.registry.register(probe.manifest);
    const model = createScriptedModel([
      act("capability_load", { name: "probe" }),
      act("capability_load", { name: "chain" }),
      act("capability_call", { tool: "probe.path", arguments: {} }),
      chainCall([{ tool: "probe.path" }]),
      act("finish", { summary: "done" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "path",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const paths = seen
      .filter((e): e is Extract<RunEvent, { type: "tool_result" }> => e.type === "tool_result")
      .filter((e) => e.tool === "probe.path")
      .map((e) => [e.parent === undefined ? "direct" : "nested", e.summary]);
    expect(paths).toEqual([
      ["direct", "/usr/bin:/bin"],
      ["nested", "/usr/bin:/bin"],
    ]);
  });
});
