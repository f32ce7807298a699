// What a run starts ends with the run: background processes live in the run's own resource
// scope, closed before run_ended, whatever the processes did to get away (setsid, a double
// fork). Checked in the host's process table by a unique argument, after the end.
import { createScriptedModel } from "@capgate/models";
import { Registry } from "@capgate/registry";
import { leaveBehind, processesWith, uniqueSleep } from "@capgate/test-system-parts";
import {
  BACKGROUND_PROCESSES_KEY,
  backgroundProcesses,
  CapabilitySet,
  defineCapability,
  sandboxTarget,
} from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { createChat } from "./chat.js";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { act, makeEnv, testProfiles } from "./test-support/env.js";

// A capability of the test's own (the loop may not depend on the shell capability): starts a
// command line in the background, the way shell.start does, and returns once the processes
// it is told to expect are running.
const daemon = defineCapability({
  manifest: {
    name: "daemon",
    version: "0.1.0",
    description: "Start a command line in the background.",
    profileFit: ["Coder"],
    tools: [
      {
        name: "daemon.start",
        description: "Start a command line in the background.",
        risk: "exec",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { command: { type: "string" }, marker: { type: "string" } },
          required: ["command", "marker"],
        },
      },
    ],
  },
  handlers: {
    start: async (args, ctx) => {
      const bg = await backgroundProcesses(ctx);
      const info = await bg.startShell({
        command: args.command,
        check: async () => ({ decision: "allow" }),
        cwd: ctx.workspace,
        env: ctx.env,
        ...(ctx.policy.shell ? { policy: ctx.policy.shell } : {}),
        sandbox: sandboxTarget(ctx),
      });
      while (processesWith(args.marker).length < 3) await new Promise((r) => setTimeout(r, 20));
      return { success: true, summary: `started ${info.id}` };
    },
  },
});

function envWithDaemon() {
  const made = makeEnv();
  const capabilities = new CapabilitySet([...made.env.capabilities.list(), daemon]);
  const registry = new Registry();
  for (const c of capabilities.list()) registry.register(c.manifest);
  made.env.capabilities = capabilities;
  made.env.registry = registry;
  made.env.profiles = { ...testProfiles, Coder: { ...testProfiles.Coder!, preload: ["daemon"] } };
  return made;
}

describe("a run's processes end with the run", () => {
  it("a goal run: gone by run_ended, setsid and double-forked ones included", async () => {
    const { env, workspace } = envWithDaemon();
    const m = uniqueSleep();
    const model = createScriptedModel([
      act("capability_call", {
        tool: "daemon.start",
        arguments: { command: `${leaveBehind(m)}; wait`, marker: m },
      }),
      act("mark_impossible", { reason: "stopping here" }),
    ]);
    let atEnd: number | undefined;
    const result = await runGoal(env, {
      goal: "start a server",
      profile: "Coder",
      model,
      workspace,
      onEvent: (e: RunEvent) => {
        if (e.type === "run_ended") atEnd = processesWith(m).length;
      },
    });
    expect(result.outcome).toBe("impossible");
    expect(atEnd).toBe(0);
    expect(processesWith(m)).toEqual([]);
    // The host's own scope holds nothing of the run's.
    expect(env.resources.peek(BACKGROUND_PROCESSES_KEY)).toBeUndefined();
  }, 60_000);

  it("an aborted goal run: gone by run_ended", async () => {
    const { env, workspace } = envWithDaemon();
    const m = uniqueSleep();
    const controller = new AbortController();
    const model = createScriptedModel([
      act("capability_call", {
        tool: "daemon.start",
        arguments: { command: `${leaveBehind(m)}; wait`, marker: m },
      }),
      act("mark_impossible", { reason: "never reached" }),
    ]);
    const result = await runGoal(env, {
      goal: "start a server",
      profile: "Coder",
      model,
      workspace,
      signal: controller.signal,
      onEvent: (e: RunEvent) => {
        if (e.type === "tool_result") controller.abort();
      },
    });
    expect(result.outcome).toBe("aborted");
    expect(processesWith(m)).toEqual([]);
  }, 60_000);

  it("a chat: gone once it is closed, and kept between its turns", async () => {
    const { env, workspace } = envWithDaemon();
    const m = uniqueSleep();
    const model = createScriptedModel([
      act("capability_call", {
        tool: "daemon.start",
        arguments: { command: `${leaveBehind(m)}; wait`, marker: m },
      }),
      act("verify", { claim: "started", command: "true" }),
      act("finish", { summary: "started" }),
    ]);
    const chat = createChat(env, { model, workspace, profile: "Coder" });
    expect((await chat.send("start a server")).outcome).toBe("answered");
    expect(processesWith(m)).toHaveLength(3);
    await chat.close();
    expect(processesWith(m)).toEqual([]);
  }, 60_000);
});
