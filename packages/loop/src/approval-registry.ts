import type { ApprovalScope, LoopApprovalHook } from "./deps.js";

/** An approval a run is waiting for, as GET /runs/:id shows it. */
export interface PendingApproval {
  approvalId: string;
  runId: string;
  tool: string;
  capability: string;
  risk: string;
  arguments: unknown;
  /** SHA-256 of the arguments' canonical JSON: an answer that names another hash is refused. */
  argumentsHash: string;
  description: string;
  requestedAt: string;
  /** When the request stops being answerable (absent: it waits until the run ends). */
  expiresAt?: string;
}

/** An operator's answer to one pending approval. */
export interface ApprovalAnswer {
  approve: boolean;
  /** `once` (default): this call only; `run`: also every later call of this tool in this run or chat session. */
  scope?: ApprovalScope;
  /** The `argumentsHash` the operator saw; when given and not the pending request's, nothing is approved. */
  argumentsHash?: string;
  /** Who answered, as the trace records it (`cli`, `api:<owner>`, `viewer`…). */
  decidedBy: string;
}

/** Why an answer was refused (nothing was approved or denied by it). */
export type ApprovalRefusal = "not_found" | "arguments_mismatch" | "expired" | "already_answered";

/** What answering did: the approval it settled, or why it settled nothing. */
export type ApprovalResolution =
  | { ok: true; approval: PendingApproval }
  | { ok: false; refused: ApprovalRefusal; message: string };

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
  /**
   * Answer one pending approval. Refused — and nothing approved — when the run has no such
   * request, it was already answered (a replay), it expired, or the answer's
   * `argumentsHash` is not the request's.
   */
  resolve(runId: string, approvalId: string, answer: ApprovalAnswer): Promise<ApprovalResolution>;
  /** Pending approvals this registry knows of. */
  count(): Promise<number>;
  /** Deny every request still waiting here (shutdown). */
  denyAll(reason: string): void;
}

/** Why a request ended without an operator's answer; `decidedBy` is what the trace records. */
export class ApprovalUnansweredError extends Error {
  constructor(
    message: string,
    readonly decidedBy: "timeout" | "abort" | "shutdown",
  ) {
    super(message);
    this.name = "ApprovalUnansweredError";
  }
}

/** The message of each refusal, for whoever sent the answer. */
export function refusalMessage(refused: ApprovalRefusal, runId: string, approvalId: string): string {
  const id = approvalId.slice(0, 64);
  switch (refused) {
    case "not_found":
      return `Run '${runId}' has no pending approval '${id}' (it may have been answered, timed out, or the run ended). GET /runs/${runId} lists pending approvals.`;
    case "arguments_mismatch":
      return `Approval '${id}' of run '${runId}' is for other arguments than the argumentsHash you sent; nothing was approved. GET /runs/${runId} shows the pending request and its argumentsHash.`;
    case "expired":
      return `Approval '${id}' of run '${runId}' expired before this answer; nothing was approved and the call was refused.`;
    case "already_answered":
      return `Approval '${id}' of run '${runId}' was already answered; an approval answers one call once.`;
  }
}
