import type { ManifestLike } from "@capgate/tools";

/** Snippets in a subprocess (Node.js or Python 3), with a timeout and an output cap. */
export const manifest = {
  name: "code",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Run a quick JavaScript (Node.js) or Python script to calculate, transform data or try an idea. Use shell.run for project commands such as tests and builds.",
  profileFit: ["Coder", "Verifier"],
  tools: [
    {
      name: "code.run",
      description:
        "Run `source` as a JavaScript (Node.js) or Python 3 program in a subprocess in the workspace and return its exit code, stdout and stderr (output capped); print the results you need.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          language: {
            type: "string",
            enum: ["javascript", "python"],
            description: "'javascript' runs with Node.js (ES modules allowed), 'python' with python3.",
          },
          source: {
            type: "string",
            minLength: 1,
            maxLength: 200000,
            description: "The program text.",
          },
          timeout_ms: {
            type: "integer",
            minimum: 100,
            maximum: 600000,
            description:
              "Kill the program after this many milliseconds (default 30000; the host's per-call limit still applies).",
          },
        },
        required: ["language", "source"],
      },
    },
  ],
} as const satisfies ManifestLike;
