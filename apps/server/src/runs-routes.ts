import { type Host, parseStartRunRequest } from "@capgate/host";
import { findUnstorableText, isValidRunId } from "@capgate/loop";
import type { JsonSchema } from "@capgate/schema";
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http-errors.js";
import { checkInput, integerParam } from "./request-check.js";

const approvalSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["approve"],
  properties: { approve: { type: "boolean" } },
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
