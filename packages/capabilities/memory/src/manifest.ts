import type { ManifestLike } from "@capgate/tools";

/** The write side of memory; the read side is the top-level memory_search tool. */
export const manifest = {
  name: "memory",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Long-term memory that persists across runs: remember a fact, decision or finding, recall what was remembered (recent notes), forget one. Search notes with the top-level memory_search.",
  profileFit: ["Researcher", "Orchestrator"],
  tools: [
    {
      name: "memory.remember",
      description:
        "Save a short self-contained note for later runs (what was learned, decided or found, with its source) and return its id.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          text: {
            type: "string",
            minLength: 1,
            maxLength: 10000,
            description: "The note, written to make sense without this run's context.",
          },
          tags: {
            type: "array",
            maxItems: 20,
            uniqueItems: true,
            items: { type: "string", minLength: 1, maxLength: 50 },
            description: "Keywords that help memory_search find the note, e.g. ['deploy', 'staging'].",
          },
        },
        required: ["text"],
      },
    },
    {
      name: "memory.forget",
      description:
        "Delete a note by its id (from memory.list or memory_search), e.g. when it is wrong or outdated.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          id: { type: "string", minLength: 1, maxLength: 100, description: "Note id." },
        },
        required: ["id"],
      },
    },
    {
      name: "memory.list",
      description:
        "Recall what was remembered: the most recent notes, newest first, with ids and tags. Use memory_search to find notes by topic.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 200,
            description: "Most notes to list (default 20).",
          },
        },
      },
    },
  ],
} as const satisfies ManifestLike;
