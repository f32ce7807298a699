import { randomUUID } from "node:crypto";
import type { ApprovalRegistry, PendingApproval } from "./approval-registry.js";
import type { LoopApprovalHook, LoopApprovalRequest } from "./deps.js";

interface Waiter {
  info: PendingApproval;
  settle: (approved: boolean | Error) => void;
}

export interface ApprovalRegistryOptions {
  /** Deny a request nobody answered within this time (default 15 minutes; 0 = wait until the run ends). */
  timeoutMs?: number;
  /** Called whenever the set of pending approvals changes. */
  onChange?: (runId: string) => void;
}

/**
 * The approval registry of one process: the hook parks each request
 * here under its run id and approval id; POST /runs/:id/approvals/:approvalId answers it.
 * An aborted run, a timeout or shutdown denies it (the run sees a refused tool call).
 */
export class MemoryApprovalRegistry implements ApprovalRegistry {
  readonly #pending = new Map<string, Waiter>();
  readonly #timeoutMs: number;
  readonly #onChange: ((runId: string) => void) | undefined;

  constructor(options: ApprovalRegistryOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 15 * 60_000;
    this.#onChange = options.onChange;
  }

  /** The loop's approval hook. */
  readonly hook: LoopApprovalHook = (request, signal) => this.#wait(request, signal);

  #wait(
    request: Partial<LoopApprovalRequest> & Omit<LoopApprovalRequest, "approvalId" | "runId">,
    signal: AbortSignal,
  ): Promise<boolean> {
    const info: PendingApproval = {
      approvalId: request.approvalId ?? randomUUID(),
      runId: request.runId ?? "direct",
      tool: request.tool,
      capability: request.capability,
      risk: request.risk,
      arguments: request.arguments,
      description: request.description,
      requestedAt: new Date().toISOString(),
    };
    return new Promise<boolean>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => settle(new Error("the run was stopped before anyone answered"));
      const settle = (answer: boolean | Error) => {
        if (!this.#pending.delete(info.approvalId)) return;
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#onChange?.(info.runId);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      if (signal.aborted) {
        reject(new Error("the run was stopped before anyone answered"));
        return;
      }
      this.#pending.set(info.approvalId, { info, settle });
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.#timeoutMs > 0) {
        timer = setTimeout(
          () => settle(new Error(`nobody answered within ${Math.round(this.#timeoutMs / 1000)} s`)),
          this.#timeoutMs,
        );
        timer.unref();
      }
      this.#onChange?.(info.runId);
    });
  }

  /** Pending approvals of one run, oldest first. */
  async pendingFor(runId: string): Promise<PendingApproval[]> {
    return [...this.#pending.values()].filter((w) => w.info.runId === runId).map((w) => w.info);
  }

  async count(): Promise<number> {
    return this.#pending.size;
  }

  /** Answer one pending approval; false when there is no such pending request for that run. */
  async resolve(runId: string, approvalId: string, approve: boolean): Promise<PendingApproval | undefined> {
    const waiter = this.#pending.get(approvalId);
    if (!waiter || waiter.info.runId !== runId) return undefined;
    waiter.settle(approve);
    return waiter.info;
  }

  /** Deny everything still waiting (shutdown). */
  denyAll(reason: string): void {
    for (const waiter of [...this.#pending.values()]) waiter.settle(new Error(reason));
  }
}
