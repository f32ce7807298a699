import { profilesConfigSchema } from "@capgate/profiles";
import type { JsonSchema } from "@capgate/schema";

const prefixRule: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    prefix: {
      type: "array",
      minItems: 1,
      items: { type: "string", minLength: 1 },
      description: 'Words a command segment must start with, e.g. ["git", "push"].',
    },
    reason: { type: "string", description: "Shown to the model (deny) or the approver (ask)." },
    mustMatch: {
      type: "array",
      items: { type: "string" },
      description: "Commands this rule must match (checked at load).",
    },
    mustNotMatch: {
      type: "array",
      items: { type: "string" },
      description: "Commands this rule must not match (checked at load).",
    },
  },
  required: ["prefix"],
};

const stringMap: JsonSchema = { type: "object", additionalProperties: { type: "string" } };

const mcpServer: JsonSchema = {
  type: "object",
  description:
    "A server spawned over stdio ({command, args?, env?, cwd?}) or reached over HTTP ({url, headers?}).",
  properties: {
    type: { enum: ["stdio", "http", "streamable-http", "sse"] },
    command: { type: "string", minLength: 1 },
    args: { type: "array", items: { type: "string" } },
    env: stringMap,
    cwd: { type: "string" },
    url: { type: "string", minLength: 1 },
    headers: stringMap,
    timeoutMs: {
      type: "integer",
      minimum: 1,
      maximum: 3600000,
      description: "Per-call timeout (default 30000).",
    },
    enabled: {
      type: "boolean",
      description: "false keeps the entry but leaves the server out (default true).",
    },
    sandbox: {
      type: "boolean",
      description:
        "true runs this stdio server in the same OS sandbox as shell commands (workspace writable, secrets hidden, no desktop, shell.network rules). Default false: a configured server is trusted like any program you installed.",
    },
  },
  additionalProperties: false,
  oneOf: [{ required: ["command"] }, { required: ["url"] }],
};

/**
 * The JSON Schema of `capgate.config.json`. The same object is published as
 * `schemas/capgate.config.schema.json` (a test keeps the file in step) so editors can
 * complete and check the file.
 */
export const configSchema: JsonSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://capgate.dev/schemas/capgate.config.schema.json",
  title: "capgate configuration",
  type: "object",
  additionalProperties: false,
  properties: {
    $schema: { type: "string" },
    model: {
      type: "string",
      minLength: 1,
      description: "Model spec: openai:<model>, anthropic:<model> or scripted:<file>.",
    },
    workspace: {
      type: "string",
      minLength: 1,
      description: "Workspace root (default: the current directory).",
    },
    stateDir: {
      type: "string",
      minLength: 1,
      description: "Where traces and memory live (default $CAPGATE_HOME or ~/.capgate).",
    },
    profiles: profilesConfigSchema,
    mcpServers: {
      type: "object",
      description: "MCP servers, the same shape as Claude Desktop and Cursor.",
      propertyNames: { pattern: "^[A-Za-z0-9_-]{1,64}$" },
      additionalProperties: mcpServer,
    },
    approval: {
      enum: ["never", "on-risk", "always"],
      description: "When to ask before a tool runs (default never).",
    },
    shell: {
      type: "object",
      additionalProperties: false,
      properties: {
        deny: { type: "array", items: prefixRule },
        ask: { type: "array", items: prefixRule },
        sandbox: {
          enum: ["on", "off"],
          description:
            "on (default): every command the model causes runs in the OS sandbox (bubblewrap) and is refused when it cannot start; off: commands run unsandboxed, and the CLI warns on every run.",
        },
        network: {
          enum: ["none", "guarded", "full"],
          description:
            "The sandbox's network: none; guarded (default) — only through a proxy applying the web.* rules (no private, loopback or link-local addresses unless web.allowHosts); full — that proxy without address checks.",
        },
        bwrap: {
          type: "string",
          pattern: "^/",
          description: "Absolute path of bubblewrap (default /usr/bin/bwrap).",
        },
      },
    },
    web: {
      type: "object",
      additionalProperties: false,
      properties: {
        allowHosts: {
          type: "array",
          items: { type: "string", minLength: 1 },
          description: 'Hosts or host:port exempt from the private-address block, e.g. ["127.0.0.1:3000"].',
        },
      },
    },
    limits: {
      type: "object",
      additionalProperties: false,
      properties: {
        timeoutMs: { type: "integer", minimum: 100, maximum: 3600000 },
        outputBytes: { type: "integer", minimum: 1024, maximum: 67108864 },
        readBytes: { type: "integer", minimum: 1024, maximum: 67108864 },
        fetchBytes: { type: "integer", minimum: 1024, maximum: 268435456 },
        maxSteps: { type: "integer", minimum: 1, maximum: 10000 },
        workers: { type: "integer", minimum: 1, maximum: 64, description: "Most workers running at once." },
      },
    },
    browser: {
      type: "object",
      additionalProperties: false,
      properties: { executablePath: { type: "string", minLength: 1 } },
    },
    env: {
      type: "object",
      additionalProperties: false,
      description: "Environment for tool subprocesses: a minimal set is inherited; add more here.",
      properties: {
        inherit: { type: "array", items: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$" } },
        set: stringMap,
      },
    },
  },
};
