import { randomInt } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  action,
  collectEvents,
  processesWith,
  readTrace,
  startServerProcess,
  waitFor,
} from "./test-support/server-process.js";

describe("graceful shutdown", () => {
  it("SIGTERM during a run: the trace ends with run_ended aborted, the process exits 0, nothing is left running", async () => {
    const server = await startServerProcess();
    try {
      // A unique sleep so the orphan check cannot confuse it with anything else.
      const marker = `${300 + randomInt(1000)}.${randomInt(100_000)}`;
      const response = await server.api("/runs", {
        body: {
          goal: "sleep for a long time",
          profile: "Coder",
          model: server.script([
            action("capability_call", { tool: "shell.run", arguments: { command: `sleep ${marker}` } }),
            action("mark_impossible", { reason: "unreachable" }),
          ]),
        },
      });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };

      // Follow the run; stop it once the command is running.
      const events = collectEvents(server, id);
      await waitFor(
        () => (processesWith(`sleep ${marker}`).length > 0 ? true : undefined),
        "the sleep to start",
      );
      const exit = await server.stop("SIGTERM");
      expect(exit).toEqual({ code: 0, signal: null });

      const streamed = await events;
      expect(streamed.at(-1)).toMatchObject({ type: "run_ended", outcome: "aborted" });
      const trace = readTrace(server.home, id);
      expect(trace.at(-1)).toMatchObject({ type: "run_ended", outcome: "aborted" });
      expect(trace.map((e) => e.seq)).toEqual(trace.map((_, i) => i + 1));
      expect(processesWith(`sleep ${marker}`)).toEqual([]);
      expect(server.stderr()).toBe("");
    } finally {
      await server.stop("SIGKILL");
      server.cleanup();
    }
  }, 60_000);

  it("queued runs get a trace that says they were aborted before they started", async () => {
    const server = await startServerProcess({ options: { maxConcurrentRuns: 1 } });
    try {
      const start = async (goal: string) => {
        const response = await server.api("/runs", {
          body: {
            goal,
            profile: "Coder",
            approval: "always",
            model: server.script([
              action("capability_call", { tool: "fs.write", arguments: { path: "x.txt", content: "x" } }),
              action("mark_impossible", { reason: "stop" }),
            ]),
          },
        });
        return ((await response.json()) as { id: string }).id;
      };
      const running = await start("holds the slot");
      await waitFor(async () => {
        const run = (await (await server.api(`/runs/${running}`)).json()) as { pendingApprovals: unknown[] };
        return run.pendingApprovals.length > 0 ? true : undefined;
      }, "the approval");
      const queued = await start("never starts");
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null });
      expect(readTrace(server.home, running).at(-1)).toMatchObject({ type: "run_ended", outcome: "aborted" });
      const trace = readTrace(server.home, queued);
      expect(trace.map((e) => e.type)).toEqual(["run_started", "run_ended"]);
      expect(trace.at(-1)).toMatchObject({ outcome: "aborted" });
    } finally {
      await server.stop("SIGKILL");
      server.cleanup();
    }
  }, 60_000);
});
