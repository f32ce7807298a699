import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { topLevelToolNames } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { buildContextPacket } from "./packet.js";
import { exposedSurface, exposedToolName } from "./surface.js";
import { act, makeEnv, notes } from "./test-support/env.js";

describe("exposedToolName", () => {
  it("gives every tool a provider-safe name and never the same one twice", () => {
    const taken = new Set<string>(["finish"]);
    expect(exposedToolName("fs.read", taken)).toBe("fs_read");
    expect(exposedToolName("memory/read_graph", taken)).toBe("memory__read_graph");
    expect(exposedToolName("hostile/other/thing", taken)).toBe("hostile__other__thing");
    expect(exposedToolName("srv/get weather", taken)).toBe("srv__get_weather");
    // A clash (here with a control tool) gets a suffix.
    expect(exposedToolName("finish", taken)).toBe("finish_2");
    const long = `srv/${"x".repeat(100)}`;
    const a = exposedToolName(long, taken);
    expect(a).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(exposedToolName(`srv/${"x".repeat(99)}y`, taken)).not.toBe(a);
  });
});

describe("exposedSurface", () => {
  it("derives the parser's names, the native tools and the listing from one map", () => {
    const surface = exposedSurface([notes.manifest]);
    const names = Object.keys(surface.schemas);
    expect(names).toEqual([
      "goal_update",
      "memory_search",
      "verify",
      "finish",
      "mark_impossible",
      "notes_read",
      "notes_write",
    ]);
    expect(surface.tools.map((t) => t.name)).toEqual(names);
    for (const name of names) expect(surface.listing).toContain(`- ${name}(`);
    expect(surface.listing).toContain("notes_write(path: string, text: string) — Write a text file");
    expect(surface.targets.get("notes_write")).toBe("notes.write");
    expect(surface.targets.has("finish")).toBe(false);
    for (const gone of ["capability_search", "capability_load", "capability_call"])
      expect(names).not.toContain(gone);
  });

  it("keeps a tool whose schema does not compile callable, judged where gate mode judges it", () => {
    const broken = {
      ...notes.manifest,
      name: "broken",
      tools: [{ name: "broken.go", description: "x", inputSchema: { type: "object", minProperties: "two" } }],
    };
    const surface = exposedSurface([broken as never]);
    expect(surface.schemas.broken_go).toEqual({ type: "object" });
  });
});

describe("buildContextPacket in exposed mode", () => {
  it("lists the tools instead of the eight, outside the character budget", () => {
    const surface = exposedSurface([notes.manifest]);
    const steps = Array.from({ length: 6 }, (_, i) => ({ action: `{"n":${i}}`, result: "r".repeat(300) }));
    const gate = buildContextPacket({
      promptDelta: "",
      loadedSignatures: [],
      goal: "g",
      steps,
      charBudget: 4000,
    });
    const listing = `${surface.listing}\n${"- padding\n".repeat(300)}`;
    const exposed = buildContextPacket({
      promptDelta: "",
      loadedSignatures: [],
      goal: "g",
      steps,
      charBudget: 4000,
      exposedTools: listing,
    });
    expect(exposed.system).toContain("notes_write(path: string, text: string)");
    expect(exposed.system).not.toContain("capability_search");
    // The listing is far bigger than the budget, yet the steps keep the room they have in gate mode.
    expect(exposed.droppedSteps).toBe(gate.droppedSteps);
  });
});

describe("runGoal with surface: exposed", () => {
  it("offers every registered tool directly, calls it through the executor, and keeps finish's verify rule", async () => {
    const { env, workspace, stateDir } = makeEnv();
    const model = createScriptedModel([
      act("capability_search", { query: "notes" }),
      act("notes.write", { path: "a.txt", text: "hi" }),
      act("notes_write", { path: "a.txt", text: "hello" }),
      act("finish", { summary: "done" }),
      act("verify", { claim: "written", command: "grep -q hello a.txt" }),
      act("finish", { summary: "done" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "write hello to a.txt",
      profile: "Orchestrator",
      model,
      workspace,
      surface: "exposed",
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("finished");
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("hello");
    const system = model.calls[0]?.system ?? "";
    for (const m of env.registry.list())
      for (const t of m.tools) expect(system).toContain(`- ${exposedToolName(t.name, new Set())}(`);
    expect(system).not.toContain("capability_search");
    const rejected = seen.filter((e) => e.type === "action_rejected");
    expect(rejected.map((e) => e.type === "action_rejected" && e.code)).toEqual([
      "unknown_tool",
      "unknown_tool",
    ]);
    // A dotted name gets the offered name back, not advice to use capability_call.
    const dotted = rejected[1];
    expect(dotted?.type === "action_rejected" && dotted.message).toContain("Did you mean `notes_write`?");
    expect(seen.some((e) => e.type === "finish_refused")).toBe(true);
    const called = seen.find((e) => e.type === "tool_called");
    expect(called?.type === "tool_called" && called.tool).toBe("notes.write");
    expect(readFileSync(join(stateDir, "runs", `${r.runId}.jsonl`), "utf8")).toContain(
      '"tool":"notes.write"',
    );
  });

  it("sends the exposed tools natively when asked, and counts their characters in model_request", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([act("mark_impossible", { reason: "test" })]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "nothing",
      profile: "Orchestrator",
      model,
      workspace,
      surface: "exposed",
      nativeTools: true,
      onEvent: (e) => seen.push(e),
    });
    const sent = model.calls[0]?.tools ?? [];
    expect(sent.map((t) => t.name)).toContain("notes_write");
    expect(sent.map((t) => t.name)).not.toContain("capability_search");
    const request = seen.find((e) => e.type === "model_request");
    expect(request?.type === "model_request" && request.toolsChars).toBe(JSON.stringify(sent).length);
  });

  it("leaves the default unchanged: the eight tools, and no toolsChars without native tools", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([act("mark_impossible", { reason: "test" })]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "nothing",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const system = model.calls[0]?.system ?? "";
    for (const name of topLevelToolNames()) expect(system).toContain(`- ${name}(`);
    expect(system).not.toContain("notes_write");
    const request = seen.find((e) => e.type === "model_request");
    expect(request?.type === "model_request" && "toolsChars" in request).toBe(false);
  });
});
