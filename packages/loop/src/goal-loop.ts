import type { ModelClient } from "@capgate/models";
import { inferProfileFromGoal, type ProfilePolicy } from "@capgate/profiles";
import { CapgateError } from "@capgate/schema";
import { createHostResources } from "@capgate/tools";
import type { LoopEnvironment } from "./deps.js";
import { EventEmitterForRun, type RunEvent, type RunOutcome } from "./events.js";
import type { RunGoalOptions, RunGoalResult } from "./goal-api.js";
import { takeModelStep } from "./model-step.js";
import type { PacketStep } from "./packet.js";
import { resolveProfile } from "./profile-lookup.js";
import { newRunId } from "./run-id.js";
import { Session } from "./session.js";
import { type ExposedSurface, exposedSurface } from "./surface.js";
import { createWorkerService } from "./workers.js";

export const DEFAULT_MAX_STEPS = 40;

/**
 * The goal loop of SPEC §9: profile (given or inferred, recorded as a transition),
 * then model → strict parse → dispatch until finish, mark_impossible, the step
 * limit, an abort or a model error — always ending with `run_ended`.
 */
export async function runGoal(env: LoopEnvironment, options: RunGoalOptions): Promise<RunGoalResult> {
  const runId = options.runId ?? newRunId();
  const emitter = new EventEmitterForRun(runId, (e) => env.store.append(e), {
    flush: () => env.store.flush(runId),
  });
  if (options.onEvent) emitter.subscribe(options.onEvent);
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) controller.abort(options.signal.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const signal = controller.signal;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;

  const inferred = options.profile === undefined;
  const target = inferred
    ? resolveProfile(env.profiles, inferProfileFromGoal(options.goal))
    : resolveProfile(env.profiles, options.profile as string | ProfilePolicy);
  const startProfile = inferred ? resolveProfile(env.profiles, "Orchestrator") : target;

  const workers = createWorkerService({
    env,
    parentRunId: runId,
    parentSignal: signal,
    parentModel: options.model,
    workspace: options.workspace,
    mcp: options.mcp === true,
    depth: options.depth ?? 0,
    emit: (body) => emitter.emit(body),
    runGoal,
  });
  // The run's own background processes, browser and ad-hoc MCP servers: closed at its end.
  const resources = createHostResources();
  const session = new Session({
    env,
    emitter,
    workspace: options.workspace,
    signal,
    mcp: options.mcp === true,
    verifyGate: "always",
    workers,
    resources,
    ...(options.maxToolCalls !== undefined ? { maxToolCalls: options.maxToolCalls } : {}),
  });

  emitter.emit({
    type: "run_started",
    goal: options.goal,
    profile: startProfile.name,
    model: describeModel(options.model),
    workspace: options.workspace,
    maxSteps,
    mcp: options.mcp === true,
    kind: "goal",
    ...(options.parentRunId ? { parentRunId: options.parentRunId } : {}),
  });

  let outcome: RunOutcome = "step_limit";
  let summary: string | undefined;
  let error: string | undefined;
  let step = 0;
  let rejections = 0;
  let consecutive = 0;
  const steps: PacketStep[] = [];
  const maxRejections = options.maxConsecutiveRejections ?? 8;

  try {
    if (target.name !== startProfile.name) {
      // The inference is recorded as a transition before the first model call.
      const loaded = session.applyProfile(target);
      emitter.emit({
        type: "profile_changed",
        from: startProfile.name,
        to: target.name,
        reason: "inferred",
        loaded,
      });
    } else {
      session.applyProfile(target);
    }
    // Fixed for the run: the baseline offers what is registered when it starts.
    const exposed: ExposedSurface | undefined =
      options.surface === "exposed" ? exposedSurface(session.loadAllVisible()) : undefined;

    while (true) {
      if (signal.aborted) {
        outcome = "aborted";
        break;
      }
      if (step >= maxSteps) {
        outcome = "step_limit";
        break;
      }
      step++;
      const taken = await takeModelStep({
        session,
        emitter,
        model: options.model,
        step,
        signal,
        nativeTools: options.nativeTools === true,
        steps,
        prompt: { goal: options.goal },
        ...(exposed ? { exposed } : {}),
        rejections: () => rejections + 1,
      });
      if (taken.kind === "failed") {
        if (signal.aborted) {
          outcome = "aborted";
          break;
        }
        outcome = "error";
        error = `model error: ${errorMessage(taken.error)}`;
        break;
      }
      if (taken.kind === "rejected") {
        rejections++;
        consecutive++;
        if (consecutive >= maxRejections) {
          outcome = "error";
          error = `the model sent ${consecutive} invalid actions in a row (last: ${taken.error.code})`;
          break;
        }
        continue;
      }
      consecutive = 0;
      if (taken.end) {
        outcome = taken.end.outcome;
        summary = taken.end.summary;
        break;
      }
    }
    if (signal.aborted && outcome !== "finished" && outcome !== "impossible") outcome = "aborted";
  } catch (e) {
    outcome = signal.aborted ? "aborted" : "error";
    error = errorMessage(e);
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }

  // Whatever ran as part of the run settles before its end: nothing may be emitted after
  // run_ended. Aborting withdraws approvals still waiting (a handler that outlived its
  // call's timeout may have asked) and stops workers; then the session takes no more, and
  // nothing the run started (background processes, the browser, ad-hoc MCP servers) outlives
  // it — all stopped before beforeEnd (a worker publishing the checkout) and run_ended.
  controller.abort(new Error("the run ended"));
  await workers.cancelAll().catch(() => undefined);
  await session.close();
  await resources.closeAll().catch(() => undefined);
  // The trace so far must be stored before the work is published or the run declared
  // done: a gap would leave an action without a trace.
  try {
    await emitter.stored();
  } catch (e) {
    outcome = "error";
    error = errorMessage(e);
  }
  if (options.beforeEnd) {
    try {
      await options.beforeEnd({ runId, outcome, steps: step });
    } catch (e) {
      error ??= errorMessage(e);
    }
  }
  emitter.emit({
    type: "run_ended",
    outcome,
    steps: step,
    rejections,
    ...(summary ? { summary } : {}),
    ...(error ? { error } : {}),
  });
  if (env.memory) {
    const text = `Run ${runId} (${target.name}) on goal "${clip(options.goal, 200)}": ${outcome}${summary ? ` — ${clip(summary, 400)}` : ""}${error ? ` — ${clip(error, 200)}` : ""}`;
    await env.memory
      .remember({ text, tags: ["run_summary", outcome], source: "run_summary", runId })
      .catch(() => undefined);
  }
  return {
    runId,
    outcome,
    ...(summary ? { summary } : {}),
    ...(error ? { error } : {}),
    steps: step,
    rejections,
    profile: session.profile?.name ?? target.name,
    tracePath: env.store.locate(runId),
  };
}

function describeModel(model: ModelClient): string {
  const d = (model as { describe?: () => string }).describe;
  return typeof d === "function" ? d.call(model) : "model";
}

function errorMessage(e: unknown): string {
  if (CapgateError.isInstance(e)) return `${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export type { RunEvent };
