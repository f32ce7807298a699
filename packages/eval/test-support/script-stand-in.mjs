// Stands in for @capgate/capability-script (issue 21) in the tests of code mode: a capability
// named `script`, so the test can see that code mode preloads whatever is registered under
// that name. It runs nothing.
import { defineCapability } from "@capgate/tools";

export const capability = defineCapability({
  manifest: {
    name: "script",
    version: "0.0.0",
    description:
      "Stand-in for the script capability in capgate eval's tests: run a program that calls several tools.",
    profileFit: [],
    tools: [
      {
        name: "script.run",
        description: "Stand-in: answers that it ran nothing.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { source: { type: "string" } },
          required: ["source"],
        },
      },
    ],
  },
  handlers: { run: async () => ({ success: true, summary: "stand-in: nothing ran" }) },
});
