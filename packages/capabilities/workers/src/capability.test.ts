import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createToolContext,
  executeTool,
  type ToolContext,
  type WorkerInfo,
  type WorkerService,
} from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { capability } from "./capability.js";

// A host worker service whose workers finish when told to: the real one (child goal loops) lives in @capgate/loop.
function controllableWorkers() {
  const workers = new Map<string, WorkerInfo>();
  const spawned: string[] = [];
  const service: WorkerService = {
    async spawn(req) {
      const info: WorkerInfo = {
        id: `w${workers.size + 1}`,
        goal: req.goal,
        profile: req.profile ?? "Coder",
        status: "running",
        runId: "r",
      };
      workers.set(info.id, info);
      spawned.push(req.goal);
      return { ...info };
    },
    async wait(id, timeoutMs) {
      const w = workers.get(id);
      if (!w) throw new Error(`No worker '${id}'`);
      if (w.status === "running") await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 20)));
      return { ...w };
    },
    async list() {
      return [...workers.values()];
    },
    async cancel(id) {
      const w = workers.get(id)!;
      w.status = "aborted";
      return { ...w };
    },
  };
  return { service, workers, spawned };
}

function ctx(profile: ToolContext["profile"], services: ToolContext["services"]) {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-wk-"));
  return {
    ...createToolContext({ workspace, env: {}, profile, services }),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

const orchestrator = { name: "Orchestrator", maySpawnWorkers: true };

describe("workers capability", () => {
  it("is refused by policy unless the profile may spawn workers, before the service is touched", async () => {
    const w = controllableWorkers();
    for (const tool of ["workers.spawn", "workers.list"]) {
      const args = tool === "workers.spawn" ? { goal: "x" } : {};
      await expect(
        executeTool(tool, args, ctx({ name: "Coder", maySpawnWorkers: false }, { workers: w.service })),
      ).rejects.toMatchObject({
        code: "policy_denied",
      });
    }
    expect(w.spawned).toEqual([]);
  });

  it("spawns, waits (reporting a still-running worker), lists and cancels", async () => {
    const w = controllableWorkers();
    const c = ctx(orchestrator, { workers: w.service });
    const spawned = await executeTool("workers.spawn", { goal: "fix the tests", profile: "Coder" }, c);
    expect(spawned.summary).toContain("w1");
    const waiting = await executeTool("workers.wait", { id: "w1", timeout_ms: 100 }, c);
    expect(waiting.summary).toContain("Still running");
    (w.workers.get("w1") as WorkerInfo).status = "finished";
    (w.workers.get("w1") as WorkerInfo).summary = "tests fixed";
    expect((await executeTool("workers.wait", { id: "w1" }, c)).summary).toContain("tests fixed");
    expect((await executeTool("workers.list", {}, c)).summary).toContain("[finished]");
    expect((await executeTool("workers.cancel", { id: "w1" }, c)).summary).toContain("stay changed");
  });

  it("fails clearly when the host provides no worker service", async () => {
    const r = await executeTool("workers.list", {}, ctx(orchestrator, {}));
    expect(r.success).toBe(false);
    expect(r.summary).toContain("not available in this host");
  });
});
