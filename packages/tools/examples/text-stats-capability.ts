// A complete capability on the contract alone: manifest + handler + policy, then one call
// through the executor exactly as a host makes it. It touches no file, process or network,
// so it runs wherever JavaScript does. (Type-checked with the package.)

import {
  CapabilitySet,
  createToolContext,
  defineCapability,
  executeTool,
  type ManifestLike,
  PolicyDeniedError,
} from "@capgate/tools";

export const manifest = {
  name: "textstats",
  version: "1.0.0",
  manifestFormat: 1,
  description: "Count words, lines and characters of a text the model already has.",
  profileFit: ["Researcher", "Writer"],
  tools: [
    {
      name: "textstats.count",
      description:
        "Count words, lines and characters of `text` (like `wc`). Use fs.read first to get a file's text.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { text: { type: "string", description: "The text to count." } },
        required: ["text"],
      },
    },
  ],
} as const satisfies ManifestLike;

export const capability = defineCapability({
  manifest,
  handlers: {
    // `args` is typed from the schema: { text: string }.
    count: async (args) => {
      const words = args.text.split(/\s+/).filter(Boolean).length;
      const lines = args.text.split("\n").length - (args.text.endsWith("\n") ? 1 : 0);
      return {
        success: true,
        summary: `${lines} lines, ${words} words, ${args.text.length} characters`,
        data: { lines, words, characters: args.text.length },
      };
    },
  },
  // Runs before approval and before the handler: a refusal is a policy_denied rejection.
  policies: {
    count: (args) => {
      if (args.text.length > 1_000_000)
        throw new PolicyDeniedError("text is over 1,000,000 characters; count a part of it.", {
          property: "text",
        });
      return undefined;
    },
  },
});

export async function main(): Promise<string> {
  const result = await executeTool(
    "textstats.count",
    { text: "one two three\nfour\n" },
    {
      ...createToolContext({ workspace: "/" }),
      capabilities: new CapabilitySet([capability]),
      loaded: { isToolLoaded: (tool) => tool.startsWith("textstats.") },
    },
  );
  return result.summary; // "2 lines, 4 words, 19 characters"
}
