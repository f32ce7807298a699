import { createScriptedModel } from "@capgate/models";
import { describe, expect, it } from "vitest";
import { createChat } from "./chat.js";
import type { RunEvent } from "./events.js";
import { act, makeEnv } from "./test-support/env.js";

describe("createChat", () => {
  it("answers across turns and keeps loaded capabilities between them", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_load", { name: "clock" }),
      act("capability_call", { tool: "clock.now", arguments: {} }),
      act("finish", { summary: "It is 1970-01-01." }),
      act("capability_call", { tool: "clock.now", arguments: {} }),
      act("finish", { summary: "Still 1970." }),
    ]);
    const chat = createChat(env, { model, workspace });
    const first = await chat.send("What time is it?");
    expect(first).toMatchObject({ reply: "It is 1970-01-01.", outcome: "answered" });
    expect(chat.loaded()).toContain("clock");
    const second = await chat.send("And now?");
    expect(second.reply).toBe("Still 1970.");
    // The earlier turn is part of the conversation the model sees.
    const lastCall = model.calls.at(-1);
    expect(lastCall?.messages.map((m) => m.content).join("\n")).toContain("What time is it?");
    await chat.close();
  });

  it("setProfile clears and preloads: after Coder → Researcher, a Coder tool is not loaded", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_call", { tool: "notes.write", arguments: { path: "a.txt", text: "x" } }),
      act("verify", { claim: "written", command: "test -f a.txt" }),
      act("finish", { summary: "written" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "b.txt", text: "y" } }),
      act("finish", { summary: "could not" }),
    ]);
    const events: RunEvent[] = [];
    const chat = createChat(env, { model, workspace, profile: "Coder", onEvent: (e) => events.push(e) });
    expect(chat.loaded()).toEqual(["notes"]);
    expect((await chat.send("write a")).outcome).toBe("answered");
    chat.setProfile("Researcher");
    expect(chat.loaded()).toEqual(["clock"]);
    const changed = events.find((e) => e.type === "profile_changed");
    expect(changed?.type === "profile_changed" && [changed.from, changed.to, changed.reason]).toEqual([
      "Coder",
      "Researcher",
      "requested",
    ]);
    await chat.send("write b");
    const denied = events.filter((e) => e.type === "tool_result").at(-1);
    expect(denied?.type === "tool_result" && denied.rejected).toBe("unknown_tool");
    expect(denied?.type === "tool_result" && denied.summary).toContain("not loaded");
    await chat.close();
    expect(events.at(-1)?.type).toBe("run_ended");
  });

  it("applies the verification gate only to turns that changed something", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("finish", { summary: "hello" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "c.txt", text: "z" } }),
      act("finish", { summary: "done" }),
      act("verify", { claim: "c exists", command: "test -f c.txt" }),
      act("finish", { summary: "done and verified" }),
    ]);
    const chat = createChat(env, { model, workspace, profile: "Coder" });
    expect((await chat.send("hi")).reply).toBe("hello");
    expect((await chat.send("write c")).reply).toBe("done and verified");
    await chat.close();
  });

  it("stops a turn at its step limit and reports it", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel(Array.from({ length: 3 }, () => act("goal_update", { progress: "…" })));
    const chat = createChat(env, { model, workspace, maxStepsPerTurn: 2 });
    expect((await chat.send("loop")).outcome).toBe("step_limit");
    await chat.close();
  });
});
