import type { ElicitationAnswer, ElicitationRegistry, McpLoginRegistry } from "@capgate/host";
import type { JsonSchema } from "@capgate/schema";
import type { FastifyInstance } from "fastify";
import { checkInput } from "./request-check.js";

const answerSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["action"],
  properties: {
    action: { enum: ["accept", "decline", "cancel"] },
    content: { type: "object" },
  },
};

/** GET /mcp-logins, POST /mcp-logins/:server, GET /elicitations, POST /elicitations/:id. */
export function registerMcpInteractionRoutes(
  app: FastifyInstance,
  deps: { logins: McpLoginRegistry; elicitations: ElicitationRegistry },
): void {
  const { logins, elicitations } = deps;
  app.get("/mcp-logins", async () => ({ logins: await logins.list() }));
  app.post("/mcp-logins/:server", async (request) => {
    const { server } = request.params as { server: string };
    return logins.start(server);
  });
  app.get("/elicitations", async () => ({ elicitations: elicitations.list() }));
  app.post("/elicitations/:id", async (request) => {
    const { id } = request.params as { id: string };
    const body = checkInput<{ action: ElicitationAnswer["action"]; content?: Record<string, never> }>(
      answerSchema,
      request.body,
      "the answer",
    );
    const answer: ElicitationAnswer =
      body.action === "accept" ? { action: "accept", content: body.content ?? {} } : { action: body.action };
    const info = elicitations.answer(id, answer);
    return { ok: true, elicitationId: info.elicitationId, action: answer.action };
  });
}
