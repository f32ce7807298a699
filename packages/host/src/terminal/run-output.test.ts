import type { RunEvent } from "@capgate/loop";
import { describe, expect, it } from "vitest";
import { recordingIO } from "../test-support/scripted-io.js";
import { interruptible, printRunEvents } from "./run-output.js";

function recordingSpinner() {
  const calls: string[] = [];
  return {
    calls,
    spinner: { start: (t: string) => calls.push(`start ${t}`), stop: () => calls.push("stop") },
  };
}

const at = { runId: "r", seq: 0, at: "2026-01-01T00:00:00.000Z" };
const events = {
  request: { ...at, type: "model_request", step: 2 },
  response: { ...at, type: "model_response", text: "…" },
  finished: { ...at, type: "finished", summary: "done" },
  failed: {
    ...at,
    type: "run_ended",
    outcome: "error",
    error: "the model went away",
    steps: 1,
    rejections: 0,
  },
} as unknown as Record<string, RunEvent>;

describe("printRunEvents", () => {
  it("spins while the model thinks, stops before a line, and puts a run that ended in an error on stderr", () => {
    const { io, out, err } = recordingIO();
    const { calls, spinner } = recordingSpinner();
    const print = printRunEvents(io, { spinner });
    for (const e of [events.request, events.response, events.finished, events.failed]) print(e as RunEvent);
    expect(calls).toEqual(["start thinking… step 2", "stop", "stop", "stop"]);
    expect(out).toHaveLength(1);
    expect(out[0]).toContain("done");
    expect(err).toHaveLength(1);
    expect(err[0]).toContain("the model went away");
  });

  it("prints one JSON object per line under json, and nothing it is told to hide", () => {
    const json = recordingIO();
    printRunEvents(json.io, { json: true })(events.finished as RunEvent);
    expect(JSON.parse(json.out[0] as string)).toMatchObject({ type: "finished", summary: "done" });
    const hidden = recordingIO();
    const { calls, spinner } = recordingSpinner();
    const print = printRunEvents(hidden.io, { spinner, hide: () => true, thinking: () => "thinking…" });
    for (const e of [events.request, events.finished, events.response]) print(e as RunEvent);
    expect(hidden.out).toEqual([]);
    // A hidden event leaves the spinner spinning (a quiet chat still shows that work goes on).
    expect(calls).toEqual(["start thinking…", "stop"]);
  });
});

describe("interruptible", () => {
  it("aborts when stdout's reader goes away", () => {
    const closed = new AbortController();
    const { io } = recordingIO(closed.signal);
    const stop = interruptible(io, { signals: false });
    expect(stop.signal.aborted).toBe(false);
    closed.abort();
    expect(stop.signal.aborted).toBe(true);
    expect((stop.signal.reason as Error).message).toBe("the output pipe was closed");
    stop.dispose();
  });

  it("aborts on SIGINT after before() and the message, and dispose() removes its listeners", () => {
    const { io, err } = recordingIO();
    const before: string[] = [];
    const listeners = process.listenerCount("SIGINT");
    const stop = interruptible(io, { message: "stopping…", before: () => before.push("before") });
    expect(process.listenerCount("SIGINT")).toBe(listeners + 1);
    process.emit("SIGINT", "SIGINT");
    expect(before).toEqual(["before"]);
    expect(err).toEqual(["stopping…"]);
    expect((stop.signal.reason as Error).message).toBe("interrupted");
    stop.dispose();
    expect(process.listenerCount("SIGINT")).toBe(listeners);
  });
});
