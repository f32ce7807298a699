import { realpathSync, statSync } from "node:fs";
import { resolve, sep } from "node:path";
import type { Harness } from "@capgate/harness";
import {
  EventEmitterForRun,
  type LoopApprovalHook,
  type LoopEnvironment,
  newRunId,
  type RunGoalResult,
  runGoal,
} from "@capgate/loop";
import { parseModelSpec } from "@capgate/models";
import { CapgateError, closestMatch } from "@capgate/schema";
import type { ApprovalMode } from "@capgate/tools";
import type { ActiveRun, RunLauncher, RunStatus, StartRunRequest } from "./run-launcher.js";

interface Entry extends ActiveRun {
  controller: AbortController;
  start: () => Promise<RunGoalResult>;
  done?: Promise<unknown>;
}

export interface RunManagerOptions {
  /** Runs executing at once (default 4); more wait in a queue. */
  maxConcurrent?: number;
  /** Runs waiting at most (default 100); beyond it POST /runs answers 429. */
  maxQueued?: number;
  /** Approval mode of runs that do not name one (default: the harness's). */
  approval?: ApprovalMode;
  approve: LoopApprovalHook;
  /** Called when a run starts, ends or is queued. */
  onChange?: () => void;
  /** Told about a run that failed outside the loop's own error handling. */
  onError?: (runId: string, error: unknown) => void;
  /** The only directory whose `scripted:<file>` models a request may name (see checkScriptedModel). */
  scriptedModelsDir?: string;
}

/**
 * Goal runs in this process under a concurrency limit, queued beyond it. Each run gets
 * the harness's environment with its own approval mode and the server's approval hook
 * (pending approvals wait in the registry). shutdown() aborts them all and waits until
 * every run has written `run_ended`.
 */
export class RunManager implements RunLauncher {
  readonly #runs = new Map<string, Entry>();
  readonly #queue: Entry[] = [];
  #running = 0;
  #closed = false;
  readonly #maxConcurrent: number;
  readonly #maxQueued: number;

  constructor(
    private readonly harness: Harness,
    private readonly options: RunManagerOptions,
  ) {
    this.#maxConcurrent = options.maxConcurrent ?? 4;
    this.#maxQueued = options.maxQueued ?? 100;
  }

  /** Check the request, create the model (so a bad spec is a 400 now, not a failed run later), queue it. */
  async start(request: StartRunRequest): Promise<{ id: string; status: RunStatus }> {
    if (this.#closed) throw new CapgateError("shutting_down", "The server is shutting down; no new runs.");
    const model = checkRunRequest(this.harness, request, this.options.scriptedModelsDir);
    if (this.#queue.length >= this.#maxQueued) {
      throw new CapgateError(
        "too_many_requests",
        `${this.#queue.length} runs are already waiting; try again when some have finished.`,
      );
    }
    const id = newRunId();
    const controller = new AbortController();
    const base = this.harness.environment;
    const approval = request.approval ?? this.options.approval ?? base.policy.approval ?? "never";
    const env: LoopEnvironment = {
      ...base,
      policy: { ...base.policy, approval },
      approve: this.options.approve,
    };
    const maxSteps = request.maxSteps ?? this.harness.maxSteps;
    const entry: Entry = {
      id,
      goal: request.goal,
      profile: request.profile,
      status: "queued",
      queuedAt: new Date().toISOString(),
      controller,
      start: () =>
        runGoal(env, {
          goal: request.goal,
          ...(request.profile ? { profile: request.profile } : {}),
          model,
          workspace: this.harness.workspace,
          ...(maxSteps !== undefined ? { maxSteps } : {}),
          mcp: request.mcp === true,
          nativeTools: (model as { nativeTools?: boolean }).nativeTools === true,
          signal: controller.signal,
          runId: id,
        }),
    };
    this.#runs.set(id, entry);
    this.#queue.push(entry);
    this.#pump();
    this.options.onChange?.();
    return { id, status: entry.status };
  }

  #pump(): void {
    while (!this.#closed && this.#running < this.#maxConcurrent && this.#queue.length > 0) {
      const entry = this.#queue.shift()!;
      entry.status = "running";
      this.#running++;
      entry.done = entry
        .start()
        .catch((error: unknown) => {
          // runGoal ends every run it started with run_ended; this is a failure before that.
          this.options.onError?.(entry.id, error);
          if (!this.harness.store.has(entry.id)) {
            this.#writeUnstarted(entry, "error", error instanceof Error ? error.message : String(error));
          }
        })
        .finally(() => {
          this.#running--;
          this.#runs.delete(entry.id);
          this.options.onChange?.();
          this.#pump();
        });
    }
  }

