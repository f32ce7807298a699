import { randomUUID } from "node:crypto";
import {
  type ApprovalRegistry,
  decodeJson,
  encodeJson,
  type LoopApprovalHook,
  type LoopApprovalRequest,
  type PendingApproval,
} from "@capgate/loop";
import type { Database } from "./database.js";
import type { Notifier } from "./notifier.js";

export const APPROVALS_CHANNEL = "capgate_approvals";

export interface PgApprovalsOptions {
  /** Deny a request nobody answered within this time (default 15 minutes; 0 = wait until the run ends). */
  timeoutMs?: number;
}

interface Waiter {
  runId: string;
  settle: (answer: boolean | Error) => void;
  check: () => void;
  withdraw: (status: "denied" | "cancelled", reason: string) => void;
}

/**
 * Approvals in `capgate.approvals`: the worker's hook inserts the request and waits; any
 * API node answers it with an UPDATE … WHERE status = 'pending' (so exactly one answer
 * wins) and a NOTIFY carrying the approval id, which wakes the waiting worker. A lost
 * LISTEN connection re-checks every waiter once it is back.
 */
export class PgApprovalRegistry implements ApprovalRegistry {
  readonly #waiters = new Map<string, Waiter>();
  readonly #timeoutMs: number;
  #listening: Promise<unknown> | undefined;

  constructor(
    private readonly db: Database,
    private readonly notifier: Notifier,
    options: PgApprovalsOptions = {},
  ) {
    this.#timeoutMs = options.timeoutMs ?? 15 * 60_000;
    notifier.onReconnect(() => {
      for (const w of this.#waiters.values()) w.check();
    });
  }

  /** Announces pending (`request.onPending`) only after the INSERT: then any node can answer it. */
  readonly hook: LoopApprovalHook = Object.assign(
    (request: LoopApprovalRequest, signal: AbortSignal) => this.#wait(request, signal),
    { announcesPending: true },
  );

  async #wait(request: LoopApprovalRequest, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) throw new Error("the run was stopped before anyone answered");
    this.#listening ??= this.notifier.listen(APPROVALS_CHANNEL, (id) => this.#waiters.get(id)?.check());
    await this.#listening;
    const approvalId = request.approvalId ?? randomUUID();
    const info = {
      tool: request.tool,
      capability: request.capability,
      risk: request.risk,
      arguments: request.arguments,
      description: request.description,
    };
    await this.db.pool.query(
      "INSERT INTO capgate.approvals (approval_id, run_id, request, status) VALUES ($1, $2, $3, 'pending')",
      [approvalId, request.runId, encodeJson(info)],
    );
    request.onPending?.();
    return new Promise<boolean>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const settle = (answer: boolean | Error) => {
        if (done) return;
        done = true;
        this.#waiters.delete(approvalId);
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      // Close the request in the table (so no node shows it as pending), then settle locally.
      const withdraw = (status: "denied" | "cancelled", reason: string) => {
        void this.db.pool
          .query(
            "UPDATE capgate.approvals SET status = $2, reason = $3, answered_at = now() WHERE approval_id = $1 AND status = 'pending' RETURNING 1",
            [approvalId, status, reason],
          )
          .then(
            (r) => (r.rowCount ? settle(new Error(reason)) : check()),
            () => settle(new Error(reason)),
          );
      };
      const check = () => {
        void this.db.pool
          .query<{ status: string }>("SELECT status FROM capgate.approvals WHERE approval_id = $1", [
            approvalId,
          ])
          .then(
            ({ rows }) => {
              const status = rows[0]?.status;
              if (status === "approved") settle(true);
              else if (status === "denied") settle(false);
              else if (status === "cancelled" || status === undefined)
                settle(new Error("the request was withdrawn before anyone answered"));
            },
            () => undefined,
          );
      };
      const onAbort = () => withdraw("cancelled", "the run was stopped before anyone answered");
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.#timeoutMs > 0) {
        timer = setTimeout(
          () => withdraw("denied", `nobody answered within ${Math.round(this.#timeoutMs / 1000)} s`),
          this.#timeoutMs,
        );
        timer.unref();
      }
      this.#waiters.set(approvalId, { runId: request.runId, settle, check, withdraw });
      // An answer that came in between the INSERT and the LISTEN handler being in place.
      check();
    });
  }

  async pendingFor(runId: string): Promise<PendingApproval[]> {
    const { rows } = await this.db.pool.query<ApprovalRow>(
      "SELECT approval_id, run_id, request, requested_at FROM capgate.approvals WHERE run_id = $1 AND status = 'pending' ORDER BY requested_at, approval_id",
      [runId],
    );
    return rows.map(toPending);
  }

  async resolve(runId: string, approvalId: string, approve: boolean): Promise<PendingApproval | undefined> {
    const { rows } = await this.db.pool.query<ApprovalRow>(
      `WITH answered AS (
         UPDATE capgate.approvals SET status = $3, answered_at = now()
         WHERE approval_id = $1 AND run_id = $2 AND status = 'pending'
         RETURNING approval_id, run_id, request, requested_at)
       SELECT answered.*, pg_notify($4, answered.approval_id) FROM answered`,
      [approvalId, runId, approve ? "approved" : "denied", APPROVALS_CHANNEL],
    );
    return rows[0] ? toPending(rows[0]) : undefined;
  }

  async count(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM capgate.approvals WHERE status = 'pending'",
    );
    return Number(rows[0]?.n ?? 0);
  }

  denyAll(reason: string): void {
    for (const w of [...this.#waiters.values()]) w.withdraw("cancelled", reason);
  }
}

interface ApprovalRow {
  approval_id: string;
  run_id: string;
  request: Omit<PendingApproval, "approvalId" | "runId" | "requestedAt">;
  requested_at: Date;
}

function toPending(row: ApprovalRow): PendingApproval {
  const r = { ...row, request: decodeJson<ApprovalRow["request"]>(row.request) };
  return {
    approvalId: r.approval_id,
    runId: r.run_id,
    tool: r.request.tool,
    capability: r.request.capability,
    risk: r.request.risk,
    arguments: r.request.arguments,
    description: r.request.description,
    requestedAt: r.requested_at.toISOString(),
  };
}
