import type { ManifestLike } from "@capgate/tools";

/** Code mode as a capability: the model still sees eight tools and reaches this by search → load → call. */
export const manifest = {
  name: "script",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Code mode: chain several tool calls in one step (batch calls, loop over files, filter results) from JavaScript in an isolate, each call validated, policed, approved and traced like capability_call.",
  profileFit: ["Orchestrator", "Coder", "Researcher", "Verifier"],
  tools: [
    {
      name: "script.run",
      description:
        'Chain several tool calls in one step: loop over files, batch calls, filter results, return only what matters (intermediate results stay out of your context). `source` is an async function body like `const r = await tools.fs.read({ path }); return r.data;` or `tools.call("server/tool", args)`; console.log lines are kept. Declarations: script.types.',
      // The program itself can only compute; every tool it calls is approved by its own risk.
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          source: {
            type: "string",
            minLength: 1,
            maxLength: 262144,
            description:
              "Body of an async function: `const r = await tools.fs.read({ path: 'a.txt' }); return r.data;`. No require, import, fetch, process or timers.",
          },
          timeout_ms: {
            type: "integer",
            minimum: 1,
            maximum: 3600000,
            description:
              "Deadline in ms (default 30000; the host caps it). Time waiting for an approval does not count.",
          },
        },
        required: ["source"],
      },
    },
    {
      name: "script.types",
      description:
        "TypeScript declarations of the loaded tools for script.run: each tool's arguments from its schema, its result type, and the errors a call throws. Pass `tools` to get only some capabilities or tools.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          tools: {
            type: "array",
            maxItems: 100,
            items: { type: "string", minLength: 1, maxLength: 200 },
            description:
              "Capability or tool names to declare, e.g. ['fs', 'git.status'] (default: all loaded).",
          },
        },
      },
    },
  ],
} as const satisfies ManifestLike;
