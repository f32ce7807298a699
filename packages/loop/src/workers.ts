import type { ModelClient } from "@capgate/models";
import { inferProfileFromGoal } from "@capgate/profiles";
import type { WorkerInfo, WorkerService } from "@capgate/tools";
import type { LoopEnvironment } from "./deps.js";
import type { RunEventBody } from "./events.js";
import type { RunGoalFunction, RunGoalResult } from "./goal-api.js";
import { resolveProfile } from "./profile-lookup.js";
import { newRunId } from "./run-id.js";

interface Worker {
  info: WorkerInfo;
  controller: AbortController;
  done: Promise<RunGoalResult>;
}

export interface WorkerServiceOptions {
  env: LoopEnvironment;
  parentRunId: string;
  parentSignal: AbortSignal;
  parentModel: ModelClient;
  workspace: string;
  mcp: boolean;
  depth: number;
  emit: (body: RunEventBody) => void;
  /** Runs a worker's goal: the goal loop, handed in because the goal loop creates this service. */
  runGoal: RunGoalFunction;
}

/** Workers of one run: each a child goal loop with its own router, profile and run id. */
export interface RunWorkers extends WorkerService {
  cancelAll(): Promise<void>;
}

const running = new WeakMap<LoopEnvironment, { count: number }>();

/**
 * The host service behind workers.*: spawn starts a child goal loop (own router,
 * profile and run id, linked to the parent), under a per-host concurrency limit;
 * cancel aborts it. Whether the current profile may spawn is checked by the workers
 * capability's policy; workers themselves cannot spawn workers.
 */
export function createWorkerService(options: WorkerServiceOptions): RunWorkers {
  const { env } = options;
  const workers = new Map<string, Worker>();
  let counter = 0;
  const gauge = running.get(env) ?? { count: 0 };
  running.set(env, gauge);
  const limit = env.workerLimit ?? 4;

  const snapshot = (w: Worker): WorkerInfo => ({ ...w.info });
  const get = (id: string): Worker => {
    const w = workers.get(id);
    if (!w) {
      const known = [...workers.keys()];
      throw new Error(
        `No worker '${id}' in this run.${known.length > 0 ? ` Workers: ${known.join(", ")}.` : " None was spawned."}`,
      );
    }
    return w;
  };

  return {
    async spawn(request, signal) {
      if (options.depth >= 1)
        throw new Error("A worker cannot spawn workers; do the work yourself or finish.");
      if (gauge.count >= limit) {
        throw new Error(
          `${limit} workers are already running (the limit); wait for one with workers.wait first.`,
        );
      }
      if (signal.aborted || options.parentSignal.aborted) throw new Error("The run was aborted.");
      const profile = resolveProfile(env.profiles, request.profile ?? inferProfileFromGoal(request.goal));
      const id = `w${++counter}`;
      const childRunId = newRunId();
      const controller = new AbortController();
      const onParentAbort = () => controller.abort(options.parentSignal.reason);
      options.parentSignal.addEventListener("abort", onParentAbort, { once: true });
      const model =
        env.workerModel?.({ goal: request.goal, profile: profile.name, parentRunId: options.parentRunId }) ??
        options.parentModel;
      const info: WorkerInfo = {
        id,
        goal: request.goal,
        profile: profile.name,
        status: "running",
        runId: childRunId,
      };
      gauge.count++;
      const done = options
        .runGoal(env, {
          goal: request.goal,
          profile,
          model,
          workspace: options.workspace,
          mcp: options.mcp,
          signal: controller.signal,
          runId: childRunId,
          parentRunId: options.parentRunId,
          depth: options.depth + 1,
        })
        .then((r) => {
          info.status =
            r.outcome === "finished"
              ? "finished"
              : r.outcome === "impossible"
                ? "impossible"
                : r.outcome === "aborted"
                  ? "aborted"
                  : r.outcome === "step_limit"
                    ? "step_limit"
                    : "failed";
          const text = r.summary ?? r.error;
          if (text) info.summary = text;
          return r;
        })
        .finally(() => {
          gauge.count--;
          options.parentSignal.removeEventListener("abort", onParentAbort);
        });
      const worker: Worker = { info, controller, done };
      workers.set(id, worker);
      options.emit({
        type: "worker_spawned",
        workerId: id,
        childRunId,
        goal: request.goal,
        profile: profile.name,
      });
      return snapshot(worker);
    },

    async wait(id, timeoutMs, signal) {
      const w = get(id);
      if (w.info.status !== "running") return snapshot(w);
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        w.done.catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
          onAbort = () => resolve();
          signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
      return snapshot(w);
    },

    async list() {
      return [...workers.values()].map(snapshot);
    },

    async cancel(id) {
      const w = get(id);
      if (w.info.status === "running") {
        w.controller.abort(new Error("cancelled by parent"));
        await w.done.catch(() => undefined);
      }
      return snapshot(w);
    },

    async cancelAll() {
      for (const w of workers.values())
        if (w.info.status === "running") w.controller.abort(new Error("parent ended"));
      await Promise.allSettled([...workers.values()].map((w) => w.done));
    },
  };
}
