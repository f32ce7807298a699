import type { ManifestLike } from "@capgate/tools";

const id = {
  type: "string",
  minLength: 1,
  maxLength: 100,
  description: "Worker id returned by workers.spawn.",
} as const;

/**
 * Delegation: workers are child goal runs with their own router, profile and events. The
 * rule in the description (refused unless the profile may spawn workers) is enforced by
 * the capability's policy, not left to the model.
 */
export const manifest = {
  name: "workers",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Delegate sub-goals to worker agents that run in parallel in the same workspace, then wait for their results. Refused unless the current profile may spawn workers (by default only Orchestrator).",
  profileFit: ["Orchestrator"],
  tools: [
    {
      name: "workers.spawn",
      description:
        "Start a worker on a self-contained sub-goal and return its id at once; it loads its own capabilities. State the goal completely, including how to verify it.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          goal: {
            type: "string",
            minLength: 1,
            maxLength: 20000,
            description: "What the worker must achieve, with the acceptance check.",
          },
          profile: {
            type: "string",
            minLength: 1,
            maxLength: 64,
            description:
              "Profile for the worker, e.g. 'Coder', 'Researcher' (default: inferred from the goal).",
          },
        },
        required: ["goal"],
      },
    },
    {
      name: "workers.wait",
      description:
        "Wait until a worker ends or `timeout_ms` passes, then return its status and final summary.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          id,
          timeout_ms: {
            type: "integer",
            minimum: 100,
            maximum: 600000,
            description:
              "Longest wait in milliseconds (default 60000; the host's per-call limit still applies).",
          },
        },
        required: ["id"],
      },
    },
    {
      name: "workers.list",
      description: "List this run's workers with id, goal, profile and status.",
      risk: "read",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "workers.cancel",
      description: "Stop a running worker; files it already changed stay changed.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { id },
        required: ["id"],
      },
    },
  ],
} as const satisfies ManifestLike;
