import { randomUUID } from "node:crypto";
import { argumentsHash } from "@capgate/schema";
import {
  type ApprovalAnswer,
  type ApprovalRegistry,
  type ApprovalResolution,
  ApprovalUnansweredError,
  type PendingApproval,
  refusalMessage,
} from "./approval-registry.js";
import type { ApprovalDecision, LoopApprovalHook, LoopApprovalRequest } from "./deps.js";

interface Waiter {
  info: PendingApproval;
  settle: (answer: ApprovalDecision | Error) => void;
}

export interface ApprovalRegistryOptions {
  /** Deny a request nobody answered within this time (default 15 minutes; 0 = wait until the run ends). */
  timeoutMs?: number;
  /** Called whenever the set of pending approvals changes. */
  onChange?: (runId: string) => void;
  /** The clock answers are checked against (tests move it; default `Date.now`). */
  now?: () => number;
}

/** How many settled approvals are remembered, so a replayed answer is told why it was refused. */
const SETTLED_KEPT = 1000;

/**
 * The approval registry of one process: the hook parks each request
 * here under its run id and approval id; POST /runs/:id/approvals/:approvalId answers it.
 * An aborted run, a timeout or shutdown denies it (the run sees a refused tool call).
 * An answer binds to the request: a different `argumentsHash`, a second answer or one
 * after `expiresAt` settles nothing.
 */
export class MemoryApprovalRegistry implements ApprovalRegistry {
  readonly #pending = new Map<string, Waiter>();
  /** Settled approvals (run id and whether it expired), newest last, at most SETTLED_KEPT. */
  readonly #settled = new Map<string, { runId: string; expired: boolean }>();
  readonly #timeoutMs: number;
  readonly #onChange: ((runId: string) => void) | undefined;
  readonly #now: () => number;

  constructor(options: ApprovalRegistryOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 15 * 60_000;
    this.#onChange = options.onChange;
    this.#now = options.now ?? Date.now;
    this.hook = Object.assign(
      (request: LoopApprovalRequest, signal: AbortSignal) => this.#wait(request, signal),
      { timeoutMs: this.#timeoutMs },
    );
  }

  /** The loop's approval hook. */
  readonly hook: LoopApprovalHook;

  async #wait(
    request: Partial<LoopApprovalRequest> &
      Omit<LoopApprovalRequest, "approvalId" | "runId" | "argumentsHash">,
    signal: AbortSignal,
  ): Promise<ApprovalDecision> {
    const requestedAt = this.#now();
    const expiresAt =
      request.expiresAt ??
      (this.#timeoutMs > 0 ? new Date(requestedAt + this.#timeoutMs).toISOString() : undefined);
    const info: PendingApproval = {
      approvalId: request.approvalId ?? randomUUID(),
      runId: request.runId ?? "direct",
      tool: request.tool,
      capability: request.capability,
      risk: request.risk,
      arguments: request.arguments,
      argumentsHash: request.argumentsHash ?? (await argumentsHash(request.arguments)),
      description: request.description,
      requestedAt: new Date(requestedAt).toISOString(),
      ...(expiresAt ? { expiresAt } : {}),
    };
    return new Promise<ApprovalDecision>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () =>
        settle(new ApprovalUnansweredError("the run was stopped before anyone answered", "abort"));
      const settle = (answer: ApprovalDecision | Error) => {
        if (!this.#pending.delete(info.approvalId)) return;
        this.#remember(
          info.approvalId,
          info.runId,
          answer instanceof ApprovalUnansweredError && answer.decidedBy === "timeout",
        );
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#onChange?.(info.runId);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      if (signal.aborted) {
        reject(new ApprovalUnansweredError("the run was stopped before anyone answered", "abort"));
        return;
      }
      this.#pending.set(info.approvalId, { info, settle });
      signal.addEventListener("abort", onAbort, { once: true });
      if (expiresAt) {
        timer = setTimeout(
          () =>
            settle(
              new ApprovalUnansweredError(
                `nobody answered within ${Math.round(this.#timeoutMs / 1000)} s`,
                "timeout",
              ),
            ),
          Math.max(0, Date.parse(expiresAt) - this.#now()),
        );
        timer.unref();
      }
      this.#onChange?.(info.runId);
    });
  }

  #remember(approvalId: string, runId: string, expired: boolean): void {
    this.#settled.set(approvalId, { runId, expired });
    if (this.#settled.size > SETTLED_KEPT) this.#settled.delete(this.#settled.keys().next().value!);
  }

  /** Pending approvals of one run, oldest first. */
  async pendingFor(runId: string): Promise<PendingApproval[]> {
    return [...this.#pending.values()].filter((w) => w.info.runId === runId).map((w) => w.info);
  }

  async count(): Promise<number> {
    return this.#pending.size;
  }

  /** Answer one pending approval: settles it only when it is pending, unexpired and the hash (if sent) matches. */
  async resolve(runId: string, approvalId: string, answer: ApprovalAnswer): Promise<ApprovalResolution> {
    const refuse = (refused: "not_found" | "arguments_mismatch" | "expired" | "already_answered") => ({
      ok: false as const,
      refused,
      message: refusalMessage(refused, runId, approvalId),
    });
    const waiter = this.#pending.get(approvalId);
    if (!waiter || waiter.info.runId !== runId) {
      const settled = this.#settled.get(approvalId);
      if (settled?.runId !== runId) return refuse("not_found");
      return refuse(settled.expired ? "expired" : "already_answered");
    }
    if (answer.argumentsHash !== undefined && answer.argumentsHash !== waiter.info.argumentsHash) {
      return refuse("arguments_mismatch");
    }
    const { expiresAt } = waiter.info;
    if (expiresAt && this.#now() >= Date.parse(expiresAt)) {
      // The timer is late (a loaded machine): the deadline still holds.
      waiter.settle(new ApprovalUnansweredError("nobody answered before the request expired", "timeout"));
      return refuse("expired");
    }
    waiter.settle({
      approved: answer.approve,
      scope: answer.approve ? (answer.scope ?? "once") : "once",
      decidedBy: answer.decidedBy,
    });
    return { ok: true, approval: waiter.info };
  }

  /** Deny everything still waiting (shutdown). */
  denyAll(reason: string): void {
    for (const waiter of [...this.#pending.values()])
      waiter.settle(new ApprovalUnansweredError(reason, "shutdown"));
  }
}
