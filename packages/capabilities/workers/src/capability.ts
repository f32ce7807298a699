import {
  defineCapability,
  PolicyDeniedError,
  type ToolContext,
  type WorkerInfo,
  type WorkerService,
} from "@capgate/tools";
import { manifest } from "./manifest.js";

function workersOf(ctx: ToolContext): WorkerService {
  const workers = ctx.services.workers;
  if (!workers) throw new Error("workers are not available in this host (it provides no worker service)");
  return workers;
}

// The rule the description states, enforced before anything else runs.
function mayDelegate(_args: unknown, ctx: ToolContext): undefined {
  if (!ctx.profile.maySpawnWorkers) {
    throw new PolicyDeniedError(
      `The ${ctx.profile.name} profile may not use workers (only a profile with maySpawnWorkers, by default Orchestrator). Do the work yourself.`,
    );
  }
  return undefined;
}

function describe(w: WorkerInfo): string {
  const summary = w.summary ? ` — ${w.summary}` : "";
  return `${w.id} [${w.status}] (${w.profile}, run ${w.runId}) ${w.goal.slice(0, 120)}${summary}`;
}

/** workers.*: delegation to child goal runs, a thin layer over the host's worker service. */
export const capability = defineCapability({
  manifest,
  handlers: {
    spawn: async (args, ctx) => {
      const w = await workersOf(ctx).spawn(
        { goal: args.goal, ...(args.profile ? { profile: args.profile } : {}) },
        ctx.signal,
      );
      return {
        success: true,
        summary: `Started worker ${w.id} (${w.profile}). Wait for it with workers.wait.`,
        data: w,
      };
    },
    wait: async (args, ctx) => {
      const timeout = Math.min(args.timeout_ms ?? 60_000, Math.max(100, ctx.limits.timeoutMs - 1_000));
      const w = await workersOf(ctx).wait(args.id, timeout, ctx.signal);
      const note =
        w.status === "running" ? ` Still running after ${timeout} ms; wait again or cancel it.` : "";
      return { success: w.status !== "failed", summary: `${describe(w)}${note}`, data: w };
    },
    list: async (_args, ctx) => {
      const all = await workersOf(ctx).list();
      return {
        success: true,
        summary: all.length > 0 ? all.map(describe).join("\n") : "No workers in this run.",
        data: all,
      };
    },
    cancel: async (args, ctx) => {
      const w = await workersOf(ctx).cancel(args.id);
      return { success: true, summary: `Cancelled: ${describe(w)}. Files it changed stay changed.`, data: w };
    },
  },
  policies: { spawn: mayDelegate, wait: mayDelegate, list: mayDelegate, cancel: mayDelegate },
});
