import { randomUUID } from "node:crypto";
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalRefusal,
  type ApprovalRegistry,
  type ApprovalResolution,
  ApprovalUnansweredError,
  decodeJson,
  encodeJson,
  type LoopApprovalHook,
  type LoopApprovalRequest,
  type PendingApproval,
  refusalMessage,
} from "@capgate/loop";
import { argumentsHash } from "@capgate/schema";
import type { Database } from "./database.js";
import type { Notifier } from "./notifier.js";

export const APPROVALS_CHANNEL = "capgate_approvals";

export interface PgApprovalsOptions {
  /** Deny a request nobody answered within this time (default 15 minutes; 0 = wait until the run ends). */
  timeoutMs?: number;
}

type Unanswered = ApprovalUnansweredError["decidedBy"];

interface Waiter {
  runId: string;
  settle: (answer: ApprovalDecision | Error) => void;
  check: () => void;
  withdraw: (status: "expired" | "cancelled", reason: string, decidedBy: Unanswered) => void;
}

/**
 * Approvals in `capgate.approvals`: the worker's hook inserts the request and waits; any
 * API node answers it with an UPDATE … WHERE status = 'pending' (so exactly one answer
 * wins), before `expires_at` and, when the answer names one, for the same
 * `arguments_hash`; a NOTIFY carrying the approval id wakes the waiting worker, which reads
 * the answer's scope and who decided from the row. A lost LISTEN connection re-checks
 * every waiter once it is back.
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
    this.hook = Object.assign(
      (request: LoopApprovalRequest, signal: AbortSignal) => this.#wait(request, signal),
      { announcesPending: true, timeoutMs: this.#timeoutMs },
    );
    notifier.onReconnect(() => {
      for (const w of this.#waiters.values()) w.check();
    });
  }

  /** Announces pending (`request.onPending`) only after the INSERT: then any node can answer it. */
  readonly hook: LoopApprovalHook;

  async #wait(request: LoopApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    if (signal.aborted)
      throw new ApprovalUnansweredError("the run was stopped before anyone answered", "abort");
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
    const hash = request.argumentsHash ?? (await argumentsHash(request.arguments));
    const expiresAt =
      request.expiresAt ??
      (this.#timeoutMs > 0 ? new Date(Date.now() + this.#timeoutMs).toISOString() : undefined);
    await this.db.pool.query(
      "INSERT INTO capgate.approvals (approval_id, run_id, request, status, arguments_hash, expires_at) VALUES ($1, $2, $3, 'pending', $4, $5)",
      [approvalId, request.runId, encodeJson(info), hash, expiresAt ?? null],
    );
    request.onPending?.();
    return new Promise<ApprovalDecision>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let retry: NodeJS.Timeout | undefined;
      let retryMs = 250;
      let done = false;
      const settle = (answer: ApprovalDecision | Error) => {
        if (done) return;
        done = true;
        this.#waiters.delete(approvalId);
        if (timer) clearTimeout(timer);
        if (retry) clearTimeout(retry);
        signal.removeEventListener("abort", onAbort);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      // Close the request in the table (so no node shows it as pending), then settle locally.
      const withdraw = (status: "expired" | "cancelled", reason: string, decidedBy: Unanswered) => {
        const unanswered = new ApprovalUnansweredError(reason, decidedBy);
        void this.db.pool
          .query(
            "UPDATE capgate.approvals SET status = $2, reason = $3, decided_by = $4, answered_at = now() WHERE approval_id = $1 AND status = 'pending' RETURNING 1",
            [approvalId, status, reason, decidedBy],
          )
          .then(
            (r) => (r.rowCount ? settle(unanswered) : check()),
            () => settle(unanswered),
          );
      };
      const check = () => {
        void this.db.pool
          .query<{ status: string; scope: string | null; decided_by: string | null; reason: string | null }>(
            "SELECT status, scope, decided_by, reason FROM capgate.approvals WHERE approval_id = $1",
            [approvalId],
          )
          .then(
            ({ rows }) => {
              const row = rows[0];
              const status = row?.status;
              if (status === "approved" || status === "denied") {
                settle({
                  approved: status === "approved",
                  scope: row?.scope === "run" && status === "approved" ? "run" : "once",
                  decidedBy: row?.decided_by ?? "api",
                });
              } else if (status === "expired") {
                settle(new ApprovalUnansweredError(row?.reason ?? "the request expired", "timeout"));
              } else if (status === "cancelled" || status === undefined) {
                const by = row?.decided_by === "shutdown" ? "shutdown" : "abort";
                settle(new ApprovalUnansweredError("the request was withdrawn before anyone answered", by));
              }
            },
            // A read that failed (no connection within the pool's timeout on a loaded
            // machine, a dropped connection) is tried again: the answer's notification came
            // once, and a lost read must not leave the run waiting until the request expires.
            () => {
              if (done) return;
              if (retry) clearTimeout(retry);
              retry = setTimeout(check, retryMs);
              retryMs = Math.min(retryMs * 2, 5_000);
            },
          );
      };
      const onAbort = () => withdraw("cancelled", "the run was stopped before anyone answered", "abort");
      signal.addEventListener("abort", onAbort, { once: true });
      if (expiresAt) {
        timer = setTimeout(
          () =>
            withdraw("expired", `nobody answered within ${Math.round(this.#timeoutMs / 1000)} s`, "timeout"),
          Math.max(0, Date.parse(expiresAt) - Date.now()),
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
      `SELECT ${ROW_COLUMNS} FROM capgate.approvals WHERE run_id = $1 AND status = 'pending' ORDER BY requested_at, approval_id`,
      [runId],
    );
    return Promise.all(rows.map(toPending));
  }

  /**
   * One UPDATE settles it only while pending, unexpired (the database's clock) and, when the
   * answer names a hash, for that hash; otherwise a read says why nothing was settled.
   */
  async resolve(runId: string, approvalId: string, answer: ApprovalAnswer): Promise<ApprovalResolution> {
    const scope = answer.approve ? (answer.scope ?? "once") : "once";
    const { rows } = await this.db.pool.query<ApprovalRow>(
      `WITH answered AS (
         UPDATE capgate.approvals SET status = $3, scope = $5, decided_by = $6, answered_at = now()
         WHERE approval_id = $1 AND run_id = $2 AND status = 'pending'
           AND (expires_at IS NULL OR expires_at > now())
           AND ($7::text IS NULL OR arguments_hash = $7::text)
         RETURNING ${ROW_COLUMNS})
       SELECT answered.*, pg_notify($4, answered.approval_id) FROM answered`,
      [
        approvalId,
        runId,
        answer.approve ? "approved" : "denied",
        APPROVALS_CHANNEL,
        scope,
        answer.decidedBy,
        answer.argumentsHash ?? null,
      ],
    );
    if (rows[0]) return { ok: true, approval: await toPending(rows[0]) };
    const refused = await this.#whyUnanswered(runId, approvalId, answer.argumentsHash);
    return { ok: false, refused, message: refusalMessage(refused, runId, approvalId) };
  }

  async #whyUnanswered(
    runId: string,
    approvalId: string,
    hash: string | undefined,
  ): Promise<ApprovalRefusal> {
    const { rows } = await this.db.pool.query<{
      run_id: string;
      status: string;
      arguments_hash: string | null;
      past: boolean;
    }>(
      "SELECT run_id, status, arguments_hash, coalesce(expires_at <= now(), false) AS past FROM capgate.approvals WHERE approval_id = $1",
      [approvalId],
    );
    const row = rows[0];
    if (!row || row.run_id !== runId) return "not_found";
    if (row.status === "expired" || (row.status === "pending" && row.past)) return "expired";
    if (row.status !== "pending") return "already_answered";
    if (hash !== undefined && row.arguments_hash !== hash) return "arguments_mismatch";
    return "not_found";
  }

  async count(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM capgate.approvals WHERE status = 'pending'",
    );
    return Number(rows[0]?.n ?? 0);
  }

  denyAll(reason: string): void {
    for (const w of [...this.#waiters.values()]) w.withdraw("cancelled", reason, "shutdown");
  }
}

const ROW_COLUMNS = "approval_id, run_id, request, requested_at, arguments_hash, expires_at";

interface ApprovalRow {
  approval_id: string;
  run_id: string;
  request: Pick<PendingApproval, "tool" | "capability" | "risk" | "arguments" | "description">;
  requested_at: Date;
  arguments_hash: string | null;
  expires_at: Date | null;
}

async function toPending(row: ApprovalRow): Promise<PendingApproval> {
  const request = decodeJson<ApprovalRow["request"]>(row.request);
  return {
    approvalId: row.approval_id,
    runId: row.run_id,
    tool: request.tool,
    capability: request.capability,
    risk: request.risk,
    arguments: request.arguments,
    // A row from before schema version 3 has no hash stored: the one its arguments give.
    argumentsHash: row.arguments_hash ?? (await argumentsHash(request.arguments)),
    description: request.description,
    requestedAt: row.requested_at.toISOString(),
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
  };
}
