import type { ApprovalRegistry } from "@capgate/loop";
import {
  findUnstorableText,
  isValidRunId,
  type PendingApproval,
  type RunStore,
  type RunSummary,
} from "@capgate/loop";
import type { JsonSchema } from "@capgate/schema";
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http-errors.js";
import { checkInput, integerParam } from "./request-check.js";
import type { RunFeed } from "./run-feed.js";
import type { ActiveRun, RunLauncher, StartRunRequest } from "./run-launcher.js";

/** `queued`/`running` here; `ended` with a run_ended; `interrupted` when the trace stops short and nothing here is writing it. */
export type RunState = "queued" | "running" | "ended" | "interrupted";

export interface RunView extends Partial<Omit<RunSummary, "phase">> {
  id: string;
  runId: string;
  goal: string;
  status: RunState;
  pendingApprovals: PendingApproval[];
}

const startRunSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["goal"],
  properties: {
    goal: { type: "string", minLength: 1, maxLength: 20_000 },
    profile: { type: "string", minLength: 1, maxLength: 100 },
    model: { type: "string", minLength: 1, maxLength: 2000 },
    maxSteps: { type: "integer", minimum: 1, maximum: 10_000 },
    approval: { enum: ["never", "on-risk", "always"] },
    mcp: { type: "boolean" },
  },
};

const approvalSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["approve"],
  properties: { approve: { type: "boolean" } },
};

export interface RunsDeps {
  /** Where runs' events and summaries are read from (the harness's trace files, or PostgreSQL). */
  store: RunStore;
  runs: RunLauncher;
  approvals: ApprovalRegistry;
  feed: RunFeed;
}

/** POST /runs, GET /runs, GET /runs/:id, GET /runs/:id/events, POST /runs/:id/approvals/:approvalId. */
export function registerRunRoutes(app: FastifyInstance, deps: RunsDeps): void {
  const { store, runs, approvals, feed } = deps;

  const isActive = async (id: string) => feed.isLive(id) || (await runs.get(id)) !== undefined;

  const view = async (
    summary: RunSummary | undefined,
    active: ActiveRun | undefined,
    id: string,
  ): Promise<RunView> => {
    const { phase, ...rest } = summary ?? {};
    const status: RunState = active
      ? active.status
      : summary?.outcome !== undefined || phase === "ended"
        ? "ended"
        : phase === "queued" || phase === "running" || feed.isLive(id)
          ? (phase ?? "running")
          : "interrupted";
    return {
      ...rest,
      id,
      runId: id,
      goal: summary?.goal ?? active?.goal ?? "",
      ...(summary === undefined && active?.profile ? { profile: active.profile } : {}),
      ...(summary === undefined && active ? { queuedAt: active.queuedAt } : {}),
      status,
      pendingApprovals: await approvals.pendingFor(id),
    };
  };

  const checkId = (id: string) => {
    if (!isValidRunId(id)) {
      throw new HttpError(400, "invalid_run_id", `'${id.slice(0, 90)}' is not a valid run id.`, {
        property: "id",
      });
    }
  };

  app.post("/runs", async (request, reply) => {
    const body = checkInput<StartRunRequest>(startRunSchema, request.body, "the /runs body");
    // A NUL or an unpaired surrogate is never meaningful in a goal, and PostgreSQL cannot store it as text.
    const bad = findUnstorableText(body);
    if (bad) {
      throw new HttpError(
        400,
        "invalid_request",
        `Invalid the /runs body: \`${bad.property}\` cannot be stored: ${bad.problem}. Send it without that character.`,
        { property: bad.property },
      );
    }
    const started = await runs.start(body);
    return reply.code(202).send({ id: started.id, status: started.status });
  });

  app.get("/runs", async (request) => {
    const query = request.query as Record<string, unknown>;
    const limit = integerParam(query.limit, "limit", { min: 1, max: 1000 }) ?? 100;
    const [stored, active] = await Promise.all([store.runs(limit), runs.list()]);
    const seen = new Set(stored.map((s) => s.runId));
    const byId = new Map(active.map((r) => [r.id, r]));
    const queued = await Promise.all(
      active.filter((r) => !seen.has(r.id)).map((r) => view(undefined, r, r.id)),
    );
    const listed = await Promise.all(stored.map((s) => view(s, byId.get(s.runId), s.runId)));
    return [...queued, ...listed].slice(0, limit);
  });

  app.get("/runs/:id", async (request) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const [active, summary] = await Promise.all([runs.get(id), store.summary(id)]);
    if (!summary && !active)
      throw new HttpError(404, "run_not_found", `No run '${id}' on this server.`, { property: "id" });
    return view(summary, active, id);
  });

  app.get("/runs/:id/events", async (request, reply) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const header = request.headers["last-event-id"];
    const after = integerParam(header, "Last-Event-ID", { min: 0, max: 999_999_999 }) ?? 0;
    if (!(await isActive(id)) && (await store.summary(id)) === undefined) {
      throw new HttpError(404, "run_not_found", `No run '${id}' on this server.`, { property: "id" });
    }
    reply.hijack();
    await feed.stream(reply.raw, id, { after, isActive: () => isActive(id) });
  });

  app.post("/runs/:id/approvals/:approvalId", async (request) => {
    const { id, approvalId } = request.params as { id: string; approvalId: string };
    checkId(id);
    const body = checkInput<{ approve: boolean }>(approvalSchema, request.body, "the approval body");
    const answered = await approvals.resolve(id, approvalId, body.approve);
    if (!answered) {
      throw new HttpError(
        404,
        "approval_not_found",
        `Run '${id}' has no pending approval '${approvalId.slice(0, 64)}' (it may have been answered, timed out, or the run ended). GET /runs/${id} lists pending approvals.`,
        { property: "approvalId" },
      );
    }
    return { approvalId, runId: id, approved: body.approve, tool: answered.tool };
  });
}
