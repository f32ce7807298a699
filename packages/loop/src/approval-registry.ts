import type { LoopApprovalHook } from "./deps.js";

/** An approval a run is waiting for, as GET /runs/:id shows it. */
export interface PendingApproval {
  approvalId: string;
  runId: string;
  tool: string;
  capability: string;
  risk: string;
  arguments: unknown;
  description: string;
  requestedAt: string;
}

/**
 * Where a run's approval requests wait for an operator: `hook` (the loop's approval hook)
 * parks a request and waits; `resolve` answers it from wherever the operator is. The
 * in-memory registry serves one process; `@capgate/postgres` answers across nodes.
 */
export interface ApprovalRegistry {
  /** The loop's approval hook: request, then wait for the answer (an abort or timeout denies). */
  readonly hook: LoopApprovalHook;
  /** Pending approvals of one run, oldest first. */
  pendingFor(runId: string): Promise<PendingApproval[]>;
  /** Answer one pending approval; `undefined` when that run has no such pending request. */
  resolve(runId: string, approvalId: string, approve: boolean): Promise<PendingApproval | undefined>;
  /** Pending approvals this registry knows of. */
  count(): Promise<number>;
  /** Deny every request still waiting here (shutdown). */
  denyAll(reason: string): void;
}
