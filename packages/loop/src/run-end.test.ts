import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { CapabilitySet, defineCapability } from "@capgate/tools";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChat } from "./chat.js";
import { EventEmitterForRun, type RunEvent, type RunEventBody } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { newRunId } from "./run-id.js";
import { FileRunStore } from "./run-store.js";
import type { RunStore } from "./run-store-api.js";
import { act, makeEnv, notes } from "./test-support/env.js";

const started: RunEventBody = {
  type: "run_started",
  goal: "g",
  profile: "Coder",
  model: "m",
  workspace: "/w",
  maxSteps: 5,
  mcp: false,
  kind: "goal",
};
const stamp = (runId: string, seq: number, body: Record<string, unknown>) =>
  ({ ...body, runId, seq, time: new Date().toISOString() }) as RunEvent;
const step = (runId: string, seq: number) =>
  stamp(runId, seq, { type: "finish_refused", step: seq, reason: "r" });
const ended = (runId: string, seq: number) =>
  stamp(runId, seq, { type: "run_ended", outcome: "finished", steps: seq, rejections: 0 });

const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(w.message);
beforeAll(() => process.on("warning", onWarning));
afterAll(() => process.off("warning", onWarning));

describe("run_ended is the last event (file store and emitter)", () => {
  it("the store refuses an event after run_ended, naming it, and warns; a second run_ended too; so does another process's store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-end-"));
    const store = new FileRunStore(dir);
    const runId = newRunId();
    store.append(stamp(runId, 1, started));
    store.append(ended(runId, 2));
    expect(() => store.append(step(runId, 3))).toThrow(
      expect.objectContaining({
        code: "event_after_end",
        message: `Refused event 'finish_refused' (seq 3) of run ${runId}: the run already ended with run_ended (seq 2), which must be its last event.`,
      }),
    );
    expect(() => store.append(ended(runId, 3))).toThrow(expect.objectContaining({ code: "event_after_end" }));
    // A store opened later (another process) learns from the trace that the run ended.
    const later = new FileRunStore(dir);
    expect(() => later.append(step(runId, 3))).toThrow(expect.objectContaining({ code: "event_after_end" }));
    expect((await later.events(runId))?.map((e) => e.type)).toEqual(["run_started", "run_ended"]);
    expect(warnings.filter((w) => w.includes(runId))).toHaveLength(3);
  });

  it("appends in any order from two stores on one trace keep at most one run_ended, and it is last (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 12, maxLength: 12 }),
        (before, after, order) => {
          const dir = mkdtempSync(join(tmpdir(), "capgate-end-p-"));
          const stores = [new FileRunStore(dir), new FileRunStore(dir)];
          const runId = newRunId();
          stores[0]!.append(stamp(runId, 1, started));
          const end = before + 2;
          const events = [
            ...Array.from({ length: before }, (_, i) => step(runId, i + 2)),
            ended(runId, end),
            ended(runId, end + 1),
            ...Array.from({ length: after }, (_, i) => step(runId, end + 2 + i)),
          ];
          const shuffled = events
            .map((e, i) => ({ e, key: order[i]?.[0] ?? i, other: order[i]?.[1] ?? false }))
            .sort((x, y) => x.key - y.key);
          for (const { e, other } of shuffled) {
            try {
              stores[other ? 1 : 0]!.append(e);
            } catch (error) {
              expect((error as { code?: string }).code).toBe("event_after_end");
            }
          }
          const { events: stored } = new FileRunStore(dir).read(runId);
          const ends = stored.filter((e) => e.type === "run_ended");
          expect(ends).toHaveLength(1);
          expect(stored.at(-1)).toEqual(ends[0]);
          for (const s of stores) s.close();
        },
      ),
      { numRuns: 200 },
    );
  });

  it("the emitter refuses to emit after run_ended; its listeners never see such an event", () => {
    const seen: string[] = [];
    const emitter = new EventEmitterForRun("r-emit", undefined);
    emitter.subscribe((e) => seen.push(e.type));
    emitter.emit(started);
    emitter.emit({ type: "run_ended", outcome: "finished", steps: 0, rejections: 0 });
    expect(() => emitter.emit({ type: "finish_refused", step: 1, reason: "late" })).toThrow(
      expect.objectContaining({
        code: "event_after_end",
        message: expect.stringContaining("'finish_refused' (seq 3)"),
      }),
    );
    expect(seen).toEqual(["run_started", "run_ended"]);
  });

  it("the file store reads back exactly what was emitted, U+0000 and unpaired surrogates included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-end-c-"));
    const store = new FileRunStore(dir);
    const emitter = new EventEmitterForRun(newRunId(), (e) => store.append(e));
    const emitted = [
      emitter.emit(started),
      emitter.emit({ type: "finished", step: 1, summary: "x\u0000y \uD800 \uE000 😀", evidence: "\uDC00" }),
      emitter.emit({ type: "run_ended", outcome: "finished", steps: 1, rejections: 0 }),
    ];
    expect(await store.events(emitter.runId)).toEqual(emitted);
  });
});

/** A store that refuses the events `refuse` picks, as a database refusing a batch would; the rest go to a file store. */
function refusingStore(dir: string, refuse: (e: RunEvent) => boolean): RunStore {
  const inner = new FileRunStore(dir);
  const failed = new Map<string, Error>();
  return Object.assign(Object.create(inner) as FileRunStore, {
    append(event: RunEvent) {
      if (refuse(event)) {
        const error = new Error(`the store refused event ${event.seq} ('${event.type}')`);
        failed.set(event.runId, error);
        throw error;
      }
      inner.append(event);
    },
    async flush(runId?: string) {
      const error = runId === undefined ? [...failed.values()][0] : failed.get(runId);
      if (error) throw error;
    },
  });
}

