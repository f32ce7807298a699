import type { Harness } from "@capgate/harness";
import { newRunId } from "@capgate/loop";
import type { RunQueue } from "@capgate/postgres";
import { CapgateError } from "@capgate/schema";
import type { ActiveRun, RunLauncher, RunStatus, StartRunRequest } from "./run-launcher.js";
import { checkRunRequest } from "./run-manager.js";

/**
 * runs: "queue" — POST /runs inserts the run row and its graphile-worker job in one
 * transaction and returns; a `capgate worker` node executes it. Nothing runs here, so
 * shutdown only stops accepting runs: queued and running ones carry on on the workers.
 */
export class QueueRunLauncher implements RunLauncher {
  #closed = false;

  constructor(
    private readonly harness: Harness,
    private readonly queue: RunQueue,
    private readonly scriptedModelsDir?: string,
  ) {}

  async start(request: StartRunRequest): Promise<{ id: string; status: RunStatus }> {
    if (this.#closed) throw new CapgateError("shutting_down", "The server is shutting down; no new runs.");
    // The same checks as a local run: a bad profile or model spec is a 400 now, on the node the client talks to.
    checkRunRequest(this.harness, request, this.scriptedModelsDir);
    const id = newRunId();
    try {
      await this.queue.enqueue(id, {
        goal: request.goal,
        ...(request.profile ? { profile: request.profile } : {}),
        ...(request.model ? { model: request.model } : {}),
        ...(request.maxSteps !== undefined ? { maxSteps: request.maxSteps } : {}),
        ...(request.approval ? { approval: request.approval } : {}),
        ...(request.mcp !== undefined ? { mcp: request.mcp } : {}),
      });
    } catch (error) {
      // The database's own words stay in the server log (the error handler logs the cause), never in the reply.
      throw new CapgateError(
        "queue_unavailable",
        "The run could not be queued (nothing was stored). Try again.",
        {
          cause: error,
        },
      );
    }
    return { id, status: "queued" };
  }

  get(id: string): Promise<ActiveRun | undefined> {
    return this.queue.active(id);
  }

  list(): Promise<ActiveRun[]> {
    return this.queue.listActive();
  }

  counts(): Promise<{ running: number; queued: number }> {
    return this.queue.counts();
  }

  async shutdown(): Promise<void> {
    this.#closed = true;
  }
}
