import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { shellForTests } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { act, makeEnv } from "./test-support/env.js";

function types(events: RunEvent[]): string[] {
  return events.map((e) => e.type);
}

function traceOf(stateDir: string, runId: string): RunEvent[] {
  return readFileSync(join(stateDir, "runs", `${runId}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as RunEvent);
}

describe("runGoal", () => {
  it("runs search → load → call → refused finish → verify → finish, and records it all", async () => {
    const { env, workspace, stateDir } = makeEnv();
    const model = createScriptedModel([
      act("capability_search", { query: "write text files" }),
      act("capability_load", { name: "notes" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "out/hello.txt", text: "hello" } }),
      act("finish", { summary: "wrote hello" }),
      act("verify", { claim: "the file exists", command: "test -f out/hello.txt && cat out/hello.txt" }),
      act("finish", { summary: "wrote hello", evidence: "verify passed" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "Write hello to a note",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("finished");
    expect(readFileSync(join(workspace, "out/hello.txt"), "utf8")).toBe("hello");
    const t = types(seen);
    expect(t[0]).toBe("run_started");
    expect(t.at(-1)).toBe("run_ended");
    for (const type of [
      "capability_searched",
      "capability_loaded",
      "tool_called",
      "tool_result",
      "finish_refused",
      "verified",
      "finished",
    ]) {
      expect(t).toContain(type);
    }
    const searched = seen.find((e) => e.type === "capability_searched");
    expect(searched?.type === "capability_searched" && searched.hits[0]?.capability).toBe("notes");
    // The search reply the model read leads with the best tool's signature.
    const reply = JSON.stringify(model.calls[1]?.messages ?? []);
    expect(reply).toMatch(/Best tools for \\"write text files\\":\\n {2}notes\.write\(/);
    const verified = seen.find((e) => e.type === "verified");
    expect(verified?.type === "verified" && verified.passed && verified.outputTail).toContain("hello");
    // The trace on disk is the same stream, in order.
    const trace = traceOf(stateDir, r.runId);
    expect(types(trace)).toEqual(t);
    expect(trace.map((e) => e.seq)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.every((e) => e.runId === r.runId && typeof e.time === "string")).toBe(true);
  });

  it("emits profile_changed from Orchestrator before the first model call when inference picks another profile", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([act("mark_impossible", { reason: "nothing to do" })]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "Write a function that parses dates",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("impossible");
    const t = types(seen);
    expect(t.slice(0, 3)).toEqual(["run_started", "profile_changed", "model_request"]);
    const changed = seen[1];
    expect(changed?.type === "profile_changed" && [changed.from, changed.to]).toEqual([
      "Orchestrator",
      "Coder",
    ]);
    expect(changed?.type === "profile_changed" && changed.loaded).toEqual(["notes"]);
  });

  it("rejects prose, empty, fenced-twice, oversized and unknown-tool replies without executing anything", async () => {
    const { env, workspace } = makeEnv();
    const fenced =
      "```json\n" +
      act("finish", { summary: "a" }) +
      "\n```\n```json\n" +
      act("finish", { summary: "b" }) +
      "\n```";
    const model = createScriptedModel([
      "I will now write the file.",
      "",
      fenced,
      act("finish", { summary: "x".repeat(2 * 1024 * 1024) }),
      act("notes.write", { path: "x", text: "y" }),
      act("mark_impossible", { reason: "stop" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "g",
      profile: "Coder",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const rejected = seen.filter((e) => e.type === "action_rejected");
    expect(rejected.map((e) => e.type === "action_rejected" && e.code)).toEqual([
      "invalid_json",
      "invalid_json",
      "trailing_text",
      "too_large",
      "unknown_tool",
    ]);
    expect(r.rejections).toBe(5);
    expect(types(seen)).not.toContain("tool_called");
    expect(existsSync(join(workspace, "x"))).toBe(false);
    expect(r.outcome).toBe("impossible");
  });

  it("feeds the rejection back to the model", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_search", { q: "files" }),
      act("mark_impossible", { reason: "r" }),
    ]);
    await runGoal(env, { goal: "g", profile: "Orchestrator", model, workspace });
    const second = model.calls[1];
    const last = second?.messages.at(-1)?.content ?? "";
    expect(last).toContain("invalid_arguments");
    expect(last).toContain("did you mean `query`?");
  });

  it("refuses finish until a verify passed after the last write", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("verify", { claim: "ok", command: "true" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "a.txt", text: "1" } }),
      act("finish", { summary: "done" }),
      act("verify", { claim: "fails", command: "exit 3" }),
      act("finish", { summary: "done" }),
      act("verify", { claim: "ok", command: "test -f a.txt" }),
      act("finish", { summary: "done" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "g",
      profile: "Coder",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("finished");
    const refused = seen.filter((e) => e.type === "finish_refused");
    expect(refused).toHaveLength(2);
    expect(refused[0]?.type === "finish_refused" && refused[0].reason).toContain(
      "older than your last change",
    );
    const failed = seen.find((e) => e.type === "verified" && !e.passed);
    expect(failed?.type === "verified" && failed.exitCode).toBe(3);
  });

  it("refuses finish when no verify has passed at all", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("finish", { summary: "done" }),
      act("mark_impossible", { reason: "no" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(types(seen)).toContain("finish_refused");
    expect(types(seen)).not.toContain("finished");
  });

  it("verify runs through the shell policy: a GUI opener is refused and never runs", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("verify", { claim: "page opens", command: "true && xdg-open https://example.com" }),
      act("mark_impossible", { reason: "no" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const v = seen.find((e) => e.type === "verified");
    expect(v?.type === "verified" && v.passed).toBe(false);
    expect(v?.type === "verified" && v.denied).toContain("browser_panel.open");
  });

  it("verify asks the approver for a configured ask rule, as a tool call would", async () => {
    const asked: string[] = [];
    const { env, workspace } = makeEnv({
      policy: { shell: { ...shellForTests(), ask: [{ prefix: ["true"], reason: "true needs a nod" }] } },
      approve: async (req) => {
        asked.push(`${req.tool}: ${req.description}`);
        return asked.length === 1;
      },
    });
    const model = createScriptedModel([
      act("verify", { claim: "approved", command: "true" }),
      act("verify", { claim: "refused", command: "true" }),
      act("mark_impossible", { reason: "done" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const verified = seen.filter((e) => e.type === "verified");
    expect(verified.map((e) => e.type === "verified" && e.passed)).toEqual([true, false]);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toContain("true needs a nod");
  });

  it("is native-only by default: an unknown tool is reported as such, not sent to MCP", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_call", { tool: "notes.wrte", arguments: {} }),
      act("capability_call", { tool: "notes.read", arguments: { path: "a" } }),
      act("mark_impossible", { reason: "no" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const results = seen.filter((e) => e.type === "tool_result");
    expect(results[0]?.type === "tool_result" && results[0].rejected).toBe("unknown_tool");
    expect(results[0]?.type === "tool_result" && results[0].summary).toContain("notes.write");
    expect(results[1]?.type === "tool_result" && results[1].summary).toContain(
      'call capability_load {"name":"notes"}',
    );
  });

  it("ends at the step limit", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel(
      Array.from({ length: 5 }, () => act("goal_update", { progress: "thinking" })),
    );
    const r = await runGoal(env, { goal: "g", profile: "Orchestrator", model, workspace, maxSteps: 3 });
    expect(r.outcome).toBe("step_limit");
    expect(r.steps).toBe(3);
  });

  it("awaits beforeEnd before emitting run_ended; its error becomes the run's error, the outcome stands", async () => {
    const { env, workspace } = makeEnv();
    const seen: string[] = [];
    const r = await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model: createScriptedModel([act("goal_update", { progress: "p" })]),
      workspace,
      maxSteps: 1,
      onEvent: (e) => seen.push(e.type),
      beforeEnd: async ({ outcome, steps }) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen.push(`beforeEnd:${outcome}:${steps}`);
      },
    });
    expect(seen.slice(-2)).toEqual(["beforeEnd:step_limit:1", "run_ended"]);
    expect(r.outcome).toBe("step_limit");

    const failed: RunEvent[] = [];
    const f = await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model: createScriptedModel([act("goal_update", { progress: "p" })]),
      workspace,
      maxSteps: 1,
      onEvent: (e) => failed.push(e),
      beforeEnd: async () => {
        throw new Error("could not publish");
      },
    });
    expect(f.outcome).toBe("step_limit");
    const end = failed.at(-1);
    expect(end?.type === "run_ended" && end.error).toBe("could not publish");
  });

  it("ends with outcome error and the reason when the model fails", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([act("goal_update", { progress: "p" })]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("error");
    const ended = seen.at(-1);
    expect(ended?.type === "run_ended" && ended.error).toMatch(/model error: .*no reply 2/);
  });

  it("aborts cleanly, even inside a tool call", async () => {
    const { env, workspace } = makeEnv();
    const model = createScriptedModel([
      act("capability_load", { name: "clock" }),
      act("capability_call", { tool: "clock.sleep", arguments: { ms: 60_000 } }),
      act("mark_impossible", { reason: "never reached" }),
    ]);
    const controller = new AbortController();
    const seen: RunEvent[] = [];
    const running = runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      signal: controller.signal,
      onEvent: (e) => {
        seen.push(e);
        if (e.type === "tool_called") setTimeout(() => controller.abort(), 20);
      },
    });
    const r = await running;
    expect(r.outcome).toBe("aborted");
    const ended = seen.at(-1);
    expect(ended?.type === "run_ended" && ended.outcome).toBe("aborted");
  });

  it("stores goal notes and the run summary in memory, searchable with memory_search", async () => {
    const { env, workspace } = makeEnv();
    const first = createScriptedModel([
      act("goal_update", { note: "the staging database is called pelican" }),
      act("mark_impossible", { reason: "just testing" }),
    ]);
    await runGoal(env, {
      goal: "find the staging database",
      profile: "Orchestrator",
      model: first,
      workspace,
    });
    const second = createScriptedModel([
      act("memory_search", { query: "staging database" }),
      act("mark_impossible", { reason: "r" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model: second,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    const searched = seen.find((e) => e.type === "memory_searched");
    const texts = searched?.type === "memory_searched" ? searched.hits.map((h) => h.text).join("\n") : "";
    expect(texts).toContain("pelican");
    expect(texts).toContain("find the staging database");
  });

  it("asks for approval per risk and records approval events", async () => {
    const asked: string[] = [];
    const { env, workspace } = makeEnv({
      policy: { approval: "on-risk", shell: shellForTests() },
      approve: async (req) => {
        asked.push(`${req.tool}:${req.approvalId.length > 0}`);
        return req.tool !== "notes.write";
      },
    });
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "a", text: "b" } }),
      act("capability_call", { tool: "notes.read", arguments: { path: "a" } }),
      act("mark_impossible", { reason: "r" }),
    ]);
    const seen: RunEvent[] = [];
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(asked).toEqual(["notes.write:true"]);
    expect(types(seen)).toEqual(expect.arrayContaining(["approval_requested", "approval_resolved"]));
    const denied = seen.find((e) => e.type === "tool_result" && e.tool === "notes.write");
    expect(denied?.type === "tool_result" && denied.rejected).toBe("policy_denied");
    expect(existsSync(join(workspace, "a"))).toBe(false);
  });

  it("a hook that announces pending gets approval_requested emitted only once it says the request is answerable", async () => {
    // What a registry in another process does (PostgreSQL): the request is answerable only
    // after its write, so a client reacting to the event at once must not see it earlier.
    const order: string[] = [];
    const approve = Object.assign(
      async (req: { onPending?: () => void }) => {
        order.push("hook called");
        await new Promise((r) => setTimeout(r, 20));
        order.push("stored");
        req.onPending?.();
        return true;
      },
      { announcesPending: true },
    );
    const { env, workspace } = makeEnv({ policy: { approval: "on-risk", shell: shellForTests() }, approve });
    const model = createScriptedModel([
      act("capability_load", { name: "notes" }),
      act("capability_call", { tool: "notes.write", arguments: { path: "a", text: "b" } }),
      act("mark_impossible", { reason: "r" }),
    ]);
    await runGoal(env, {
      goal: "g",
      profile: "Orchestrator",
      model,
      workspace,
      onEvent: (e) => {
        if (e.type === "approval_requested" || e.type === "approval_resolved") order.push(e.type);
      },
    });
    expect(order).toEqual(["hook called", "stored", "approval_requested", "approval_resolved"]);
    expect(existsSync(join(workspace, "a"))).toBe(true);

    // A hook that does not announce: the event comes first, as before.
    const plain: string[] = [];
    const { env: env2, workspace: ws2 } = makeEnv({
      policy: { approval: "on-risk", shell: shellForTests() },
      approve: async () => {
        plain.push("hook called");
        return true;
      },
    });
    await runGoal(env2, {
      goal: "g",
      profile: "Orchestrator",
      model: createScriptedModel([
        act("capability_load", { name: "notes" }),
        act("capability_call", { tool: "notes.write", arguments: { path: "a", text: "b" } }),
        act("mark_impossible", { reason: "r" }),
      ]),
      workspace: ws2,
      onEvent: (e) => {
        if (e.type === "approval_requested" || e.type === "approval_resolved") plain.push(e.type);
      },
    });
    expect(plain).toEqual(["approval_requested", "hook called", "approval_resolved"]);
  });

  it("spawns workers as child runs with their own profile and run id, linked to the parent", async () => {
    const { env, workspace, stateDir } = makeEnv({
      workerModel: () =>
        createScriptedModel([
          act("capability_call", { tool: "notes.write", arguments: { path: "w.txt", text: "from worker" } }),
          act("verify", { claim: "written", command: "test -f w.txt" }),
          act("finish", { summary: "worker wrote w.txt" }),
        ]),
    });
    const parent = createScriptedModel([
      act("capability_load", { name: "delegate" }),
      act("capability_call", { tool: "delegate.run", arguments: { goal: "write w.txt", profile: "Coder" } }),
      act("verify", { claim: "the worker wrote it", command: "grep -q 'from worker' w.txt" }),
      act("finish", { summary: "delegated" }),
    ]);
    const seen: RunEvent[] = [];
    const r = await runGoal(env, {
      goal: "coordinate",
      profile: "Orchestrator",
      model: parent,
      workspace,
      onEvent: (e) => seen.push(e),
    });
    expect(r.outcome).toBe("finished");
    const spawned = seen.find((e) => e.type === "worker_spawned");
    expect(spawned?.type === "worker_spawned" && spawned.profile).toBe("Coder");
    const result = seen.find((e) => e.type === "tool_result" && e.tool === "delegate.run");
    expect(result?.type === "tool_result" && result.summary).toContain("finished: worker wrote w.txt");
    const childRunId = spawned?.type === "worker_spawned" ? spawned.childRunId : "";
    const child = traceOf(stateDir, childRunId);
    expect(child[0]?.type === "run_started" && child[0].parentRunId).toBe(r.runId);
    expect(child.at(-1)?.type === "run_ended" && child.at(-1)).toMatchObject({ outcome: "finished" });
  });

  it("workers cannot spawn workers, and the limit is enforced", async () => {
    const { env, workspace } = makeEnv({
      workerLimit: 1,
      workerModel: () =>
        createScriptedModel([
          act("capability_load", { name: "delegate" }),
          act("capability_call", { tool: "delegate.run", arguments: { goal: "nested" } }),
          act("mark_impossible", { reason: "cannot nest" }),
        ]),
    });
    const parent = createScriptedModel([
      act("capability_load", { name: "delegate" }),
      act("capability_call", { tool: "delegate.run", arguments: { goal: "outer", profile: "Orchestrator" } }),
      act("mark_impossible", { reason: "done" }),
    ]);
    const all: RunEvent[] = [];
    env.store.subscribe("*", (e) => all.push(e));
    await runGoal(env, { goal: "g", profile: "Orchestrator", model: parent, workspace });
    const nested = all.find(
      (e) => e.type === "tool_result" && e.tool === "delegate.run" && e.summary.includes("cannot spawn"),
    );
    expect(nested).toBeDefined();
  });
});
