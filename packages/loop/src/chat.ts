import type { ModelClient } from "@capgate/models";
import type { ProfilePolicy } from "@capgate/profiles";
import { createHostResources } from "@capgate/tools";
import type { LoopEnvironment } from "./deps.js";
import { EventEmitterForRun, type RunEventListener } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { takeModelStep } from "./model-step.js";
import type { PacketStep } from "./packet.js";
import { resolveProfile } from "./profile-lookup.js";
import { newRunId } from "./run-id.js";
import { Session } from "./session.js";
import { createWorkerService } from "./workers.js";

export interface CreateChatOptions {
  model: ModelClient;
  workspace: string;
  /** Starting profile (default Orchestrator). */
  profile?: string | ProfilePolicy;
  /** Most model calls per user message (default 20). */
  maxStepsPerTurn?: number;
  /** Fall through to the configured MCP servers (default true in chat). */
  mcp?: boolean;
  nativeTools?: boolean;
  onEvent?: RunEventListener;
  runId?: string;
}

export interface ChatTurn {
  /** The answer for the user: finish's summary, mark_impossible's reason, or why the turn stopped. */
  reply: string;
  outcome: "answered" | "impossible" | "step_limit" | "aborted" | "error";
  steps: number;
}

export interface Chat {
  readonly runId: string;
  readonly profile: string;
  send(message: string, options?: { signal?: AbortSignal }): Promise<ChatTurn>;
  /** Switch profile: clear the loaded set, preload the new one, emit profile_changed. */
  setProfile(name: string): string[];
  loaded(): string[];
  loadedSignatures(): string[];
  subscribe(listener: RunEventListener): () => void;
  /** End the conversation (emits run_ended) and cancel its workers. */
  close(): Promise<void>;
}

/**
 * The chat loop: a multi-turn conversation over the same gate. Loaded capabilities
 * persist across turns, the configured MCP servers are reachable by fallthrough, and a
 * turn ends when the model calls finish (its summary is the reply) or
 * mark_impossible. The verification gate applies only to turns that changed files or
 * processes.
 */
export function createChat(env: LoopEnvironment, options: CreateChatOptions): Chat {
  const runId = options.runId ?? newRunId();
  const emitter = new EventEmitterForRun(runId, (e) => env.store.append(e), {
    flush: () => env.store.flush(runId),
  });
  if (options.onEvent) emitter.subscribe(options.onEvent);
  const lifetime = new AbortController();
  const mcp = options.mcp ?? true;
  const workers = createWorkerService({
    env,
    parentRunId: runId,
    parentSignal: lifetime.signal,
    parentModel: options.model,
    workspace: options.workspace,
    mcp,
    depth: 0,
    emit: (body) => emitter.emit(body),
    runGoal,
  });
  let turnSignal: AbortSignal = lifetime.signal;
  // The chat's own background processes, browser and ad-hoc MCP servers: closed by close().
  const resources = createHostResources();
  const session = new Session({
    env,
    emitter,
    workspace: options.workspace,
    get signal() {
      return turnSignal;
    },
    mcp,
    verifyGate: "after-change",
    workers,
    resources,
  });
  const initial = resolveProfile(env.profiles, options.profile ?? "Orchestrator");
  const maxSteps = options.maxStepsPerTurn ?? 20;
  emitter.emit({
    type: "run_started",
    goal: "(chat)",
    profile: initial.name,
    model: (options.model as { describe?: () => string }).describe?.() ?? "model",
    workspace: options.workspace,
    maxSteps,
    mcp,
    kind: "chat",
  });
  session.applyProfile(initial);

  const history: Array<{ role: "user" | "assistant"; content: string }> = [];
  let totalSteps = 0;
  let rejections = 0;
  let closed = false;
  /** Turns in progress: close() waits for them, so none of their events comes after run_ended. */
  const inflight = new Set<Promise<unknown>>();

  return {
    runId,
    get profile() {
      return session.profile.name;
    },

    send(message, sendOptions = {}) {
      if (closed) return Promise.reject(new Error("This chat is closed."));
      const sent = runTurn(message, sendOptions);
      const settled: Promise<unknown> = sent.then(
        () => inflight.delete(settled),
        () => inflight.delete(settled),
      );
      inflight.add(settled);
      return sent;
    },

    setProfile(name) {
      if (closed) throw new Error("This chat is closed.");
      const next = resolveProfile(env.profiles, name);
      const from = session.profile.name;
      const loaded = session.applyProfile(next);
      emitter.emit({ type: "profile_changed", from, to: next.name, reason: "requested", loaded });
      return loaded;
    },

    loaded: () => session.router.loaded(),
    loadedSignatures: () => session.router.loadedSignatures(),
    subscribe: (listener) => emitter.subscribe(listener),

    async close() {
      if (closed) return;
      closed = true;
      lifetime.abort();
      // The turn in flight stops at its next check (its model call and tool call see the
      // abort) and its events go out before the end.
      await Promise.all([...inflight]);
      await workers.cancelAll().catch(() => undefined);
      await session.close();
      await resources.closeAll().catch(() => undefined);
      const failure = await emitter.stored().then(
        () => undefined,
        (e: unknown) => (e as Error).message,
      );
      emitter.emit({
        type: "run_ended",
        outcome: failure ? "error" : "finished",
        steps: totalSteps,
        rejections,
        summary: `${history.length / 2} turn(s)`,
        ...(failure ? { error: failure } : {}),
      });
    },
  };

  async function runTurn(message: string, sendOptions: { signal?: AbortSignal }): Promise<ChatTurn> {
    const turnController = new AbortController();
    const abort = () => turnController.abort();
    sendOptions.signal?.addEventListener("abort", abort, { once: true });
    lifetime.signal.addEventListener("abort", abort, { once: true });
    turnSignal = turnController.signal;
    session.resetVerification();
    const steps: PacketStep[] = [];
    let result: ChatTurn | undefined;
    let stepInTurn = 0;
    try {
      while (!result) {
        if (turnController.signal.aborted) {
          result = { reply: "(aborted)", outcome: "aborted", steps: stepInTurn };
          break;
        }
        if (stepInTurn >= maxSteps) {
          result = {
            reply: `(stopped after ${maxSteps} steps without an answer)`,
            outcome: "step_limit",
            steps: stepInTurn,
          };
          break;
        }
        stepInTurn++;
        const step = ++totalSteps;
        const taken = await takeModelStep({
          session,
          emitter,
          model: options.model,
          step,
          signal: turnController.signal,
          nativeTools: options.nativeTools === true,
          steps,
          prompt: {
            goal: message,
            goalLabel: "User message",
            history,
            instructions: "To answer the user, call finish with your answer as the summary.",
          },
          rejections: () => rejections + 1,
        });
        if (taken.kind === "failed") {
          result = turnController.signal.aborted
            ? { reply: "(aborted)", outcome: "aborted", steps: stepInTurn }
            : {
                reply: `model error: ${(taken.error as Error).message}`,
                outcome: "error",
                steps: stepInTurn,
              };
          break;
        }
        if (taken.kind === "rejected") {
          rejections++;
          continue;
        }
        if (taken.end) {
          result = {
            reply: taken.end.summary,
            outcome: taken.end.outcome === "finished" ? "answered" : "impossible",
            steps: stepInTurn,
          };
        }
      }
    } finally {
      sendOptions.signal?.removeEventListener("abort", abort);
      lifetime.signal.removeEventListener("abort", abort);
    }
    history.push({ role: "user", content: message }, { role: "assistant", content: result.reply });
    return result;
  }
}