  /** A trace for a run the loop never started, so a client that was given its id sees how it ended. */
  #writeUnstarted(entry: Entry, outcome: "aborted" | "error", error: string): void {
    const emitter = new EventEmitterForRun(entry.id, (e) => this.harness.store.append(e));
    emitter.emit({
      type: "run_started",
      goal: entry.goal,
      profile: entry.profile ?? "Orchestrator",
      model: "(not started)",
      workspace: this.harness.workspace,
      maxSteps: 0,
      mcp: false,
      kind: "goal",
    });
    emitter.emit({ type: "run_ended", outcome, steps: 0, rejections: 0, error });
  }

  async get(id: string): Promise<ActiveRun | undefined> {
    const e = this.#runs.get(id);
    return e ? describe(e) : undefined;
  }

  async list(): Promise<ActiveRun[]> {
    return [...this.#runs.values()].map(describe);
  }

  async counts(): Promise<{ running: number; queued: number }> {
    return { running: this.#running, queued: this.#queue.length };
  }

  /**
   * Stop taking runs, abort every running one (each ends with `run_ended { outcome:
   * "aborted" }`), give queued ones a trace that says they were aborted before starting,
   * and wait for all of it.
   */
  async shutdown(reason = "the server is shutting down"): Promise<void> {
    this.#closed = true;
    const queued = this.#queue.splice(0);
    for (const entry of queued) {
      this.#runs.delete(entry.id);
      this.#writeUnstarted(entry, "aborted", `${reason} before the run started`);
    }
    const running = [...this.#runs.values()];
    for (const entry of running) entry.controller.abort(new Error(reason));
    await Promise.allSettled(running.map((e) => e.done));
  }
}

/**
 * A `scripted:<file>` spec from a request names a file on the server. It is refused unless
 * the server was given a scripted-models directory and the file (symlinks resolved) lies
 * inside it; then the spec is returned with the file's real path. Refusals never say
 * whether the file exists or what it holds. Other specs pass unchanged.
 */
export function checkScriptedModel(spec: string, dir: string | undefined): string {
  let parsed: ReturnType<typeof parseModelSpec>;
  try {
    parsed = parseModelSpec(spec);
  } catch {
    return spec; // createModel reports the bad spec itself, naming the property.
  }
  if (parsed.provider !== "scripted") return spec;
  if (dir === undefined) {
    throw new CapgateError(
      "scripted_model_refused",
      "Scripted models (`scripted:<file>`) cannot be chosen over HTTP: the file would be read on the server. Use an openai: or anthropic: model, or start the server with a scripted-models directory (startServer({ scriptedModelsDir })) and name a file in it.",
      { property: "model" },
    );
  }
  let root: string;
  let real: string | undefined;
  try {
    root = realpathSync(dir);
  } catch {
    throw new CapgateError(
      "scripted_model_refused",
      "The server's scripted-models directory does not exist.",
      {
        property: "model",
      },
    );
  }
  try {
    real = realpathSync(resolve(root, parsed.model));
  } catch {
    real = undefined;
  }
  if (real === undefined || !(real.startsWith(`${root}${sep}`) && statSync(real).isFile())) {
    throw new CapgateError(
      "scripted_model_refused",
      `scripted:<file> must name a file in the server's scripted-models directory '${root}' (a name relative to it, or a path inside it); '${parsed.model.slice(0, 200)}' is not one.`,
      { property: "model" },
    );
  }
  const query = spec.includes("?") ? spec.slice(spec.indexOf("?")) : "";
  return `scripted:${real}${query}`;
}

function describe(e: Entry): ActiveRun {
  return { id: e.id, goal: e.goal, profile: e.profile, status: e.status, queuedAt: e.queuedAt };
}

/** A request's profile and model, checked now so a bad one is a 400 rather than a failed run later. */
export function checkRunRequest(
  harness: Harness,
  request: StartRunRequest,
  scriptedModelsDir?: string,
): ReturnType<Harness["model"]> {
  // Own entries only: "__proto__" or "constructor" must be unknown, not Object.prototype.
  if (request.profile !== undefined && !Object.hasOwn(harness.profiles, request.profile)) {
    const names = Object.keys(harness.profiles);
    const guess = closestMatch(request.profile, names);
    throw new CapgateError(
      "unknown_profile",
      `Unknown profile '${request.profile.slice(0, 100)}'.${guess ? ` Did you mean '${guess}'?` : ""} Profiles: ${names.join(", ")}.`,
      { property: "profile" },
    );
  }
  const spec = request.model === undefined ? undefined : checkScriptedModel(request.model, scriptedModelsDir);
  try {
    return harness.model(spec);
  } catch (error) {
    const e = error as { code?: string; message?: string; property?: string };
    throw new CapgateError(e.code ?? "invalid_model_spec", e.message ?? String(error), {
      property: "model",
      cause: error,
    });
  }
}
