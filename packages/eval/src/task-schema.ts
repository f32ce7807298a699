import type { JsonSchema } from "@capgate/schema";

const text = { type: "string", minLength: 1 } as const;
const fileMap = {
  type: "object",
  description: "path (relative to the workspace) → file content",
  additionalProperties: { type: "string" },
} as const;
const positive = { type: "integer", minimum: 1 } as const;

const commandCheck = {
  type: "object",
  additionalProperties: false,
  required: ["command"],
  properties: {
    command: { ...text, description: "bash command that must exit 0; runs in the workspace" },
    timeoutMs: positive,
  },
} as const;

const fileCheck = {
  type: "object",
  additionalProperties: false,
  required: ["file"],
  properties: {
    file: { ...text, description: "workspace-relative path" },
    equals: { type: "string" },
    contains: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" }, minItems: 1 }] },
    matches: { ...text, description: "JavaScript regular expression" },
    exists: { type: "boolean" },
  },
} as const;

const toolCallCheck = {
  type: "object",
  additionalProperties: false,
  required: ["toolCall"],
  properties: {
    toolCall: { ...text, description: "the tool's name as it is called: fs.write, memory/create_entities" },
    arguments: { type: "object" },
    success: { type: "boolean" },
  },
} as const;

/** The schema of each kind of check, by the key that selects it. */
export const CHECK_SCHEMAS: Readonly<Record<"command" | "file" | "toolCall", JsonSchema>> = {
  command: commandCheck as unknown as JsonSchema,
  file: fileCheck as unknown as JsonSchema,
  toolCall: toolCallCheck as unknown as JsonSchema,
};

/**
 * The task file format (JSON or YAML). Every object is closed, so a misspelt key is an
 * error naming it ("did you mean …"), never a silently ignored setting.
 */
export const taskSchema: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "capgate eval task",
  type: "object",
  additionalProperties: false,
  required: ["goal", "check"],
  properties: {
    $schema: { type: "string" },
    id: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,63}$" },
    goal: { ...text, description: "what the model is asked to do; {{web}} and {{workspace}} are filled in" },
    tags: { type: "array", items: { type: "string", pattern: "^[a-z0-9][a-z0-9-]*$" }, uniqueItems: true },
    profile: text,
    workspace: {
      type: "object",
      additionalProperties: false,
      properties: {
        dir: text,
        files: fileMap,
        git: {
          type: "object",
          additionalProperties: false,
          properties: {
            branch: text,
            commits: {
              type: "array",
              items: {
                type: "object",
                additionalProperties: false,
                required: ["message"],
                properties: {
                  message: text,
                  files: fileMap,
                  delete: { type: "array", items: text },
                },
              },
            },
            uncommitted: fileMap,
          },
        },
      },
    },
    mcpServers: {
      type: "object",
      description: "the mcpServers shape of Claude Desktop / Cursor / capgate.config.json",
      additionalProperties: { type: "object" },
    },
    web: {
      type: "object",
      additionalProperties: false,
      required: ["dir"],
      properties: { dir: text },
    },
    check: {
      type: "array",
      minItems: 1,
      description: "every check must pass; each is one of: { command }, { file, … }, { toolCall, … }",
      // Each item is checked against the schema its key selects (CHECK_SCHEMAS), so an error
      // names the property instead of saying that no branch of a oneOf matched.
      items: { type: "object" },
    },
    budget: {
      type: "object",
      additionalProperties: false,
      properties: { steps: positive, tokens: positive, seconds: positive },
    },
  },
} as unknown as JsonSchema;

/** `suite.json` at the root of a suite directory. */
export const suiteSchema: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "capgate eval suite",
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: {
    $schema: { type: "string" },
    name: { type: "string", pattern: "^[a-z0-9][a-z0-9-]*$" },
    description: { type: "string" },
  },
} as unknown as JsonSchema;
