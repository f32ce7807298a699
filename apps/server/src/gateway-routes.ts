import type { Harness } from "@capgate/harness";
import { type JsonSchema, withSignatures } from "@capgate/schema";
import { type ApprovalHook, LazyAbortController } from "@capgate/tools";
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http-errors.js";
import { checkInput, integerParam } from "./request-check.js";

interface ToolsCallBody {
  tool: string;
  arguments?: Record<string, unknown>;
  profile?: string;
}

const toolsCallSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["tool"],
  properties: {
    tool: { type: "string", minLength: 1, maxLength: 200 },
    arguments: { type: "object" },
    profile: { type: "string", minLength: 1, maxLength: 100 },
  },
};

/**
 * A direct call is the operator's own act (approval mode `never`), but a policy may still
 * ask (a configured shell `ask` rule): over HTTP nobody can answer in time, so it is
 * refused with the reason instead of hanging the request.
 */
const noApprover: ApprovalHook = async (request) => {
  throw new Error(
    `${request.description} — a policy asks for approval and the HTTP gateway has no one to ask; run it from a goal run started with approval, or change the rule`,
  );
};

/** Executor rejections name a property of the tool's arguments; over HTTP it sits under `arguments`. */
function qualify(error: unknown): unknown {
  const e = error as { code?: unknown; property?: unknown };
  if (
    (e?.code === "invalid_arguments" || e?.code === "policy_denied") &&
    typeof e.property === "string" &&
    e.property.length > 0 &&
    e.property !== "arguments" &&
    !e.property.startsWith("arguments.") &&
    !e.property.startsWith("arguments[")
  ) {
    const property = e.property.startsWith("[") ? `arguments${e.property}` : `arguments.${e.property}`;
    Object.defineProperty(error, "property", { value: property });
  }
  return error;
}

/** GET /capabilities, GET /capabilities/search, POST /tools/call. */
export function registerGatewayRoutes(
  app: FastifyInstance,
  deps: { harness: Harness; shutdown: AbortSignal },
): void {
  const { harness } = deps;
  // Calls in flight, so shutdown can stop them (one listener here instead of one per call
  // on the long-lived shutdown signal).
  const inFlight = new Set<LazyAbortController>();
  deps.shutdown.addEventListener(
    "abort",
    () => {
      for (const c of inFlight) c.abort(deps.shutdown.reason);
    },
    { once: true },
  );

  // Configured MCP servers' tools are listed once known: the cache at once, and one short connect on first use.
  // A config reload puts a new mcpServers section in force: list again (kept servers answer from their kept lists).
  let indexed: Promise<unknown> | undefined;
  let indexedFor: unknown;
  const indexMcp = () => {
    if (!harness.mcp) return Promise.resolve();
    if (indexedFor !== harness.config.mcpServers) indexed = undefined;
    indexedFor = harness.config.mcpServers;
    indexed ??= harness.indexMcpTools({ connectTimeoutMs: 3_000 }).catch(() => undefined);
    return indexed;
  };
  app.get("/capabilities", async () => {
    await indexMcp();
    // Each tool with its one-line signature, as search hits and `capgate capabilities --json` give it.
    return harness.registry.list().map(withSignatures);
  });

  app.get("/capabilities/search", async (request) => {
    const query = request.query as Record<string, unknown>;
    const q = Array.isArray(query.q) ? query.q[0] : query.q;
    if (typeof q !== "string" || q.trim().length === 0 || q.length > 500) {
      throw new HttpError(
        400,
        "invalid_request",
        "`q` must be a search query of 1 to 500 characters, e.g. ?q=read%20files.",
        {
          property: "q",
        },
      );
    }
    const limit = integerParam(query.limit, "limit", { min: 1, max: 20 }) ?? 5;
    await indexMcp();
    return harness.registry.search(q, { limit });
  });

  app.post("/tools/call", async (request, reply) => {
    const body = checkInput<ToolsCallBody>(toolsCallSchema, request.body, "the /tools/call body");
    // Stop the tool when the client goes away or the server shuts down. Lazy: the
    // AbortSignal (several µs to make and collect) exists only if the tool reads it.
    const stop = new LazyAbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) stop.abort(new Error("the client disconnected"));
    };
    reply.raw.once("close", onClose);
    inFlight.add(stop);
    try {
      const outcome = await harness
        .callTool(body.tool, body.arguments ?? {}, {
          ...(body.profile ? { profile: body.profile } : {}),
          approval: "never",
          approve: noApprover,
          abort: stop,
        })
        .catch((error: unknown) => {
          throw qualify(error);
        });
      if (deps.shutdown.aborted) {
        throw new HttpError(503, "shutting_down", "The server shut down while the tool was running.");
      }
      return {
        ...outcome.result,
        via: outcome.via,
        ...(outcome.server ? { server: outcome.server } : {}),
      };
    } finally {
      inFlight.delete(stop);
      reply.raw.off("close", onClose);
    }
  });
}