describe("a failed append stops the run before its next step", () => {
  it("nothing can be stored (the trace is /dev/full): no action runs, and the run ends with the storage error", async () => {
    const { env, workspace, stateDir } = makeEnv();
    const runId = newRunId();
    mkdirSync(join(stateDir, "runs"), { recursive: true });
    symlinkSync("/dev/full", join(stateDir, "runs", `${runId}.jsonl`));
    const model = createScriptedModel([
      act("capability_call", { tool: "notes.write", arguments: { path: "a.txt", text: "a" } }),
      act("finish", { summary: "done" }),
    ]);
    const r = await runGoal(env, { goal: "write a", profile: "Coder", model, workspace, runId });
    expect(r.outcome).toBe("error");
    expect(r.error).toMatch(/could not be stored .*no space left|ENOSPC/i);
    expect(existsSync(join(workspace, "a.txt"))).toBe(false);
  });

  it("an event of step 1 refused: step 2 never runs, the run ends with a clear error, and the stored trace still ends with run_ended", async () => {
    const { env, workspace, stateDir } = makeEnv();
    env.store = refusingStore(stateDir, (e) => e.type === "tool_result" && e.step === 1);
    const model = createScriptedModel([
      act("capability_call", { tool: "notes.write", arguments: { path: "first.txt", text: "1" } }),
      act("capability_call", { tool: "notes.write", arguments: { path: "second.txt", text: "2" } }),
      act("verify", { claim: "both", command: "true" }),
      act("finish", { summary: "done" }),
    ]);
    const r = await runGoal(env, { goal: "write two files", profile: "Coder", model, workspace });
    expect(existsSync(join(workspace, "first.txt"))).toBe(true);
    expect(existsSync(join(workspace, "second.txt"))).toBe(false);
    expect(r.outcome).toBe("error");
    expect(r.error).toContain("the store refused event");
    expect(r.error).toContain("stopped before its next step");
    const stored = (await new FileRunStore(stateDir).events(r.runId)) ?? [];
    expect(stored.at(-1)).toMatchObject({ type: "run_ended", outcome: "error" });
    expect(stored.filter((e) => e.type === "tool_called")).toHaveLength(1);
  });
});

describe("nothing of a run is emitted after its run_ended", () => {
  it("a handler that outlived its call's timeout and asks for approval once the run is over adds no event to the trace", async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked: (outcome: string) => void = () => undefined;
    const answered = new Promise<string>((resolve) => {
      asked = resolve;
    });
    const slow = defineCapability({
      manifest: {
        name: "slow",
        version: "0.1.0",
        description: "A tool that ignores its deadline and asks for approval late.",
        profileFit: ["Coder"],
        tools: [
          {
            name: "slow.act",
            description: "Act slowly.",
            risk: "read",
            inputSchema: { type: "object", additionalProperties: false, properties: {} },
          },
        ],
      },
      handlers: {
        act: async (_args, ctx) => {
          await released;
          await ctx
            .approve?.(
              { tool: "slow.act", capability: "slow", risk: "exec", arguments: {}, description: "late" },
              ctx.signal,
            )
            .then(
              (ok) => asked(`answered ${ok}`),
              (error: Error) => asked(`refused: ${error.message}`),
            );
          return { success: true, summary: "late" };
        },
      },
    });
    const { env, workspace, stateDir } = makeEnv({
      approve: async () => true,
      capabilities: new CapabilitySet([notes, slow]),
    });
    env.registry.register(slow.manifest);
    env.limits = { ...env.limits, timeoutMs: 50 };
    const model = createScriptedModel([
      act("capability_load", { name: "slow" }),
      act("capability_call", { tool: "slow.act", arguments: {} }),
      act("verify", { claim: "ok", command: "true", timeout_ms: 120_000 }),
      act("finish", { summary: "done", evidence: "verify passed" }),
    ]);
    const r = await runGoal(env, { goal: "act slowly", profile: "Coder", model, workspace });
    expect(r.outcome, r.error).toBe("finished");
    release();
    expect(await answered).toBe("refused: the run has ended");
    const stored = (await new FileRunStore(stateDir).events(r.runId)) ?? [];
    expect(stored.at(-1)?.type).toBe("run_ended");
    expect(stored.filter((e) => e.type === "approval_requested")).toHaveLength(0);
    expect(warnings.some((w) => w.includes(r.runId))).toBe(false);
  });

  it("chat.close() during a turn waits for it: the turn's events come before run_ended", async () => {
    const { env, workspace, stateDir } = makeEnv();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let thinking: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      thinking = resolve;
    });
    // A model that ignores the abort and answers late, as a provider call in flight can.
    const model = {
      async generate() {
        thinking();
        await released;
        return { text: act("goal_update", { progress: "late reply" }) };
      },
    };
    const chat = createChat(env, { model, workspace });
    const turn = chat.send("hello").catch(() => undefined);
    await started;
    const closed = chat.close();
    release();
    await closed;
    await turn;
    const stored = (await new FileRunStore(stateDir).events(chat.runId)) ?? [];
    expect(stored.at(-1)?.type).toBe("run_ended");
    expect(stored.map((e) => e.type)).toContain("model_response");
  });
});
