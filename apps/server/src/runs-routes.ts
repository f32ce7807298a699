import { type Host, ownerOf, parseStartRunRequest } from "@capgate/host";
import { type ApprovalRefusal, type ApprovalScope, findUnstorableText, isValidRunId } from "@capgate/loop";
import type { JsonSchema } from "@capgate/schema";
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http-errors.js";
import { checkInput, integerParam } from "./request-check.js";

const approvalSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["approve"],
  properties: {
    approve: { type: "boolean" },
    scope: { enum: ["once", "run"] },
    argumentsHash: { type: "string", pattern: "^[0-9a-f]{64}$" },
  },
};

interface ApprovalBody {
  approve: boolean;
  scope?: ApprovalScope;
  argumentsHash?: string;
}

/** Each refusal's code: 404 when there is nothing to answer, 409 when the answer does not fit the request. */
const REFUSALS: Record<ApprovalRefusal, { status: number; code: string }> = {
  not_found: { status: 404, code: "approval_not_found" },
  arguments_mismatch: { status: 409, code: "approval_arguments_mismatch" },
  expired: { status: 409, code: "approval_expired" },
  already_answered: { status: 409, code: "approval_already_answered" },
};

/** POST /runs, GET /runs, GET /runs/:id, GET /runs/:id/events, POST /runs/:id/approvals/:approvalId. */
export function registerRunRoutes(app: FastifyInstance, host: Host): void {
  const { runs, approvals, feed } = host;

  const checkId = (id: string) => {
    if (!isValidRunId(id)) {
      throw new HttpError(400, "invalid_run_id", `'${id.slice(0, 90)}' is not a valid run id.`, {
        property: "id",
      });
    }
  };

  app.post("/runs", async (request, reply) => {
    const body = parseStartRunRequest(request.body, "the /runs body");
    // A NUL or an unpaired surrogate is never meaningful in a goal, and PostgreSQL cannot store it as text.
    const bad = findUnstorableText(body);
    if (bad) {
      throw new HttpError(
        400,
        "invalid_request",
        `The /runs body is not valid: \`${bad.property}\` cannot be stored: ${bad.problem}. Send it without that character.`,
        { property: bad.property },
      );
    }
    const started = await runs.start(body);
    return reply.code(202).send({ id: started.id, status: started.status });
  });

  app.get("/runs", async (request) => {
    const query = request.query as Record<string, unknown>;
    const limit = integerParam(query.limit, "limit", { min: 1, max: 1000 }) ?? 100;
    return host.listRuns(limit);
  });

  app.get("/runs/:id", async (request) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const run = await host.run(id);
    if (!run) throw new HttpError(404, "run_not_found", `No run '${id}' on this server.`, { property: "id" });
    return run;
  });

  app.get("/runs/:id/events", async (request, reply) => {
    const { id } = request.params as { id: string };
    checkId(id);
    const header = request.headers["last-event-id"];
    const after = integerParam(header, "Last-Event-ID", { min: 0, max: 999_999_999 }) ?? 0;
    if (!(await host.isActive(id)) && (await host.store.summary(id)) === undefined) {
      throw new HttpError(404, "run_not_found", `No run '${id}' on this server.`, { property: "id" });
    }
    reply.hijack();
    await feed.stream(reply.raw, id, { after, isActive: () => host.isActive(id) });
  });

  app.post("/runs/:id/approvals/:approvalId", async (request) => {
    const { id, approvalId } = request.params as { id: string; approvalId: string };
    checkId(id);
    const body = checkInput<ApprovalBody>(approvalSchema, request.body, "the approval body");
    if (body.scope === "run" && !body.approve) {
      throw new HttpError(
        400,
        "invalid_request",
        'The approval body is not valid: `scope: "run"` only goes with `approve: true`.',
        {
          property: "scope",
        },
      );
    }
    const scope = body.scope ?? "once";
    const answered = await approvals.resolve(id, approvalId, {
      approve: body.approve,
      scope,
      ...(body.argumentsHash ? { argumentsHash: body.argumentsHash } : {}),
      decidedBy: `api:${ownerOf(request.headers.authorization)}`,
    });
    if (!answered.ok) {
      const { status, code } = REFUSALS[answered.refused];
      const property = answered.refused === "arguments_mismatch" ? "argumentsHash" : "approvalId";
      throw new HttpError(status, code, answered.message, { property });
    }
    return { approvalId, runId: id, approved: body.approve, scope, tool: answered.approval.tool };
  });
}
