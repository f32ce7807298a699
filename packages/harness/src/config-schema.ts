import { profilesConfigSchema } from "@capgate/profiles";
import type { JsonSchema } from "@capgate/schema";
import { APPROVAL_MODES } from "@capgate/tools";

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

const mcpOAuth: JsonSchema = {
  type: "object",
  description:
    "OAuth 2.1 for a url server: {} for discovery + dynamic registration + PKCE login (capgate mcp login <server>).",
  additionalProperties: false,
  properties: {
    grant: {
      enum: ["authorization_code", "client_credentials", "jwt_bearer"],
      description:
        "authorization_code (default, a person logs in), client_credentials (machine to machine), jwt_bearer (enterprise IdP).",
    },
    clientId: {
      type: "string",
      minLength: 1,
      description: "A pre-registered client (skips dynamic registration).",
    },
    clientSecret: { type: "string", minLength: 1, description: "The pre-registered client's secret." },
    privateKey: {
      type: "string",
      minLength: 1,
      description: "PKCS#8 PEM key for private_key_jwt client authentication.",
    },
    signingAlgorithm: {
      enum: ["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"],
    },
    scopes: {
      type: "array",
      items: { type: "string", minLength: 1 },
      description: "Scopes to ask for when the server names none.",
    },
    redirectPort: {
      type: "integer",
      minimum: 1,
      maximum: 65535,
      description: "Fixed loopback port of the redirect URI (default: a free one).",
    },
    clientName: { type: "string", minLength: 1 },
    clientMetadataUrl: {
      type: "string",
      minLength: 1,
      description: "https URL of a client ID metadata document.",
    },
    authorizationServer: {
      type: "string",
      minLength: 1,
      description: "The authorization server pre-registered credentials belong to (never sent to another).",
    },
    identityProvider: {
      type: "object",
      additionalProperties: false,
      required: ["tokenEndpoint", "clientId", "idToken"],
      properties: {
        tokenEndpoint: { type: "string", minLength: 1 },
        clientId: { type: "string", minLength: 1 },
        idToken: { type: "string", minLength: 1 },
      },
    },
  },
};

// Checked in full (reserved characters, control characters) by @capgate/mcp-client with a message naming the glob.
const toolGlob: JsonSchema = {
  type: "string",
  minLength: 1,
  maxLength: 256,
  description: "A glob over the server's tool names: * is any run of characters, ? one character.",
};

const toolGlobs: JsonSchema = { type: "array", maxItems: 256, items: toolGlob };

const mcpToolFilter: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description:
    'Which of the server\'s tools capgate offers and calls, e.g. { "allow": ["browser_*"], "deny": ["*_delete_*"] }. A tool is reachable when there is no allow list or it matches one of its globs, and it matches no deny glob (deny wins). Others are left out of search, load and every listing, and calls to them are refused.',
  properties: {
    allow: { ...toolGlobs, description: "Only tools matching one of these globs are reachable." },
    deny: { ...toolGlobs, description: "Tools matching one of these globs are never reachable." },
  },
};

const mcpToolApprovals: JsonSchema = {
  type: "object",
  description:
    'Per-tool approval overrides: tool-name glob → "ask" (ask before every call, whatever approval says) or "never" (never ask). Of the globs matching a tool, the most specific (most characters other than * and ?) wins; on a tie, "ask".',
  maxProperties: 256,
  propertyNames: { minLength: 1, maxLength: 256 },
  additionalProperties: { enum: ["ask", "never"] },
};

