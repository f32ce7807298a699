import type { GateSessions } from "@capgate/host";
import type { FastifyInstance } from "fastify";

/** `/mcp`: the gate as a Streamable HTTP MCP server, each client in its own gate session. */
export function registerMcpRoute(app: FastifyInstance, gates: GateSessions): void {
  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    handler: async (request, reply) => {
      const header = request.headers["mcp-session-id"];
      const route = await gates.route({
        method: request.method,
        sessionId: typeof header === "string" ? header : undefined,
        body: request.body,
        authorization: request.headers.authorization,
      });
      if (!route.ok) return reply.code(route.status).send(route.body);
      reply.hijack();
      await gates.serve(route, request.raw, reply.raw, request.body, (error) =>
        request.log.error({ err: error }, "mcp request failed"),
      );
    },
  });
}
