import type { JsonSchema } from "./json-schema.js";

export interface TopLevelToolDefinition {
  description: string;
  inputSchema: JsonSchema;
}

/**
 * The eight top-level tools — the only names a model may put in an action's `name`.
 * Everything else (the names list, the parser's allowed set, signatures, native tool
 * definitions) is derived from this one map, so a name is never listed twice.
 */
const TOP_LEVEL_TOOLS = {
  capability_search: {
    description:
      "Search the capability registry for tools that fit a need, e.g. 'read files' or 'open a web page'. Returns capabilities with their tool signatures; load one with capability_load before calling its tools.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        query: {
          type: "string",
          minLength: 1,
          maxLength: 500,
          description: "What you need to do, in a few words.",
        },
        limit: { type: "integer", minimum: 1, maximum: 20, description: "Most hits to return (default 5)." },
      },
      required: ["query"],
    },
  },
  capability_load: {
    description:
      "Load a capability by name (as returned by capability_search) so its tools can be called. The reply lists the exact signatures of the loaded tools.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        name: { type: "string", minLength: 1, description: "Capability name, e.g. 'fs' or 'mcp:github'." },
      },
      required: ["name"],
    },
  },
  capability_call: {
    description:
      "Call one tool of a loaded capability. `tool` is its full name (e.g. 'fs.read'); `arguments` must match the tool's signature exactly.",
    inputSchema: {
      type: "object",
      additionalProperties: true,
      properties: {
        tool: {
          type: "string",
          minLength: 1,
          description: "Full tool name, e.g. 'fs.read' or 'github/create_issue'.",
        },
        arguments: { type: "object", description: "The tool's arguments, validated against its schema." },
      },
      required: ["tool"],
    },
  },
  goal_update: {
    description:
      "Record the plan, progress or a note about the goal. Use it to keep state between steps; it does not act on the world.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      minProperties: 1,
      properties: {
        status: { type: "string", enum: ["planning", "working", "blocked"] },
        plan: { type: "array", items: { type: "string" }, maxItems: 50 },
        progress: { type: "string" },
        note: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
      },
    },
  },
  memory_search: {
    description: "Search remembered notes, earlier goal notes and run summaries.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500 },
        limit: { type: "integer", minimum: 1, maximum: 20 },
      },
      required: ["query"],
    },
  },
  verify: {
    description:
      "Check a claim by running a shell command in the workspace (e.g. the test suite). Passes on exit code 0. A passing verify after your last change is required before finish.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        claim: { type: "string", minLength: 1, description: "What the command proves." },
        command: { type: "string", minLength: 1, description: "Shell command to run in the workspace." },
        timeout_ms: { type: "integer", minimum: 1, maximum: 3600000 },
      },
      required: ["claim", "command"],
    },
  },
  finish: {
    description:
      "Finish the goal with a summary. Refused unless a verify passed after the last change to files or processes.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        summary: { type: "string", minLength: 1 },
        evidence: { type: "string" },
      },
      required: ["summary"],
    },
  },
  mark_impossible: {
    description: "End the run because the goal cannot be achieved here; say why and what was tried.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        reason: { type: "string", minLength: 1 },
        attempts: { type: "array", items: { type: "string" } },
      },
      required: ["reason"],
    },
  },
} as const satisfies Record<string, TopLevelToolDefinition>;

export type TopLevelToolName = keyof typeof TOP_LEVEL_TOOLS;

/** The eight names, in protocol order, derived from the tool map's keys. */
export const TOP_LEVEL_TOOL_NAMES: readonly TopLevelToolName[] = Object.freeze(
  Object.keys(TOP_LEVEL_TOOLS) as TopLevelToolName[],
);

export function topLevelToolNames(): TopLevelToolName[] {
  return [...TOP_LEVEL_TOOL_NAMES];
}

/** name → JSON Schema for the eight tools (a fresh deep copy: callers may not mutate ours). */
export function topLevelToolSchemas(): Record<TopLevelToolName, JsonSchema> {
  const out = {} as Record<TopLevelToolName, JsonSchema>;
  for (const name of TOP_LEVEL_TOOL_NAMES)
    out[name] = structuredClone(TOP_LEVEL_TOOLS[name].inputSchema) as JsonSchema;
  return out;
}

/** name, description and schema of each top-level tool, for native tool-calling APIs and MCP. */
export function topLevelTools(): Array<{
  name: TopLevelToolName;
  description: string;
  inputSchema: JsonSchema;
}> {
  return TOP_LEVEL_TOOL_NAMES.map((name) => ({
    name,
    description: TOP_LEVEL_TOOLS[name].description,
    inputSchema: structuredClone(TOP_LEVEL_TOOLS[name].inputSchema) as JsonSchema,
  }));
}

export function isTopLevelToolName(name: string): name is TopLevelToolName {
  return Object.hasOwn(TOP_LEVEL_TOOLS, name);
}