const mcpServer: JsonSchema = {
  type: "object",
  description:
    "A server spawned over stdio ({command, args?, env?, cwd?}) or reached over HTTP ({url, headers?, oauth?}).",
  properties: {
    type: { enum: ["stdio", "http", "streamable-http", "sse"] },
    command: { type: "string", minLength: 1 },
    args: { type: "array", items: { type: "string" } },
    env: stringMap,
    cwd: { type: "string" },
    url: { type: "string", minLength: 1 },
    headers: stringMap,
    oauth: mcpOAuth,
    timeoutMs: {
      type: "integer",
      minimum: 1,
      maximum: 3600000,
      description: "Per-call timeout (default 30000); each progress report restarts it.",
    },
    maxTotalTimeoutMs: {
      type: "integer",
      minimum: 1,
      maximum: 3600000,
      description:
        "Hard limit of a call that keeps reporting progress (default ten times timeoutMs, at most 3600000).",
    },
    share: {
      type: "boolean",
      description:
        "true: one upstream session serves every /mcp client (a stateless server). Default false: each /mcp session gets its own.",
    },
    enabled: {
      type: "boolean",
      description: "false keeps the entry but leaves the server out (default true).",
    },
    sampling: {
      type: "boolean",
      description: "true lets the server ask the run's model for completions (default false: refused).",
    },
    tools: mcpToolFilter,
    approval: mcpToolApprovals,
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
    capabilities: {
      type: "array",
      uniqueItems: true,
      maxItems: 100,
      items: { type: "string", minLength: 1, maxLength: 1000 },
      description:
        "Capability plugins beside the ten built-ins: package names installed next to this file (npm install …) or paths (./…, ../…, /…) to a package directory or module, relative to this file. Each must export `capability`; it is linted before it is registered, and one that fails is reported by name while the rest load.",
    },
    stateDir: {
      type: "string",
      minLength: 1,
      description: "Where traces and memory live (default $CAPGATE_HOME or ~/.capgate).",
    },
    database: {
      type: "string",
      pattern: "^postgres(ql)?://",
      maxLength: 2000,
      description:
        "PostgreSQL URL (postgresql://user:password@host:5432/db) for runs on queue workers: `capgate serve` queues runs there and `capgate worker` executes them. $CAPGATE_DATABASE_URL and --database take precedence.",
    },
    profiles: profilesConfigSchema,
    mcpServers: {
      type: "object",
      description: "MCP servers, the same shape as Claude Desktop and Cursor.",
      propertyNames: { pattern: "^[A-Za-z0-9_-]{1,64}$" },
      additionalProperties: mcpServer,
    },
    approval: {
      enum: [...APPROVAL_MODES],
      description: "When to ask before a tool runs (default never).",
    },
    shell: {
      type: "object",
      additionalProperties: false,
      properties: {
        deny: { type: "array", items: prefixRule },
        ask: { type: "array", items: prefixRule },
        allow: {
          type: "array",
          items: prefixRule,
          description:
            "Commands that may run although capgate cannot read everything they run (interpreter code, programs that run their arguments or input, programs it does not know). With deny or ask rules configured, such commands are asked about unless an allow rule names them; an allow rule never overrides a deny or ask rule.",
        },
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
    hook: {
      type: "object",
      additionalProperties: false,
      description: "capgate hook claude-code: how the Claude Code hook answers an allowed Bash call.",
      properties: {
        sandbox: {
          type: "boolean",
          description:
            "true: an allowed Bash call runs inside capgate's OS sandbox (workspace writable, secrets hidden, network through capgate's proxy per shell.network, no desktop); the hook rewrites the command to `capgate sandbox-exec`. Default false: the command runs as Claude Code runs it.",
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
        maxToolCalls: {
          type: "integer",
          minimum: 1,
          maximum: 1000000,
          description:
            "Most tool calls per run or chat, a script's nested calls included (default: no limit).",
        },
        workers: { type: "integer", minimum: 1, maximum: 64, description: "Most workers running at once." },
      },
    },
    browser: {
      type: "object",
      additionalProperties: false,
      properties: { executablePath: { type: "string", minLength: 1 } },
    },
    gate: {
      type: "object",
      additionalProperties: false,
      description: "The MCP gate (capgate mcp serve and the server's /mcp).",
      properties: {
        profile: {
          type: "string",
          minLength: 1,
          description: "Profile of every gate session (default Orchestrator).",
        },
        preload: {
          type: "array",
          items: { type: "string", minLength: 1 },
          uniqueItems: true,
          description: 'Capabilities loaded at the start of every gate session, e.g. ["fs", "shell"].',
        },
        idleMs: {
          type: "integer",
          minimum: 1000,
          maximum: 86400000,
          description: "/mcp: close a session idle this long (default 300000).",
        },
        maxSessions: {
          type: "integer",
          minimum: 1,
          maximum: 100000,
          description:
            "/mcp: most open sessions; at the cap the least recently used idle one is closed (default 64).",
        },
        maxSessionsPerToken: {
          type: "integer",
          minimum: 1,
          maximum: 100000,
          description: "/mcp: most open sessions per bearer token (default: maxSessions).",
        },
      },
    },
    telemetry: {
      type: "object",
      additionalProperties: false,
      description:
        "OpenTelemetry traces over OTLP/HTTP: a span per run, model turn and tool call (GenAI semantic conventions). Off unless enabled here or by OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_TRACES_EXPORTER=otlp; OTEL_* variables take precedence over these keys.",
      properties: {
        enabled: {
          type: "boolean",
          description: "true exports traces; false never does, whatever the environment says.",
        },
        endpoint: {
          type: "string",
          pattern: "^https?://",
          description: "Base OTLP/HTTP endpoint (/v1/traces is appended); default http://localhost:4318.",
        },
        protocol: { enum: ["http/protobuf", "http/json"], description: "Default http/protobuf." },
        headers: {
          ...stringMap,
          description: "Headers on every export request (e.g. a collector's API key).",
        },
        serviceName: {
          type: "string",
          minLength: 1,
          description: "service.name of the spans (default capgate).",
        },
        captureContent: {
          type: "boolean",
          description:
            "true records the goal, tool arguments and results, policy messages and model replies on the spans. Default false: names, outcomes, sizes and token counts only.",
        },
      },
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
