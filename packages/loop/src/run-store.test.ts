import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventEmitterForRun } from "./events.js";
import { newRunId } from "./run-id.js";
import { FileRunStore, readTraceFile } from "./run-store.js";

describe("FileRunStore", () => {
  it("appends one line per event, lists and reads runs", () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-store-"));
    const store = new FileRunStore(dir);
    const runId = newRunId();
    const emitter = new EventEmitterForRun(runId, (e) => store.append(e));
    emitter.emit({
      type: "run_started",
      goal: "g",
      profile: "Coder",
      model: "m",
      workspace: "/w",
      maxSteps: 5,
      mcp: false,
      kind: "goal",
    });
    const lines = () => readFileSync(store.pathOf(runId), "utf8").split("\n").filter(Boolean);
    expect(lines()).toHaveLength(1);
    emitter.emit({ type: "goal_updated", step: 1, update: { progress: "p" }, state: { notes: [] } });
    expect(lines()).toHaveLength(2);
    emitter.emit({ type: "run_ended", outcome: "finished", steps: 1, rejections: 0 });
    const listed = store.list();
    expect(listed[0]).toMatchObject({ runId, goal: "g", outcome: "finished", events: 3 });
    expect(store.read(runId).events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("tolerates a torn last line and reports it", () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-store-"));
    const store = new FileRunStore(dir);
    const runId = newRunId();
    const emitter = new EventEmitterForRun(runId, (e) => store.append(e));
    emitter.emit({
      type: "run_started",
      goal: "g",
      profile: "Coder",
      model: "m",
      workspace: "/w",
      maxSteps: 5,
      mcp: false,
      kind: "goal",
    });
    appendFileSync(store.pathOf(runId), '{"type":"model_resp');
    const r = readTraceFile(store.pathOf(runId));
    expect(r.events).toHaveLength(1);
    expect(r.badLines).toEqual([2]);
  });

  it("rejects run ids that could escape the runs directory", () => {
    const store = new FileRunStore(mkdtempSync(join(tmpdir(), "capgate-store-")));
    for (const bad of ["../x", "a/b", "", ".hidden", "x".repeat(200)]) {
      expect(() => store.pathOf(bad)).toThrow(/not a valid run id/);
    }
    expect(() => store.read("20260101-000000-abcdef")).toThrow(/No trace/);
  });

  it("feeds live subscribers of one run and of all runs", () => {
    const store = new FileRunStore(mkdtempSync(join(tmpdir(), "capgate-store-")));
    const one: string[] = [];
    const all: string[] = [];
    const a = newRunId();
    const b = `${newRunId()}b`;
    const stop = store.subscribe(a, (e) => one.push(e.runId));
    store.subscribe("*", (e) => all.push(e.runId));
    new EventEmitterForRun(a, (e) => store.append(e)).emit({ type: "finish_refused", step: 1, reason: "r" });
    new EventEmitterForRun(b, (e) => store.append(e)).emit({ type: "finish_refused", step: 1, reason: "r" });
    stop();
    new EventEmitterForRun(a, (e) => store.append(e)).emit({ type: "finish_refused", step: 2, reason: "r" });
    expect(one).toEqual([a]);
    expect(all).toEqual([a, b, a]);
  });
});
