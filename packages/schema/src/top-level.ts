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
      "Find capabilities for a need, e.g. 'read files'; returns them with tool signatures. Load one before calling its tools.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        query: {
          type: "string",
          minLength: 1,
          maxLength: 500,
          description: "The need, in a few words.",
        },
        limit: { type: "integer", minimum: 1, maximum: 20, description: "Default 5." },
      },
      required: ["query"],
    },
  },
  capability_load: {
    description: "Load a capability by name; the reply lists its tools' exact signatures.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        name: { type: "string", minLength: 1, description: "e.g. 'fs' or 'mcp:github'." },
      },
      required: ["name"],
    },
  },
  capability_call: {
    description: "Call a loaded tool by full name (e.g. 'fs.read') with arguments matching its signature.",
    inputSchema: {
      type: "object",
      additionalProperties: true,
      properties: {
        tool: {
          type: "string",
          minLength: 1,
        },
        arguments: { type: "object" },
      },
      required: ["tool"],
    },
  },
  goal_update: {
    description: "Record plan, progress or notes between steps; changes nothing outside.",
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
    description: "Search remembered notes and past run summaries.",
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
      "Prove a claim by running a shell command in the workspace (e.g. the tests); passes on exit 0. Needed after your last change before finish.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        claim: { type: "string", minLength: 1 },
        command: { type: "string", minLength: 1 },
        timeout_ms: { type: "integer", minimum: 1, maximum: 3600000 },
      },
      required: ["claim", "command"],
    },
  },
  finish: {
    description: "End the goal with a summary; refused unless a verify passed after the last change.",
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

let shared: Readonly<Record<TopLevelToolName, JsonSchema>> | undefined;

/**
 * One frozen copy of the eight schemas, shared by every parse that uses the defaults:
 * the validator cache finds it by identity, so the hot path never re-hashes a schema.
 */
export function sharedTopLevelToolSchemas(): Readonly<Record<TopLevelToolName, JsonSchema>> {
  shared ??= deepFreeze(topLevelToolSchemas());
  return shared;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export function isTopLevelToolName(name: string): name is TopLevelToolName {
  return Object.hasOwn(TOP_LEVEL_TOOLS, name);
}
