// A complete third-party capability: manifest + handlers + policy, then one call
// through the executor exactly as the loop would make it. (Type-checked with the package.)

import { mkdtempSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createToolContext,
  defineCapability,
  executeTool,
  type ManifestLike,
} from "@capgate/tools";
import { resolveInWorkspace, workspacePathPolicy } from "@capgate/workspace";

export const manifest = {
  name: "wordcount",
  version: "1.0.0",
  manifestFormat: 1,
  description: "Count words, lines and characters in text files of the workspace.",
  profileFit: ["Researcher", "Coder"],
  tools: [
    {
      name: "wordcount.file",
      description:
        "Count words, lines and characters of one text file in the workspace (like `wc`). Use fs.read to see the text itself.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path: { type: "string", minLength: 1, description: "File path, relative to the workspace." },
        },
        required: ["path"],
      },
    },
  ],
} as const satisfies ManifestLike;

export const capability = defineCapability({
  manifest,
  handlers: {
    // `args` is typed from the schema: { path: string }.
    file: async (args, ctx) => {
      const real = await resolveInWorkspace(ctx, args.path);
      const text = await readFile(real, "utf8");
      const words = text.split(/\s+/).filter(Boolean).length;
      const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
      return {
        success: true,
        summary: `${args.path}: ${lines} lines, ${words} words, ${text.length} characters`,
        data: { lines, words, characters: text.length },
      };
    },
  },
  // Runs before approval and before the handler: an escape is a policy_denied rejection.
  policies: { file: workspacePathPolicy("path") },
});

export async function main(): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), "wordcount-"));
  writeFileSync(join(workspace, "notes.txt"), "one two three\nfour\n");
  const result = await executeTool(
    "wordcount.file",
    { path: "notes.txt" },
    {
      ...createToolContext({ workspace }),
      capabilities: new CapabilitySet([capability]),
      loaded: { isToolLoaded: (tool) => tool.startsWith("wordcount.") },
    },
  );
  console.log(result.summary); // notes.txt: 2 lines, 4 words, 19 characters
}
