// Generated from the config schema (src/config-schema.ts) by @capgate/schema/standalone (ajv standalone code); do not edit.
// Regenerate: npx vitest run packages/harness/src/precompiled-validators.test.ts -u
import { standaloneRequire as require } from "@capgate/schema/standalone-runtime";

export const configValidators = {
  "{\"$id\":\"https://capgate.dev/schemas/capgate.config.schema.json\",\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"additionalProperties\":false,\"properties\":{\"$schema\":{\"type\":\"string\"},\"approval\":{\"description\":\"When to ask before a tool runs (default never).\",\"enum\":[\"never\",\"on-risk\",\"always\"]},\"browser\":{\"additionalProperties\":false,\"properties\":{\"executablePath\":{\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"capabilities\":{\"description\":\"Capability plugins beside the ten built-ins: package names installed next to this file (npm install …) or paths (./…, ../…, /…) to a package directory or module, relative to this file. Each must export `capability`; it is linted before it is registered, and one that fails is reported by name while the rest load.\",\"items\":{\"maxLength\":1000,\"minLength\":1,\"type\":\"string\"},\"maxItems\":100,\"type\":\"array\",\"uniqueItems\":true},\"database\":{\"description\":\"PostgreSQL URL (postgresql://user:password@host:5432/db) for runs on queue workers: `capgate serve` queues runs there and `capgate worker` executes them. $CAPGATE_DATABASE_URL and --database take precedence.\",\"maxLength\":2000,\"pattern\":\"^postgres(ql)?://\",\"type\":\"string\"},\"env\":{\"additionalProperties\":false,\"description\":\"Environment for tool subprocesses: a minimal set is inherited; add more here.\",\"properties\":{\"inherit\":{\"items\":{\"pattern\":\"^[A-Za-z_][A-Za-z0-9_]*$\",\"type\":\"string\"},\"type\":\"array\"},\"set\":{\"additionalProperties\":{\"type\":\"string\"},\"type\":\"object\"}},\"type\":\"object\"},\"gate\":{\"additionalProperties\":false,\"description\":\"The MCP gate (capgate mcp serve and the server's /mcp).\",\"properties\":{\"idleMs\":{\"description\":\"/mcp: close a session idle this long (default 300000).\",\"maximum\":86400000,\"minimum\":1000,\"type\":\"integer\"},\"maxSessions\":{\"description\":\"/mcp: most open sessions; at the cap the least recently used idle one is closed (default 64).\",\"maximum\":100000,\"minimum\":1,\"type\":\"integer\"},\"maxSessionsPerToken\":{\"description\":\"/mcp: most open sessions per bearer token (default: maxSessions).\",\"maximum\":100000,\"minimum\":1,\"type\":\"integer\"},\"preload\":{\"description\":\"Capabilities loaded at the start of every gate session, e.g. [\\\"fs\\\", \\\"shell\\\"].\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"profile\":{\"description\":\"Profile of every gate session (default Orchestrator).\",\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"hook\":{\"additionalProperties\":false,\"description\":\"capgate hook claude-code: how the Claude Code hook answers an allowed Bash call.\",\"properties\":{\"sandbox\":{\"description\":\"true: an allowed Bash call runs inside capgate's OS sandbox (workspace writable, secrets hidden, network through capgate's proxy per shell.network, no desktop); the hook rewrites the command to `capgate sandbox-exec`. Default false: the command runs as Claude Code runs it.\",\"type\":\"boolean\"}},\"type\":\"object\"},\"limits\":{\"additionalProperties\":false,\"properties\":{\"fetchBytes\":{\"maximum\":268435456,\"minimum\":1024,\"type\":\"integer\"},\"maxSteps\":{\"maximum\":10000,\"minimum\":1,\"type\":\"integer\"},\"maxToolCalls\":{\"description\":\"Most tool calls per run or chat, a script's nested calls included (default: no limit).\",\"maximum\":1000000,\"minimum\":1,\"type\":\"integer\"},\"outputBytes\":{\"maximum\":67108864,\"minimum\":1024,\"type\":\"integer\"},\"readBytes\":{\"maximum\":67108864,\"minimum\":1024,\"type\":\"integer\"},\"timeoutMs\":{\"maximum\":3600000,\"minimum\":100,\"type\":\"integer\"},\"workers\":{\"description\":\"Most workers running at once.\",\"maximum\":64,\"minimum\":1,\"type\":\"integer\"}},\"type\":\"object\"},\"mcpServers\":{\"additionalProperties\":{\"additionalProperties\":false,\"description\":\"A server spawned over stdio ({command, args?, env?, cwd?}) or reached over HTTP ({url, headers?, oauth?}).\",\"oneOf\":[{\"required\":[\"command\"]},{\"required\":[\"url\"]}],\"properties\":{\"approval\":{\"additionalProperties\":{\"enum\":[\"ask\",\"never\"]},\"description\":\"Per-tool approval overrides: tool-name glob → \\\"ask\\\" (ask before every call, whatever approval says) or \\\"never\\\" (never ask). Of the globs matching a tool, the most specific (most characters other than * and ?) wins; on a tie, \\\"ask\\\".\",\"maxProperties\":256,\"propertyNames\":{\"maxLength\":256,\"minLength\":1},\"type\":\"object\"},\"args\":{\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"command\":{\"minLength\":1,\"type\":\"string\"},\"cwd\":{\"type\":\"string\"},\"enabled\":{\"description\":\"false keeps the entry but leaves the server out (default true).\",\"type\":\"boolean\"},\"env\":{\"additionalProperties\":{\"type\":\"string\"},\"type\":\"object\"},\"headers\":{\"additionalProperties\":{\"type\":\"string\"},\"type\":\"object\"},\"maxTotalTimeoutMs\":{\"description\":\"Hard limit of a call that keeps reporting progress (default ten times timeoutMs, at most 3600000).\",\"maximum\":3600000,\"minimum\":1,\"type\":\"integer\"},\"oauth\":{\"additionalProperties\":false,\"description\":\"OAuth 2.1 for a url server: {} for discovery + dynamic registration + PKCE login (capgate mcp login <server>).\",\"properties\":{\"authorizationServer\":{\"description\":\"The authorization server pre-registered credentials belong to (never sent to another).\",\"minLength\":1,\"type\":\"string\"},\"clientId\":{\"description\":\"A pre-registered client (skips dynamic registration).\",\"minLength\":1,\"type\":\"string\"},\"clientMetadataUrl\":{\"description\":\"https URL of a client ID metadata document.\",\"minLength\":1,\"type\":\"string\"},\"clientName\":{\"minLength\":1,\"type\":\"string\"},\"clientSecret\":{\"description\":\"The pre-registered client's secret.\",\"minLength\":1,\"type\":\"string\"},\"grant\":{\"description\":\"authorization_code (default, a person logs in), client_credentials (machine to machine), jwt_bearer (enterprise IdP).\",\"enum\":[\"authorization_code\",\"client_credentials\",\"jwt_bearer\"]},\"identityProvider\":{\"additionalProperties\":false,\"properties\":{\"clientId\":{\"minLength\":1,\"type\":\"string\"},\"idToken\":{\"minLength\":1,\"type\":\"string\"},\"tokenEndpoint\":{\"minLength\":1,\"type\":\"string\"}},\"required\":[\"tokenEndpoint\",\"clientId\",\"idToken\"],\"type\":\"object\"},\"privateKey\":{\"description\":\"PKCS#8 PEM key for private_key_jwt client authentication.\",\"minLength\":1,\"type\":\"string\"},\"redirectPort\":{\"description\":\"Fixed loopback port of the redirect URI (default: a free one).\",\"maximum\":65535,\"minimum\":1,\"type\":\"integer\"},\"scopes\":{\"description\":\"Scopes to ask for when the server names none.\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"type\":\"array\"},\"signingAlgorithm\":{\"enum\":[\"ES256\",\"ES384\",\"ES512\",\"RS256\",\"RS384\",\"RS512\",\"PS256\",\"PS384\",\"PS512\"]}},\"type\":\"object\"},\"sampling\":{\"description\":\"true lets the server ask the run's model for completions (default false: refused).\",\"type\":\"boolean\"},\"sandbox\":{\"description\":\"true runs this stdio server in the same OS sandbox as shell commands (workspace writable, secrets hidden, no desktop, shell.network rules). Default false: a configured server is trusted like any program you installed.\",\"type\":\"boolean\"},\"share\":{\"description\":\"true: one upstream session serves every /mcp client (a stateless server). Default false: each /mcp session gets its own.\",\"type\":\"boolean\"},\"timeoutMs\":{\"description\":\"Per-call timeout (default 30000); each progress report restarts it.\",\"maximum\":3600000,\"minimum\":1,\"type\":\"integer\"},\"tools\":{\"additionalProperties\":false,\"description\":\"Which of the server's tools capgate offers and calls, e.g. { \\\"allow\\\": [\\\"browser_*\\\"], \\\"deny\\\": [\\\"*_delete_*\\\"] }. A tool is reachable when there is no allow list or it matches one of its globs, and it matches no deny glob (deny wins). Others are left out of search, load and every listing, and calls to them are refused.\",\"properties\":{\"allow\":{\"description\":\"Only tools matching one of these globs are reachable.\",\"items\":{\"description\":\"A glob over the server's tool names: * is any run of characters, ? one character.\",\"maxLength\":256,\"minLength\":1,\"type\":\"string\"},\"maxItems\":256,\"type\":\"array\"},\"deny\":{\"description\":\"Tools matching one of these globs are never reachable.\",\"items\":{\"description\":\"A glob over the server's tool names: * is any run of characters, ? one character.\",\"maxLength\":256,\"minLength\":1,\"type\":\"string\"},\"maxItems\":256,\"type\":\"array\"}},\"type\":\"object\"},\"type\":{\"enum\":[\"stdio\",\"http\",\"streamable-http\",\"sse\"]},\"url\":{\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"description\":\"MCP servers, the same shape as Claude Desktop and Cursor.\",\"propertyNames\":{\"pattern\":\"^[A-Za-z0-9_-]{1,64}$\"},\"type\":\"object\"},\"model\":{\"description\":\"Model spec: openai:<model>, anthropic:<model> or scripted:<file>.\",\"minLength\":1,\"type\":\"string\"},\"profiles\":{\"additionalProperties\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"required\":[\"promptDelta\",\"charBudget\"],\"type\":\"object\"},\"description\":\"Overrides of the built-in profiles and additional profiles, keyed by profile name.\",\"properties\":{\"Coder\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"ComputerOperator\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"Orchestrator\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"Researcher\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"Verifier\":{\"additionalProperties\":false,\"properties\":{\"charBudget\":{\"description\":\"Most characters of a context packet.\",\"maximum\":10000000,\"minimum\":1,\"type\":\"integer\"},\"maySpawnWorkers\":{\"description\":\"Whether workers.spawn is allowed.\",\"type\":\"boolean\"},\"name\":{\"description\":\"Must equal the key when given.\",\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\",\"type\":\"string\"},\"preload\":{\"description\":\"Capabilities loaded (after clearing) when the profile is applied.\",\"items\":{\"pattern\":\"^(?:[a-z][a-z0-9_]*|mcp:[^\\\\s/]+)$\",\"type\":\"string\"},\"type\":\"array\",\"uniqueItems\":true},\"promptDelta\":{\"description\":\"One operating instruction added to the system prompt.\",\"maxLength\":2000,\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"}},\"propertyNames\":{\"not\":{\"enum\":[\"constructor\",\"prototype\",\"toString\",\"valueOf\",\"hasOwnProperty\"]},\"pattern\":\"^[A-Za-z][A-Za-z0-9_-]{0,63}$\"},\"type\":\"object\"},\"shell\":{\"additionalProperties\":false,\"properties\":{\"allow\":{\"description\":\"Commands that may run although capgate cannot read everything they run (interpreter code, programs that run their arguments or input, programs it does not know). With deny or ask rules configured, such commands are asked about unless an allow rule names them; an allow rule never overrides a deny or ask rule.\",\"items\":{\"additionalProperties\":false,\"properties\":{\"mustMatch\":{\"description\":\"Commands this rule must match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"mustNotMatch\":{\"description\":\"Commands this rule must not match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"prefix\":{\"description\":\"Words a command segment must start with, e.g. [\\\"git\\\", \\\"push\\\"].\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"minItems\":1,\"type\":\"array\"},\"reason\":{\"description\":\"Shown to the model (deny) or the approver (ask).\",\"type\":\"string\"}},\"required\":[\"prefix\"],\"type\":\"object\"},\"type\":\"array\"},\"ask\":{\"items\":{\"additionalProperties\":false,\"properties\":{\"mustMatch\":{\"description\":\"Commands this rule must match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"mustNotMatch\":{\"description\":\"Commands this rule must not match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"prefix\":{\"description\":\"Words a command segment must start with, e.g. [\\\"git\\\", \\\"push\\\"].\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"minItems\":1,\"type\":\"array\"},\"reason\":{\"description\":\"Shown to the model (deny) or the approver (ask).\",\"type\":\"string\"}},\"required\":[\"prefix\"],\"type\":\"object\"},\"type\":\"array\"},\"bwrap\":{\"description\":\"Absolute path of bubblewrap (default /usr/bin/bwrap).\",\"pattern\":\"^/\",\"type\":\"string\"},\"deny\":{\"items\":{\"additionalProperties\":false,\"properties\":{\"mustMatch\":{\"description\":\"Commands this rule must match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"mustNotMatch\":{\"description\":\"Commands this rule must not match (checked at load).\",\"items\":{\"type\":\"string\"},\"type\":\"array\"},\"prefix\":{\"description\":\"Words a command segment must start with, e.g. [\\\"git\\\", \\\"push\\\"].\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"minItems\":1,\"type\":\"array\"},\"reason\":{\"description\":\"Shown to the model (deny) or the approver (ask).\",\"type\":\"string\"}},\"required\":[\"prefix\"],\"type\":\"object\"},\"type\":\"array\"},\"network\":{\"description\":\"The sandbox's network: none; guarded (default) — only through a proxy applying the web.* rules (no private, loopback or link-local addresses unless web.allowHosts); full — that proxy without address checks.\",\"enum\":[\"none\",\"guarded\",\"full\"]},\"sandbox\":{\"description\":\"on (default): every command the model causes runs in the OS sandbox (bubblewrap) and is refused when it cannot start; off: commands run unsandboxed, and the CLI warns on every run.\",\"enum\":[\"on\",\"off\"]}},\"type\":\"object\"},\"stateDir\":{\"description\":\"Where traces and memory live (default $CAPGATE_HOME or ~/.capgate).\",\"minLength\":1,\"type\":\"string\"},\"telemetry\":{\"additionalProperties\":false,\"description\":\"OpenTelemetry traces over OTLP/HTTP: a span per run, model turn and tool call (GenAI semantic conventions). Off unless enabled here or by OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_TRACES_EXPORTER=otlp; OTEL_* variables take precedence over these keys.\",\"properties\":{\"captureContent\":{\"description\":\"true records the goal, tool arguments and results, policy messages and model replies on the spans. Default false: names, outcomes, sizes and token counts only.\",\"type\":\"boolean\"},\"enabled\":{\"description\":\"true exports traces; false never does, whatever the environment says.\",\"type\":\"boolean\"},\"endpoint\":{\"description\":\"Base OTLP/HTTP endpoint (/v1/traces is appended); default http://localhost:4318.\",\"pattern\":\"^https?://\",\"type\":\"string\"},\"headers\":{\"additionalProperties\":{\"type\":\"string\"},\"description\":\"Headers on every export request (e.g. a collector's API key).\",\"type\":\"object\"},\"protocol\":{\"description\":\"Default http/protobuf.\",\"enum\":[\"http/protobuf\",\"http/json\"]},\"serviceName\":{\"description\":\"service.name of the spans (default capgate).\",\"minLength\":1,\"type\":\"string\"}},\"type\":\"object\"},\"web\":{\"additionalProperties\":false,\"properties\":{\"allowHosts\":{\"description\":\"Hosts or host:port exempt from the private-address block, e.g. [\\\"127.0.0.1:3000\\\"].\",\"items\":{\"minLength\":1,\"type\":\"string\"},\"type\":\"array\"}},\"type\":\"object\"},\"workspace\":{\"description\":\"Workspace root (default: the current directory).\",\"minLength\":1,\"type\":\"string\"}},\"title\":\"capgate configuration\",\"type\":\"object\"}": () => {
    const module = { exports: {} };
module.exports = validate0;
module.exports.default = validate0;
const schema0 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://capgate.dev/schemas/capgate.config.schema.json","title":"capgate configuration","type":"object","additionalProperties":false,"properties":{"$schema":{"type":"string"},"model":{"type":"string","minLength":1,"description":"Model spec: openai:<model>, anthropic:<model> or scripted:<file>."},"workspace":{"type":"string","minLength":1,"description":"Workspace root (default: the current directory)."},"capabilities":{"type":"array","uniqueItems":true,"maxItems":100,"items":{"type":"string","minLength":1,"maxLength":1000},"description":"Capability plugins beside the ten built-ins: package names installed next to this file (npm install …) or paths (./…, ../…, /…) to a package directory or module, relative to this file. Each must export `capability`; it is linted before it is registered, and one that fails is reported by name while the rest load."},"stateDir":{"type":"string","minLength":1,"description":"Where traces and memory live (default $CAPGATE_HOME or ~/.capgate)."},"database":{"type":"string","pattern":"^postgres(ql)?://","maxLength":2000,"description":"PostgreSQL URL (postgresql://user:password@host:5432/db) for runs on queue workers: `capgate serve` queues runs there and `capgate worker` executes them. $CAPGATE_DATABASE_URL and --database take precedence."},"profiles":{"type":"object","description":"Overrides of the built-in profiles and additional profiles, keyed by profile name.","propertyNames":{"pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","not":{"enum":["constructor","prototype","toString","valueOf","hasOwnProperty"]}},"properties":{"Orchestrator":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}}},"Coder":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}}},"Researcher":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}}},"ComputerOperator":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}}},"Verifier":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}}}},"additionalProperties":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,63}$","description":"Must equal the key when given."},"promptDelta":{"type":"string","minLength":1,"maxLength":2000,"description":"One operating instruction added to the system prompt."},"preload":{"type":"array","uniqueItems":true,"items":{"type":"string","pattern":"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},"description":"Capabilities loaded (after clearing) when the profile is applied."},"charBudget":{"type":"integer","minimum":1,"maximum":10000000,"description":"Most characters of a context packet."},"maySpawnWorkers":{"type":"boolean","description":"Whether workers.spawn is allowed."}},"required":["promptDelta","charBudget"]}},"mcpServers":{"type":"object","description":"MCP servers, the same shape as Claude Desktop and Cursor.","propertyNames":{"pattern":"^[A-Za-z0-9_-]{1,64}$"},"additionalProperties":{"type":"object","description":"A server spawned over stdio ({command, args?, env?, cwd?}) or reached over HTTP ({url, headers?, oauth?}).","properties":{"type":{"enum":["stdio","http","streamable-http","sse"]},"command":{"type":"string","minLength":1},"args":{"type":"array","items":{"type":"string"}},"env":{"type":"object","additionalProperties":{"type":"string"}},"cwd":{"type":"string"},"url":{"type":"string","minLength":1},"headers":{"type":"object","additionalProperties":{"type":"string"}},"oauth":{"type":"object","description":"OAuth 2.1 for a url server: {} for discovery + dynamic registration + PKCE login (capgate mcp login <server>).","additionalProperties":false,"properties":{"grant":{"enum":["authorization_code","client_credentials","jwt_bearer"],"description":"authorization_code (default, a person logs in), client_credentials (machine to machine), jwt_bearer (enterprise IdP)."},"clientId":{"type":"string","minLength":1,"description":"A pre-registered client (skips dynamic registration)."},"clientSecret":{"type":"string","minLength":1,"description":"The pre-registered client's secret."},"privateKey":{"type":"string","minLength":1,"description":"PKCS#8 PEM key for private_key_jwt client authentication."},"signingAlgorithm":{"enum":["ES256","ES384","ES512","RS256","RS384","RS512","PS256","PS384","PS512"]},"scopes":{"type":"array","items":{"type":"string","minLength":1},"description":"Scopes to ask for when the server names none."},"redirectPort":{"type":"integer","minimum":1,"maximum":65535,"description":"Fixed loopback port of the redirect URI (default: a free one)."},"clientName":{"type":"string","minLength":1},"clientMetadataUrl":{"type":"string","minLength":1,"description":"https URL of a client ID metadata document."},"authorizationServer":{"type":"string","minLength":1,"description":"The authorization server pre-registered credentials belong to (never sent to another)."},"identityProvider":{"type":"object","additionalProperties":false,"required":["tokenEndpoint","clientId","idToken"],"properties":{"tokenEndpoint":{"type":"string","minLength":1},"clientId":{"type":"string","minLength":1},"idToken":{"type":"string","minLength":1}}}}},"timeoutMs":{"type":"integer","minimum":1,"maximum":3600000,"description":"Per-call timeout (default 30000); each progress report restarts it."},"maxTotalTimeoutMs":{"type":"integer","minimum":1,"maximum":3600000,"description":"Hard limit of a call that keeps reporting progress (default ten times timeoutMs, at most 3600000)."},"share":{"type":"boolean","description":"true: one upstream session serves every /mcp client (a stateless server). Default false: each /mcp session gets its own."},"enabled":{"type":"boolean","description":"false keeps the entry but leaves the server out (default true)."},"sampling":{"type":"boolean","description":"true lets the server ask the run's model for completions (default false: refused)."},"tools":{"type":"object","additionalProperties":false,"description":"Which of the server's tools capgate offers and calls, e.g. { \"allow\": [\"browser_*\"], \"deny\": [\"*_delete_*\"] }. A tool is reachable when there is no allow list or it matches one of its globs, and it matches no deny glob (deny wins). Others are left out of search, load and every listing, and calls to them are refused.","properties":{"allow":{"type":"array","maxItems":256,"items":{"type":"string","minLength":1,"maxLength":256,"description":"A glob over the server's tool names: * is any run of characters, ? one character."},"description":"Only tools matching one of these globs are reachable."},"deny":{"type":"array","maxItems":256,"items":{"type":"string","minLength":1,"maxLength":256,"description":"A glob over the server's tool names: * is any run of characters, ? one character."},"description":"Tools matching one of these globs are never reachable."}}},"approval":{"type":"object","description":"Per-tool approval overrides: tool-name glob → \"ask\" (ask before every call, whatever approval says) or \"never\" (never ask). Of the globs matching a tool, the most specific (most characters other than * and ?) wins; on a tie, \"ask\".","maxProperties":256,"propertyNames":{"minLength":1,"maxLength":256},"additionalProperties":{"enum":["ask","never"]}},"sandbox":{"type":"boolean","description":"true runs this stdio server in the same OS sandbox as shell commands (workspace writable, secrets hidden, no desktop, shell.network rules). Default false: a configured server is trusted like any program you installed."}},"additionalProperties":false,"oneOf":[{"required":["command"]},{"required":["url"]}]}},"approval":{"enum":["never","on-risk","always"],"description":"When to ask before a tool runs (default never)."},"shell":{"type":"object","additionalProperties":false,"properties":{"deny":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"prefix":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"Words a command segment must start with, e.g. [\"git\", \"push\"]."},"reason":{"type":"string","description":"Shown to the model (deny) or the approver (ask)."},"mustMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must match (checked at load)."},"mustNotMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must not match (checked at load)."}},"required":["prefix"]}},"ask":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"prefix":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"Words a command segment must start with, e.g. [\"git\", \"push\"]."},"reason":{"type":"string","description":"Shown to the model (deny) or the approver (ask)."},"mustMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must match (checked at load)."},"mustNotMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must not match (checked at load)."}},"required":["prefix"]}},"allow":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"prefix":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"Words a command segment must start with, e.g. [\"git\", \"push\"]."},"reason":{"type":"string","description":"Shown to the model (deny) or the approver (ask)."},"mustMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must match (checked at load)."},"mustNotMatch":{"type":"array","items":{"type":"string"},"description":"Commands this rule must not match (checked at load)."}},"required":["prefix"]},"description":"Commands that may run although capgate cannot read everything they run (interpreter code, programs that run their arguments or input, programs it does not know). With deny or ask rules configured, such commands are asked about unless an allow rule names them; an allow rule never overrides a deny or ask rule."},"sandbox":{"enum":["on","off"],"description":"on (default): every command the model causes runs in the OS sandbox (bubblewrap) and is refused when it cannot start; off: commands run unsandboxed, and the CLI warns on every run."},"network":{"enum":["none","guarded","full"],"description":"The sandbox's network: none; guarded (default) — only through a proxy applying the web.* rules (no private, loopback or link-local addresses unless web.allowHosts); full — that proxy without address checks."},"bwrap":{"type":"string","pattern":"^/","description":"Absolute path of bubblewrap (default /usr/bin/bwrap)."}}},"hook":{"type":"object","additionalProperties":false,"description":"capgate hook claude-code: how the Claude Code hook answers an allowed Bash call.","properties":{"sandbox":{"type":"boolean","description":"true: an allowed Bash call runs inside capgate's OS sandbox (workspace writable, secrets hidden, network through capgate's proxy per shell.network, no desktop); the hook rewrites the command to `capgate sandbox-exec`. Default false: the command runs as Claude Code runs it."}}},"web":{"type":"object","additionalProperties":false,"properties":{"allowHosts":{"type":"array","items":{"type":"string","minLength":1},"description":"Hosts or host:port exempt from the private-address block, e.g. [\"127.0.0.1:3000\"]."}}},"limits":{"type":"object","additionalProperties":false,"properties":{"timeoutMs":{"type":"integer","minimum":100,"maximum":3600000},"outputBytes":{"type":"integer","minimum":1024,"maximum":67108864},"readBytes":{"type":"integer","minimum":1024,"maximum":67108864},"fetchBytes":{"type":"integer","minimum":1024,"maximum":268435456},"maxSteps":{"type":"integer","minimum":1,"maximum":10000},"maxToolCalls":{"type":"integer","minimum":1,"maximum":1000000,"description":"Most tool calls per run or chat, a script's nested calls included (default: no limit)."},"workers":{"type":"integer","minimum":1,"maximum":64,"description":"Most workers running at once."}}},"browser":{"type":"object","additionalProperties":false,"properties":{"executablePath":{"type":"string","minLength":1}}},"gate":{"type":"object","additionalProperties":false,"description":"The MCP gate (capgate mcp serve and the server's /mcp).","properties":{"profile":{"type":"string","minLength":1,"description":"Profile of every gate session (default Orchestrator)."},"preload":{"type":"array","items":{"type":"string","minLength":1},"uniqueItems":true,"description":"Capabilities loaded at the start of every gate session, e.g. [\"fs\", \"shell\"]."},"idleMs":{"type":"integer","minimum":1000,"maximum":86400000,"description":"/mcp: close a session idle this long (default 300000)."},"maxSessions":{"type":"integer","minimum":1,"maximum":100000,"description":"/mcp: most open sessions; at the cap the least recently used idle one is closed (default 64)."},"maxSessionsPerToken":{"type":"integer","minimum":1,"maximum":100000,"description":"/mcp: most open sessions per bearer token (default: maxSessions)."}}},"telemetry":{"type":"object","additionalProperties":false,"description":"OpenTelemetry traces over OTLP/HTTP: a span per run, model turn and tool call (GenAI semantic conventions). Off unless enabled here or by OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_TRACES_EXPORTER=otlp; OTEL_* variables take precedence over these keys.","properties":{"enabled":{"type":"boolean","description":"true exports traces; false never does, whatever the environment says."},"endpoint":{"type":"string","pattern":"^https?://","description":"Base OTLP/HTTP endpoint (/v1/traces is appended); default http://localhost:4318."},"protocol":{"enum":["http/protobuf","http/json"],"description":"Default http/protobuf."},"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"Headers on every export request (e.g. a collector's API key)."},"serviceName":{"type":"string","minLength":1,"description":"service.name of the spans (default capgate)."},"captureContent":{"type":"boolean","description":"true records the goal, tool arguments and results, policy messages and model replies on the spans. Default false: names, outcomes, sizes and token counts only."}}},"env":{"type":"object","additionalProperties":false,"description":"Environment for tool subprocesses: a minimal set is inherited; add more here.","properties":{"inherit":{"type":"array","items":{"type":"string","pattern":"^[A-Za-z_][A-Za-z0-9_]*$"}},"set":{"type":"object","additionalProperties":{"type":"string"}}}}}};
const func0 = Object.prototype.hasOwnProperty;
const func1 = require("ajv/dist/runtime/ucs2length").default;
const pattern0 = new RegExp("^postgres(ql)?://", "u");
const pattern1 = new RegExp("^[A-Za-z][A-Za-z0-9_-]{0,63}$", "u");
const pattern3 = new RegExp("^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$", "u");
const pattern14 = new RegExp("^[A-Za-z0-9_-]{1,64}$", "u");
const pattern15 = new RegExp("^/", "u");
const pattern16 = new RegExp("^https?://", "u");
const pattern17 = new RegExp("^[A-Za-z_][A-Za-z0-9_]*$", "u");

function validate0(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://capgate.dev/schemas/capgate.config.schema.json" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate0.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
for(const key0 in data){
if(!(func0.call(schema0.properties, key0))){
const err0 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema0,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
}
if(data.$schema !== undefined){
let data0 = data.$schema;
if(typeof data0 !== "string"){
const err1 = {instancePath:instancePath+"/$schema",schemaPath:"#/properties/%24schema/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.$schema.type,parentSchema:schema0.properties.$schema,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.model !== undefined){
let data1 = data.model;
if(typeof data1 === "string"){
if(func1(data1) < 1){
const err2 = {instancePath:instancePath+"/model",schemaPath:"#/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.model,data:data1};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
else {
const err3 = {instancePath:instancePath+"/model",schemaPath:"#/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.model.type,parentSchema:schema0.properties.model,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.workspace !== undefined){
let data2 = data.workspace;
if(typeof data2 === "string"){
if(func1(data2) < 1){
const err4 = {instancePath:instancePath+"/workspace",schemaPath:"#/properties/workspace/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.workspace,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
else {
const err5 = {instancePath:instancePath+"/workspace",schemaPath:"#/properties/workspace/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.workspace.type,parentSchema:schema0.properties.workspace,data:data2};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.capabilities !== undefined){
let data3 = data.capabilities;
if(Array.isArray(data3)){
if(data3.length > 100){
const err6 = {instancePath:instancePath+"/capabilities",schemaPath:"#/properties/capabilities/maxItems",keyword:"maxItems",params:{limit: 100},message:"must NOT have more than 100 items",schema:100,parentSchema:schema0.properties.capabilities,data:data3};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
const len0 = data3.length;
for(let i0=0; i0<len0; i0++){
let data4 = data3[i0];
if(typeof data4 === "string"){
if(func1(data4) > 1000){
const err7 = {instancePath:instancePath+"/capabilities/" + i0,schemaPath:"#/properties/capabilities/items/maxLength",keyword:"maxLength",params:{limit: 1000},message:"must NOT have more than 1000 characters",schema:1000,parentSchema:schema0.properties.capabilities.items,data:data4};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
if(func1(data4) < 1){
const err8 = {instancePath:instancePath+"/capabilities/" + i0,schemaPath:"#/properties/capabilities/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.capabilities.items,data:data4};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
else {
const err9 = {instancePath:instancePath+"/capabilities/" + i0,schemaPath:"#/properties/capabilities/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.capabilities.items.type,parentSchema:schema0.properties.capabilities.items,data:data4};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
let i1 = data3.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data3[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err10 = {instancePath:instancePath+"/capabilities",schemaPath:"#/properties/capabilities/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema0.properties.capabilities,data:data3};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err11 = {instancePath:instancePath+"/capabilities",schemaPath:"#/properties/capabilities/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.capabilities.type,parentSchema:schema0.properties.capabilities,data:data3};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
if(data.stateDir !== undefined){
let data5 = data.stateDir;
if(typeof data5 === "string"){
if(func1(data5) < 1){
const err12 = {instancePath:instancePath+"/stateDir",schemaPath:"#/properties/stateDir/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.stateDir,data:data5};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
else {
const err13 = {instancePath:instancePath+"/stateDir",schemaPath:"#/properties/stateDir/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.stateDir.type,parentSchema:schema0.properties.stateDir,data:data5};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data.database !== undefined){
let data6 = data.database;
if(typeof data6 === "string"){
if(func1(data6) > 2000){
const err14 = {instancePath:instancePath+"/database",schemaPath:"#/properties/database/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.database,data:data6};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
if(!pattern0.test(data6)){
const err15 = {instancePath:instancePath+"/database",schemaPath:"#/properties/database/pattern",keyword:"pattern",params:{pattern: "^postgres(ql)?://"},message:"must match pattern \""+"^postgres(ql)?://"+"\"",schema:"^postgres(ql)?://",parentSchema:schema0.properties.database,data:data6};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
else {
const err16 = {instancePath:instancePath+"/database",schemaPath:"#/properties/database/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.database.type,parentSchema:schema0.properties.database,data:data6};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
if(data.profiles !== undefined){
let data7 = data.profiles;
if(data7 && typeof data7 == "object" && !Array.isArray(data7)){
for(const key1 in data7){
const _errs18 = errors;
const _errs19 = errors;
const _errs20 = errors;
if(!(((((key1 === "constructor") || (key1 === "prototype")) || (key1 === "toString")) || (key1 === "valueOf")) || (key1 === "hasOwnProperty"))){
const err17 = {};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
var valid5 = _errs20 === errors;
if(valid5){
const err18 = {instancePath:instancePath+"/profiles",schemaPath:"#/properties/profiles/propertyNames/not",keyword:"not",params:{},message:"must NOT be valid",schema:schema0.properties.profiles.propertyNames.not,parentSchema:schema0.properties.profiles.propertyNames,data:key1,propertyName:key1};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
else {
errors = _errs19;
if(vErrors !== null){
if(_errs19){
vErrors.length = _errs19;
}
else {
vErrors = null;
}
}
}
if(typeof key1 === "string"){
if(!pattern1.test(key1)){
const err19 = {instancePath:instancePath+"/profiles",schemaPath:"#/properties/profiles/propertyNames/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.propertyNames,data:key1,propertyName:key1};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
}
var valid4 = _errs18 === errors;
if(!valid4){
const err20 = {instancePath:instancePath+"/profiles",schemaPath:"#/properties/profiles/propertyNames",keyword:"propertyNames",params:{propertyName: key1},message:"property name must be valid",schema:schema0.properties.profiles.propertyNames,parentSchema:schema0.properties.profiles,data:data7};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
for(const key2 in data7){
if(!(((((key2 === "Orchestrator") || (key2 === "Coder")) || (key2 === "Researcher")) || (key2 === "ComputerOperator")) || (key2 === "Verifier"))){
let data8 = data7[key2];
if(data8 && typeof data8 == "object" && !Array.isArray(data8)){
if(data8.promptDelta === undefined){
const err21 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/profiles/additionalProperties/required",keyword:"required",params:{missingProperty: "promptDelta"},message:"must have required property '"+"promptDelta"+"'",schema:schema0.properties.profiles.additionalProperties.required,parentSchema:schema0.properties.profiles.additionalProperties,data:data8};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
if(data8.charBudget === undefined){
const err22 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/profiles/additionalProperties/required",keyword:"required",params:{missingProperty: "charBudget"},message:"must have required property '"+"charBudget"+"'",schema:schema0.properties.profiles.additionalProperties.required,parentSchema:schema0.properties.profiles.additionalProperties,data:data8};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
for(const key3 in data8){
if(!(((((key3 === "name") || (key3 === "promptDelta")) || (key3 === "preload")) || (key3 === "charBudget")) || (key3 === "maySpawnWorkers"))){
const err23 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/profiles/additionalProperties/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key3},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.additionalProperties,data:data8};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
if(data8.name !== undefined){
let data9 = data8.name;
if(typeof data9 === "string"){
if(!pattern1.test(data9)){
const err24 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/name",schemaPath:"#/properties/profiles/additionalProperties/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.additionalProperties.properties.name,data:data9};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
}
else {
const err25 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/name",schemaPath:"#/properties/profiles/additionalProperties/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.additionalProperties.properties.name.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.name,data:data9};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
}
if(data8.promptDelta !== undefined){
let data10 = data8.promptDelta;
if(typeof data10 === "string"){
if(func1(data10) > 2000){
const err26 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/promptDelta",schemaPath:"#/properties/profiles/additionalProperties/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.additionalProperties.properties.promptDelta,data:data10};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
if(func1(data10) < 1){
const err27 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/promptDelta",schemaPath:"#/properties/profiles/additionalProperties/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.additionalProperties.properties.promptDelta,data:data10};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
else {
const err28 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/promptDelta",schemaPath:"#/properties/profiles/additionalProperties/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.additionalProperties.properties.promptDelta.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.promptDelta,data:data10};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
}
if(data8.preload !== undefined){
let data11 = data8.preload;
if(Array.isArray(data11)){
const len1 = data11.length;
for(let i2=0; i2<len1; i2++){
let data12 = data11[i2];
if(typeof data12 === "string"){
if(!pattern3.test(data12)){
const err29 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/preload/" + i2,schemaPath:"#/properties/profiles/additionalProperties/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.additionalProperties.properties.preload.items,data:data12};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
else {
const err30 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/preload/" + i2,schemaPath:"#/properties/profiles/additionalProperties/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.additionalProperties.properties.preload.items.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.preload.items,data:data12};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
let i3 = data11.length;
let j1;
if(i3 > 1){
const indices1 = {};
for(;i3--;){
let item1 = data11[i3];
if(typeof item1 !== "string"){
continue;
}
if(typeof indices1[item1] == "number"){
j1 = indices1[item1];
const err31 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/preload",schemaPath:"#/properties/profiles/additionalProperties/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i3, j: j1},message:"must NOT have duplicate items (items ## "+j1+" and "+i3+" are identical)",schema:true,parentSchema:schema0.properties.profiles.additionalProperties.properties.preload,data:data11};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
break;
}
indices1[item1] = i3;
}
}
}
else {
const err32 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/preload",schemaPath:"#/properties/profiles/additionalProperties/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.additionalProperties.properties.preload.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.preload,data:data11};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
if(data8.charBudget !== undefined){
let data13 = data8.charBudget;
if(!((typeof data13 == "number") && (!(data13 % 1) && !isNaN(data13)))){
const err33 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/charBudget",schemaPath:"#/properties/profiles/additionalProperties/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.additionalProperties.properties.charBudget.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.charBudget,data:data13};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
if(typeof data13 == "number"){
if(data13 > 10000000 || isNaN(data13)){
const err34 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/charBudget",schemaPath:"#/properties/profiles/additionalProperties/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.additionalProperties.properties.charBudget,data:data13};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
if(data13 < 1 || isNaN(data13)){
const err35 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/charBudget",schemaPath:"#/properties/profiles/additionalProperties/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.additionalProperties.properties.charBudget,data:data13};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
}
if(data8.maySpawnWorkers !== undefined){
let data14 = data8.maySpawnWorkers;
if(typeof data14 !== "boolean"){
const err36 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1")+"/maySpawnWorkers",schemaPath:"#/properties/profiles/additionalProperties/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.additionalProperties.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.additionalProperties.properties.maySpawnWorkers,data:data14};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
}
}
else {
const err37 = {instancePath:instancePath+"/profiles/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/profiles/additionalProperties/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.additionalProperties.type,parentSchema:schema0.properties.profiles.additionalProperties,data:data8};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
}
if(data7.Orchestrator !== undefined){
let data15 = data7.Orchestrator;
if(data15 && typeof data15 == "object" && !Array.isArray(data15)){
for(const key4 in data15){
if(!(((((key4 === "name") || (key4 === "promptDelta")) || (key4 === "preload")) || (key4 === "charBudget")) || (key4 === "maySpawnWorkers"))){
const err38 = {instancePath:instancePath+"/profiles/Orchestrator",schemaPath:"#/properties/profiles/properties/Orchestrator/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key4},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.properties.Orchestrator,data:data15};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
}
if(data15.name !== undefined){
let data16 = data15.name;
if(typeof data16 === "string"){
if(!pattern1.test(data16)){
const err39 = {instancePath:instancePath+"/profiles/Orchestrator/name",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.name,data:data16};
if(vErrors === null){
vErrors = [err39];
}
else {
vErrors.push(err39);
}
errors++;
}
}
else {
const err40 = {instancePath:instancePath+"/profiles/Orchestrator/name",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Orchestrator.properties.name.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.name,data:data16};
if(vErrors === null){
vErrors = [err40];
}
else {
vErrors.push(err40);
}
errors++;
}
}
if(data15.promptDelta !== undefined){
let data17 = data15.promptDelta;
if(typeof data17 === "string"){
if(func1(data17) > 2000){
const err41 = {instancePath:instancePath+"/profiles/Orchestrator/promptDelta",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.promptDelta,data:data17};
if(vErrors === null){
vErrors = [err41];
}
else {
vErrors.push(err41);
}
errors++;
}
if(func1(data17) < 1){
const err42 = {instancePath:instancePath+"/profiles/Orchestrator/promptDelta",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.promptDelta,data:data17};
if(vErrors === null){
vErrors = [err42];
}
else {
vErrors.push(err42);
}
errors++;
}
}
else {
const err43 = {instancePath:instancePath+"/profiles/Orchestrator/promptDelta",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Orchestrator.properties.promptDelta.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.promptDelta,data:data17};
if(vErrors === null){
vErrors = [err43];
}
else {
vErrors.push(err43);
}
errors++;
}
}
if(data15.preload !== undefined){
let data18 = data15.preload;
if(Array.isArray(data18)){
const len2 = data18.length;
for(let i4=0; i4<len2; i4++){
let data19 = data18[i4];
if(typeof data19 === "string"){
if(!pattern3.test(data19)){
const err44 = {instancePath:instancePath+"/profiles/Orchestrator/preload/" + i4,schemaPath:"#/properties/profiles/properties/Orchestrator/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.preload.items,data:data19};
if(vErrors === null){
vErrors = [err44];
}
else {
vErrors.push(err44);
}
errors++;
}
}
else {
const err45 = {instancePath:instancePath+"/profiles/Orchestrator/preload/" + i4,schemaPath:"#/properties/profiles/properties/Orchestrator/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Orchestrator.properties.preload.items.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.preload.items,data:data19};
if(vErrors === null){
vErrors = [err45];
}
else {
vErrors.push(err45);
}
errors++;
}
}
let i5 = data18.length;
let j2;
if(i5 > 1){
const indices2 = {};
for(;i5--;){
let item2 = data18[i5];
if(typeof item2 !== "string"){
continue;
}
if(typeof indices2[item2] == "number"){
j2 = indices2[item2];
const err46 = {instancePath:instancePath+"/profiles/Orchestrator/preload",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i5, j: j2},message:"must NOT have duplicate items (items ## "+j2+" and "+i5+" are identical)",schema:true,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.preload,data:data18};
if(vErrors === null){
vErrors = [err46];
}
else {
vErrors.push(err46);
}
errors++;
break;
}
indices2[item2] = i5;
}
}
}
else {
const err47 = {instancePath:instancePath+"/profiles/Orchestrator/preload",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.properties.Orchestrator.properties.preload.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.preload,data:data18};
if(vErrors === null){
vErrors = [err47];
}
else {
vErrors.push(err47);
}
errors++;
}
}
if(data15.charBudget !== undefined){
let data20 = data15.charBudget;
if(!((typeof data20 == "number") && (!(data20 % 1) && !isNaN(data20)))){
const err48 = {instancePath:instancePath+"/profiles/Orchestrator/charBudget",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.properties.Orchestrator.properties.charBudget.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.charBudget,data:data20};
if(vErrors === null){
vErrors = [err48];
}
else {
vErrors.push(err48);
}
errors++;
}
if(typeof data20 == "number"){
if(data20 > 10000000 || isNaN(data20)){
const err49 = {instancePath:instancePath+"/profiles/Orchestrator/charBudget",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.charBudget,data:data20};
if(vErrors === null){
vErrors = [err49];
}
else {
vErrors.push(err49);
}
errors++;
}
if(data20 < 1 || isNaN(data20)){
const err50 = {instancePath:instancePath+"/profiles/Orchestrator/charBudget",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.charBudget,data:data20};
if(vErrors === null){
vErrors = [err50];
}
else {
vErrors.push(err50);
}
errors++;
}
}
}
if(data15.maySpawnWorkers !== undefined){
let data21 = data15.maySpawnWorkers;
if(typeof data21 !== "boolean"){
const err51 = {instancePath:instancePath+"/profiles/Orchestrator/maySpawnWorkers",schemaPath:"#/properties/profiles/properties/Orchestrator/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.properties.Orchestrator.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.properties.Orchestrator.properties.maySpawnWorkers,data:data21};
if(vErrors === null){
vErrors = [err51];
}
else {
vErrors.push(err51);
}
errors++;
}
}
}
else {
const err52 = {instancePath:instancePath+"/profiles/Orchestrator",schemaPath:"#/properties/profiles/properties/Orchestrator/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.properties.Orchestrator.type,parentSchema:schema0.properties.profiles.properties.Orchestrator,data:data15};
if(vErrors === null){
vErrors = [err52];
}
else {
vErrors.push(err52);
}
errors++;
}
}
if(data7.Coder !== undefined){
let data22 = data7.Coder;
if(data22 && typeof data22 == "object" && !Array.isArray(data22)){
for(const key5 in data22){
if(!(((((key5 === "name") || (key5 === "promptDelta")) || (key5 === "preload")) || (key5 === "charBudget")) || (key5 === "maySpawnWorkers"))){
const err53 = {instancePath:instancePath+"/profiles/Coder",schemaPath:"#/properties/profiles/properties/Coder/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key5},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.properties.Coder,data:data22};
if(vErrors === null){
vErrors = [err53];
}
else {
vErrors.push(err53);
}
errors++;
}
}
if(data22.name !== undefined){
let data23 = data22.name;
if(typeof data23 === "string"){
if(!pattern1.test(data23)){
const err54 = {instancePath:instancePath+"/profiles/Coder/name",schemaPath:"#/properties/profiles/properties/Coder/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.properties.Coder.properties.name,data:data23};
if(vErrors === null){
vErrors = [err54];
}
else {
vErrors.push(err54);
}
errors++;
}
}
else {
const err55 = {instancePath:instancePath+"/profiles/Coder/name",schemaPath:"#/properties/profiles/properties/Coder/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Coder.properties.name.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.name,data:data23};
if(vErrors === null){
vErrors = [err55];
}
else {
vErrors.push(err55);
}
errors++;
}
}
if(data22.promptDelta !== undefined){
let data24 = data22.promptDelta;
if(typeof data24 === "string"){
if(func1(data24) > 2000){
const err56 = {instancePath:instancePath+"/profiles/Coder/promptDelta",schemaPath:"#/properties/profiles/properties/Coder/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.properties.Coder.properties.promptDelta,data:data24};
if(vErrors === null){
vErrors = [err56];
}
else {
vErrors.push(err56);
}
errors++;
}
if(func1(data24) < 1){
const err57 = {instancePath:instancePath+"/profiles/Coder/promptDelta",schemaPath:"#/properties/profiles/properties/Coder/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.properties.Coder.properties.promptDelta,data:data24};
if(vErrors === null){
vErrors = [err57];
}
else {
vErrors.push(err57);
}
errors++;
}
}
else {
const err58 = {instancePath:instancePath+"/profiles/Coder/promptDelta",schemaPath:"#/properties/profiles/properties/Coder/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Coder.properties.promptDelta.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.promptDelta,data:data24};
if(vErrors === null){
vErrors = [err58];
}
else {
vErrors.push(err58);
}
errors++;
}
}
if(data22.preload !== undefined){
let data25 = data22.preload;
if(Array.isArray(data25)){
const len3 = data25.length;
for(let i6=0; i6<len3; i6++){
let data26 = data25[i6];
if(typeof data26 === "string"){
if(!pattern3.test(data26)){
const err59 = {instancePath:instancePath+"/profiles/Coder/preload/" + i6,schemaPath:"#/properties/profiles/properties/Coder/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.properties.Coder.properties.preload.items,data:data26};
if(vErrors === null){
vErrors = [err59];
}
else {
vErrors.push(err59);
}
errors++;
}
}
else {
const err60 = {instancePath:instancePath+"/profiles/Coder/preload/" + i6,schemaPath:"#/properties/profiles/properties/Coder/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Coder.properties.preload.items.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.preload.items,data:data26};
if(vErrors === null){
vErrors = [err60];
}
else {
vErrors.push(err60);
}
errors++;
}
}
let i7 = data25.length;
let j3;
if(i7 > 1){
const indices3 = {};
for(;i7--;){
let item3 = data25[i7];
if(typeof item3 !== "string"){
continue;
}
if(typeof indices3[item3] == "number"){
j3 = indices3[item3];
const err61 = {instancePath:instancePath+"/profiles/Coder/preload",schemaPath:"#/properties/profiles/properties/Coder/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i7, j: j3},message:"must NOT have duplicate items (items ## "+j3+" and "+i7+" are identical)",schema:true,parentSchema:schema0.properties.profiles.properties.Coder.properties.preload,data:data25};
if(vErrors === null){
vErrors = [err61];
}
else {
vErrors.push(err61);
}
errors++;
break;
}
indices3[item3] = i7;
}
}
}
else {
const err62 = {instancePath:instancePath+"/profiles/Coder/preload",schemaPath:"#/properties/profiles/properties/Coder/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.properties.Coder.properties.preload.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.preload,data:data25};
if(vErrors === null){
vErrors = [err62];
}
else {
vErrors.push(err62);
}
errors++;
}
}
if(data22.charBudget !== undefined){
let data27 = data22.charBudget;
if(!((typeof data27 == "number") && (!(data27 % 1) && !isNaN(data27)))){
const err63 = {instancePath:instancePath+"/profiles/Coder/charBudget",schemaPath:"#/properties/profiles/properties/Coder/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.properties.Coder.properties.charBudget.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.charBudget,data:data27};
if(vErrors === null){
vErrors = [err63];
}
else {
vErrors.push(err63);
}
errors++;
}
if(typeof data27 == "number"){
if(data27 > 10000000 || isNaN(data27)){
const err64 = {instancePath:instancePath+"/profiles/Coder/charBudget",schemaPath:"#/properties/profiles/properties/Coder/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.properties.Coder.properties.charBudget,data:data27};
if(vErrors === null){
vErrors = [err64];
}
else {
vErrors.push(err64);
}
errors++;
}
if(data27 < 1 || isNaN(data27)){
const err65 = {instancePath:instancePath+"/profiles/Coder/charBudget",schemaPath:"#/properties/profiles/properties/Coder/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.properties.Coder.properties.charBudget,data:data27};
if(vErrors === null){
vErrors = [err65];
}
else {
vErrors.push(err65);
}
errors++;
}
}
}
if(data22.maySpawnWorkers !== undefined){
let data28 = data22.maySpawnWorkers;
if(typeof data28 !== "boolean"){
const err66 = {instancePath:instancePath+"/profiles/Coder/maySpawnWorkers",schemaPath:"#/properties/profiles/properties/Coder/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.properties.Coder.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.properties.Coder.properties.maySpawnWorkers,data:data28};
if(vErrors === null){
vErrors = [err66];
}
else {
vErrors.push(err66);
}
errors++;
}
}
}
else {
const err67 = {instancePath:instancePath+"/profiles/Coder",schemaPath:"#/properties/profiles/properties/Coder/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.properties.Coder.type,parentSchema:schema0.properties.profiles.properties.Coder,data:data22};
if(vErrors === null){
vErrors = [err67];
}
else {
vErrors.push(err67);
}
errors++;
}
}
if(data7.Researcher !== undefined){
let data29 = data7.Researcher;
if(data29 && typeof data29 == "object" && !Array.isArray(data29)){
for(const key6 in data29){
if(!(((((key6 === "name") || (key6 === "promptDelta")) || (key6 === "preload")) || (key6 === "charBudget")) || (key6 === "maySpawnWorkers"))){
const err68 = {instancePath:instancePath+"/profiles/Researcher",schemaPath:"#/properties/profiles/properties/Researcher/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key6},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.properties.Researcher,data:data29};
if(vErrors === null){
vErrors = [err68];
}
else {
vErrors.push(err68);
}
errors++;
}
}
if(data29.name !== undefined){
let data30 = data29.name;
if(typeof data30 === "string"){
if(!pattern1.test(data30)){
const err69 = {instancePath:instancePath+"/profiles/Researcher/name",schemaPath:"#/properties/profiles/properties/Researcher/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.properties.Researcher.properties.name,data:data30};
if(vErrors === null){
vErrors = [err69];
}
else {
vErrors.push(err69);
}
errors++;
}
}
else {
const err70 = {instancePath:instancePath+"/profiles/Researcher/name",schemaPath:"#/properties/profiles/properties/Researcher/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Researcher.properties.name.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.name,data:data30};
if(vErrors === null){
vErrors = [err70];
}
else {
vErrors.push(err70);
}
errors++;
}
}
if(data29.promptDelta !== undefined){
let data31 = data29.promptDelta;
if(typeof data31 === "string"){
if(func1(data31) > 2000){
const err71 = {instancePath:instancePath+"/profiles/Researcher/promptDelta",schemaPath:"#/properties/profiles/properties/Researcher/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.properties.Researcher.properties.promptDelta,data:data31};
if(vErrors === null){
vErrors = [err71];
}
else {
vErrors.push(err71);
}
errors++;
}
if(func1(data31) < 1){
const err72 = {instancePath:instancePath+"/profiles/Researcher/promptDelta",schemaPath:"#/properties/profiles/properties/Researcher/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.properties.Researcher.properties.promptDelta,data:data31};
if(vErrors === null){
vErrors = [err72];
}
else {
vErrors.push(err72);
}
errors++;
}
}
else {
const err73 = {instancePath:instancePath+"/profiles/Researcher/promptDelta",schemaPath:"#/properties/profiles/properties/Researcher/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Researcher.properties.promptDelta.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.promptDelta,data:data31};
if(vErrors === null){
vErrors = [err73];
}
else {
vErrors.push(err73);
}
errors++;
}
}
if(data29.preload !== undefined){
let data32 = data29.preload;
if(Array.isArray(data32)){
const len4 = data32.length;
for(let i8=0; i8<len4; i8++){
let data33 = data32[i8];
if(typeof data33 === "string"){
if(!pattern3.test(data33)){
const err74 = {instancePath:instancePath+"/profiles/Researcher/preload/" + i8,schemaPath:"#/properties/profiles/properties/Researcher/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.properties.Researcher.properties.preload.items,data:data33};
if(vErrors === null){
vErrors = [err74];
}
else {
vErrors.push(err74);
}
errors++;
}
}
else {
const err75 = {instancePath:instancePath+"/profiles/Researcher/preload/" + i8,schemaPath:"#/properties/profiles/properties/Researcher/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Researcher.properties.preload.items.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.preload.items,data:data33};
if(vErrors === null){
vErrors = [err75];
}
else {
vErrors.push(err75);
}
errors++;
}
}
let i9 = data32.length;
let j4;
if(i9 > 1){
const indices4 = {};
for(;i9--;){
let item4 = data32[i9];
if(typeof item4 !== "string"){
continue;
}
if(typeof indices4[item4] == "number"){
j4 = indices4[item4];
const err76 = {instancePath:instancePath+"/profiles/Researcher/preload",schemaPath:"#/properties/profiles/properties/Researcher/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i9, j: j4},message:"must NOT have duplicate items (items ## "+j4+" and "+i9+" are identical)",schema:true,parentSchema:schema0.properties.profiles.properties.Researcher.properties.preload,data:data32};
if(vErrors === null){
vErrors = [err76];
}
else {
vErrors.push(err76);
}
errors++;
break;
}
indices4[item4] = i9;
}
}
}
else {
const err77 = {instancePath:instancePath+"/profiles/Researcher/preload",schemaPath:"#/properties/profiles/properties/Researcher/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.properties.Researcher.properties.preload.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.preload,data:data32};
if(vErrors === null){
vErrors = [err77];
}
else {
vErrors.push(err77);
}
errors++;
}
}
if(data29.charBudget !== undefined){
let data34 = data29.charBudget;
if(!((typeof data34 == "number") && (!(data34 % 1) && !isNaN(data34)))){
const err78 = {instancePath:instancePath+"/profiles/Researcher/charBudget",schemaPath:"#/properties/profiles/properties/Researcher/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.properties.Researcher.properties.charBudget.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.charBudget,data:data34};
if(vErrors === null){
vErrors = [err78];
}
else {
vErrors.push(err78);
}
errors++;
}
if(typeof data34 == "number"){
if(data34 > 10000000 || isNaN(data34)){
const err79 = {instancePath:instancePath+"/profiles/Researcher/charBudget",schemaPath:"#/properties/profiles/properties/Researcher/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.properties.Researcher.properties.charBudget,data:data34};
if(vErrors === null){
vErrors = [err79];
}
else {
vErrors.push(err79);
}
errors++;
}
if(data34 < 1 || isNaN(data34)){
const err80 = {instancePath:instancePath+"/profiles/Researcher/charBudget",schemaPath:"#/properties/profiles/properties/Researcher/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.properties.Researcher.properties.charBudget,data:data34};
if(vErrors === null){
vErrors = [err80];
}
else {
vErrors.push(err80);
}
errors++;
}
}
}
if(data29.maySpawnWorkers !== undefined){
let data35 = data29.maySpawnWorkers;
if(typeof data35 !== "boolean"){
const err81 = {instancePath:instancePath+"/profiles/Researcher/maySpawnWorkers",schemaPath:"#/properties/profiles/properties/Researcher/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.properties.Researcher.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.properties.Researcher.properties.maySpawnWorkers,data:data35};
if(vErrors === null){
vErrors = [err81];
}
else {
vErrors.push(err81);
}
errors++;
}
}
}
else {
const err82 = {instancePath:instancePath+"/profiles/Researcher",schemaPath:"#/properties/profiles/properties/Researcher/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.properties.Researcher.type,parentSchema:schema0.properties.profiles.properties.Researcher,data:data29};
if(vErrors === null){
vErrors = [err82];
}
else {
vErrors.push(err82);
}
errors++;
}
}
if(data7.ComputerOperator !== undefined){
let data36 = data7.ComputerOperator;
if(data36 && typeof data36 == "object" && !Array.isArray(data36)){
for(const key7 in data36){
if(!(((((key7 === "name") || (key7 === "promptDelta")) || (key7 === "preload")) || (key7 === "charBudget")) || (key7 === "maySpawnWorkers"))){
const err83 = {instancePath:instancePath+"/profiles/ComputerOperator",schemaPath:"#/properties/profiles/properties/ComputerOperator/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key7},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.properties.ComputerOperator,data:data36};
if(vErrors === null){
vErrors = [err83];
}
else {
vErrors.push(err83);
}
errors++;
}
}
if(data36.name !== undefined){
let data37 = data36.name;
if(typeof data37 === "string"){
if(!pattern1.test(data37)){
const err84 = {instancePath:instancePath+"/profiles/ComputerOperator/name",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.name,data:data37};
if(vErrors === null){
vErrors = [err84];
}
else {
vErrors.push(err84);
}
errors++;
}
}
else {
const err85 = {instancePath:instancePath+"/profiles/ComputerOperator/name",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.ComputerOperator.properties.name.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.name,data:data37};
if(vErrors === null){
vErrors = [err85];
}
else {
vErrors.push(err85);
}
errors++;
}
}
if(data36.promptDelta !== undefined){
let data38 = data36.promptDelta;
if(typeof data38 === "string"){
if(func1(data38) > 2000){
const err86 = {instancePath:instancePath+"/profiles/ComputerOperator/promptDelta",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.promptDelta,data:data38};
if(vErrors === null){
vErrors = [err86];
}
else {
vErrors.push(err86);
}
errors++;
}
if(func1(data38) < 1){
const err87 = {instancePath:instancePath+"/profiles/ComputerOperator/promptDelta",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.promptDelta,data:data38};
if(vErrors === null){
vErrors = [err87];
}
else {
vErrors.push(err87);
}
errors++;
}
}
else {
const err88 = {instancePath:instancePath+"/profiles/ComputerOperator/promptDelta",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.ComputerOperator.properties.promptDelta.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.promptDelta,data:data38};
if(vErrors === null){
vErrors = [err88];
}
else {
vErrors.push(err88);
}
errors++;
}
}
if(data36.preload !== undefined){
let data39 = data36.preload;
if(Array.isArray(data39)){
const len5 = data39.length;
for(let i10=0; i10<len5; i10++){
let data40 = data39[i10];
if(typeof data40 === "string"){
if(!pattern3.test(data40)){
const err89 = {instancePath:instancePath+"/profiles/ComputerOperator/preload/" + i10,schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.preload.items,data:data40};
if(vErrors === null){
vErrors = [err89];
}
else {
vErrors.push(err89);
}
errors++;
}
}
else {
const err90 = {instancePath:instancePath+"/profiles/ComputerOperator/preload/" + i10,schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.ComputerOperator.properties.preload.items.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.preload.items,data:data40};
if(vErrors === null){
vErrors = [err90];
}
else {
vErrors.push(err90);
}
errors++;
}
}
let i11 = data39.length;
let j5;
if(i11 > 1){
const indices5 = {};
for(;i11--;){
let item5 = data39[i11];
if(typeof item5 !== "string"){
continue;
}
if(typeof indices5[item5] == "number"){
j5 = indices5[item5];
const err91 = {instancePath:instancePath+"/profiles/ComputerOperator/preload",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i11, j: j5},message:"must NOT have duplicate items (items ## "+j5+" and "+i11+" are identical)",schema:true,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.preload,data:data39};
if(vErrors === null){
vErrors = [err91];
}
else {
vErrors.push(err91);
}
errors++;
break;
}
indices5[item5] = i11;
}
}
}
else {
const err92 = {instancePath:instancePath+"/profiles/ComputerOperator/preload",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.properties.ComputerOperator.properties.preload.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.preload,data:data39};
if(vErrors === null){
vErrors = [err92];
}
else {
vErrors.push(err92);
}
errors++;
}
}
if(data36.charBudget !== undefined){
let data41 = data36.charBudget;
if(!((typeof data41 == "number") && (!(data41 % 1) && !isNaN(data41)))){
const err93 = {instancePath:instancePath+"/profiles/ComputerOperator/charBudget",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.properties.ComputerOperator.properties.charBudget.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.charBudget,data:data41};
if(vErrors === null){
vErrors = [err93];
}
else {
vErrors.push(err93);
}
errors++;
}
if(typeof data41 == "number"){
if(data41 > 10000000 || isNaN(data41)){
const err94 = {instancePath:instancePath+"/profiles/ComputerOperator/charBudget",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.charBudget,data:data41};
if(vErrors === null){
vErrors = [err94];
}
else {
vErrors.push(err94);
}
errors++;
}
if(data41 < 1 || isNaN(data41)){
const err95 = {instancePath:instancePath+"/profiles/ComputerOperator/charBudget",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.charBudget,data:data41};
if(vErrors === null){
vErrors = [err95];
}
else {
vErrors.push(err95);
}
errors++;
}
}
}
if(data36.maySpawnWorkers !== undefined){
let data42 = data36.maySpawnWorkers;
if(typeof data42 !== "boolean"){
const err96 = {instancePath:instancePath+"/profiles/ComputerOperator/maySpawnWorkers",schemaPath:"#/properties/profiles/properties/ComputerOperator/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.properties.ComputerOperator.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator.properties.maySpawnWorkers,data:data42};
if(vErrors === null){
vErrors = [err96];
}
else {
vErrors.push(err96);
}
errors++;
}
}
}
else {
const err97 = {instancePath:instancePath+"/profiles/ComputerOperator",schemaPath:"#/properties/profiles/properties/ComputerOperator/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.properties.ComputerOperator.type,parentSchema:schema0.properties.profiles.properties.ComputerOperator,data:data36};
if(vErrors === null){
vErrors = [err97];
}
else {
vErrors.push(err97);
}
errors++;
}
}
if(data7.Verifier !== undefined){
let data43 = data7.Verifier;
if(data43 && typeof data43 == "object" && !Array.isArray(data43)){
for(const key8 in data43){
if(!(((((key8 === "name") || (key8 === "promptDelta")) || (key8 === "preload")) || (key8 === "charBudget")) || (key8 === "maySpawnWorkers"))){
const err98 = {instancePath:instancePath+"/profiles/Verifier",schemaPath:"#/properties/profiles/properties/Verifier/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key8},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.profiles.properties.Verifier,data:data43};
if(vErrors === null){
vErrors = [err98];
}
else {
vErrors.push(err98);
}
errors++;
}
}
if(data43.name !== undefined){
let data44 = data43.name;
if(typeof data44 === "string"){
if(!pattern1.test(data44)){
const err99 = {instancePath:instancePath+"/profiles/Verifier/name",schemaPath:"#/properties/profiles/properties/Verifier/properties/name/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,63}$",parentSchema:schema0.properties.profiles.properties.Verifier.properties.name,data:data44};
if(vErrors === null){
vErrors = [err99];
}
else {
vErrors.push(err99);
}
errors++;
}
}
else {
const err100 = {instancePath:instancePath+"/profiles/Verifier/name",schemaPath:"#/properties/profiles/properties/Verifier/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Verifier.properties.name.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.name,data:data44};
if(vErrors === null){
vErrors = [err100];
}
else {
vErrors.push(err100);
}
errors++;
}
}
if(data43.promptDelta !== undefined){
let data45 = data43.promptDelta;
if(typeof data45 === "string"){
if(func1(data45) > 2000){
const err101 = {instancePath:instancePath+"/profiles/Verifier/promptDelta",schemaPath:"#/properties/profiles/properties/Verifier/properties/promptDelta/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters",schema:2000,parentSchema:schema0.properties.profiles.properties.Verifier.properties.promptDelta,data:data45};
if(vErrors === null){
vErrors = [err101];
}
else {
vErrors.push(err101);
}
errors++;
}
if(func1(data45) < 1){
const err102 = {instancePath:instancePath+"/profiles/Verifier/promptDelta",schemaPath:"#/properties/profiles/properties/Verifier/properties/promptDelta/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.profiles.properties.Verifier.properties.promptDelta,data:data45};
if(vErrors === null){
vErrors = [err102];
}
else {
vErrors.push(err102);
}
errors++;
}
}
else {
const err103 = {instancePath:instancePath+"/profiles/Verifier/promptDelta",schemaPath:"#/properties/profiles/properties/Verifier/properties/promptDelta/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Verifier.properties.promptDelta.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.promptDelta,data:data45};
if(vErrors === null){
vErrors = [err103];
}
else {
vErrors.push(err103);
}
errors++;
}
}
if(data43.preload !== undefined){
let data46 = data43.preload;
if(Array.isArray(data46)){
const len6 = data46.length;
for(let i12=0; i12<len6; i12++){
let data47 = data46[i12];
if(typeof data47 === "string"){
if(!pattern3.test(data47)){
const err104 = {instancePath:instancePath+"/profiles/Verifier/preload/" + i12,schemaPath:"#/properties/profiles/properties/Verifier/properties/preload/items/pattern",keyword:"pattern",params:{pattern: "^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"},message:"must match pattern \""+"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$"+"\"",schema:"^(?:[a-z][a-z0-9_]*|mcp:[^\\s/]+)$",parentSchema:schema0.properties.profiles.properties.Verifier.properties.preload.items,data:data47};
if(vErrors === null){
vErrors = [err104];
}
else {
vErrors.push(err104);
}
errors++;
}
}
else {
const err105 = {instancePath:instancePath+"/profiles/Verifier/preload/" + i12,schemaPath:"#/properties/profiles/properties/Verifier/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.profiles.properties.Verifier.properties.preload.items.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.preload.items,data:data47};
if(vErrors === null){
vErrors = [err105];
}
else {
vErrors.push(err105);
}
errors++;
}
}
let i13 = data46.length;
let j6;
if(i13 > 1){
const indices6 = {};
for(;i13--;){
let item6 = data46[i13];
if(typeof item6 !== "string"){
continue;
}
if(typeof indices6[item6] == "number"){
j6 = indices6[item6];
const err106 = {instancePath:instancePath+"/profiles/Verifier/preload",schemaPath:"#/properties/profiles/properties/Verifier/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i13, j: j6},message:"must NOT have duplicate items (items ## "+j6+" and "+i13+" are identical)",schema:true,parentSchema:schema0.properties.profiles.properties.Verifier.properties.preload,data:data46};
if(vErrors === null){
vErrors = [err106];
}
else {
vErrors.push(err106);
}
errors++;
break;
}
indices6[item6] = i13;
}
}
}
else {
const err107 = {instancePath:instancePath+"/profiles/Verifier/preload",schemaPath:"#/properties/profiles/properties/Verifier/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.profiles.properties.Verifier.properties.preload.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.preload,data:data46};
if(vErrors === null){
vErrors = [err107];
}
else {
vErrors.push(err107);
}
errors++;
}
}
if(data43.charBudget !== undefined){
let data48 = data43.charBudget;
if(!((typeof data48 == "number") && (!(data48 % 1) && !isNaN(data48)))){
const err108 = {instancePath:instancePath+"/profiles/Verifier/charBudget",schemaPath:"#/properties/profiles/properties/Verifier/properties/charBudget/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.profiles.properties.Verifier.properties.charBudget.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.charBudget,data:data48};
if(vErrors === null){
vErrors = [err108];
}
else {
vErrors.push(err108);
}
errors++;
}
if(typeof data48 == "number"){
if(data48 > 10000000 || isNaN(data48)){
const err109 = {instancePath:instancePath+"/profiles/Verifier/charBudget",schemaPath:"#/properties/profiles/properties/Verifier/properties/charBudget/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000000},message:"must be <= 10000000",schema:10000000,parentSchema:schema0.properties.profiles.properties.Verifier.properties.charBudget,data:data48};
if(vErrors === null){
vErrors = [err109];
}
else {
vErrors.push(err109);
}
errors++;
}
if(data48 < 1 || isNaN(data48)){
const err110 = {instancePath:instancePath+"/profiles/Verifier/charBudget",schemaPath:"#/properties/profiles/properties/Verifier/properties/charBudget/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.profiles.properties.Verifier.properties.charBudget,data:data48};
if(vErrors === null){
vErrors = [err110];
}
else {
vErrors.push(err110);
}
errors++;
}
}
}
if(data43.maySpawnWorkers !== undefined){
let data49 = data43.maySpawnWorkers;
if(typeof data49 !== "boolean"){
const err111 = {instancePath:instancePath+"/profiles/Verifier/maySpawnWorkers",schemaPath:"#/properties/profiles/properties/Verifier/properties/maySpawnWorkers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.profiles.properties.Verifier.properties.maySpawnWorkers.type,parentSchema:schema0.properties.profiles.properties.Verifier.properties.maySpawnWorkers,data:data49};
if(vErrors === null){
vErrors = [err111];
}
else {
vErrors.push(err111);
}
errors++;
}
}
}
else {
const err112 = {instancePath:instancePath+"/profiles/Verifier",schemaPath:"#/properties/profiles/properties/Verifier/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.properties.Verifier.type,parentSchema:schema0.properties.profiles.properties.Verifier,data:data43};
if(vErrors === null){
vErrors = [err112];
}
else {
vErrors.push(err112);
}
errors++;
}
}
}
else {
const err113 = {instancePath:instancePath+"/profiles",schemaPath:"#/properties/profiles/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.profiles.type,parentSchema:schema0.properties.profiles,data:data7};
if(vErrors === null){
vErrors = [err113];
}
else {
vErrors.push(err113);
}
errors++;
}
}
if(data.mcpServers !== undefined){
let data50 = data.mcpServers;
if(data50 && typeof data50 == "object" && !Array.isArray(data50)){
for(const key9 in data50){
const _errs114 = errors;
if(typeof key9 === "string"){
if(!pattern14.test(key9)){
const err114 = {instancePath:instancePath+"/mcpServers",schemaPath:"#/properties/mcpServers/propertyNames/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z0-9_-]{1,64}$"},message:"must match pattern \""+"^[A-Za-z0-9_-]{1,64}$"+"\"",schema:"^[A-Za-z0-9_-]{1,64}$",parentSchema:schema0.properties.mcpServers.propertyNames,data:key9,propertyName:key9};
if(vErrors === null){
vErrors = [err114];
}
else {
vErrors.push(err114);
}
errors++;
}
}
var valid32 = _errs114 === errors;
if(!valid32){
const err115 = {instancePath:instancePath+"/mcpServers",schemaPath:"#/properties/mcpServers/propertyNames",keyword:"propertyNames",params:{propertyName: key9},message:"property name must be valid",schema:schema0.properties.mcpServers.propertyNames,parentSchema:schema0.properties.mcpServers,data:data50};
if(vErrors === null){
vErrors = [err115];
}
else {
vErrors.push(err115);
}
errors++;
}
}
for(const key10 in data50){
let data51 = data50[key10];
const _errs118 = errors;
let valid34 = false;
let passing0 = null;
const _errs119 = errors;
if(data51 && typeof data51 == "object" && !Array.isArray(data51)){
if(data51.command === undefined){
const err116 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/oneOf/0/required",keyword:"required",params:{missingProperty: "command"},message:"must have required property '"+"command"+"'",schema:schema0.properties.mcpServers.additionalProperties.oneOf[0].required,parentSchema:schema0.properties.mcpServers.additionalProperties.oneOf[0],data:data51};
if(vErrors === null){
vErrors = [err116];
}
else {
vErrors.push(err116);
}
errors++;
}
}
var _valid0 = _errs119 === errors;
if(_valid0){
valid34 = true;
passing0 = 0;
}
const _errs120 = errors;
if(data51 && typeof data51 == "object" && !Array.isArray(data51)){
if(data51.url === undefined){
const err117 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/oneOf/1/required",keyword:"required",params:{missingProperty: "url"},message:"must have required property '"+"url"+"'",schema:schema0.properties.mcpServers.additionalProperties.oneOf[1].required,parentSchema:schema0.properties.mcpServers.additionalProperties.oneOf[1],data:data51};
if(vErrors === null){
vErrors = [err117];
}
else {
vErrors.push(err117);
}
errors++;
}
}
var _valid0 = _errs120 === errors;
if(_valid0 && valid34){
valid34 = false;
passing0 = [passing0, 1];
}
else {
if(_valid0){
valid34 = true;
passing0 = 1;
}
}
if(!valid34){
const err118 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/oneOf",keyword:"oneOf",params:{passingSchemas: passing0},message:"must match exactly one schema in oneOf",schema:schema0.properties.mcpServers.additionalProperties.oneOf,parentSchema:schema0.properties.mcpServers.additionalProperties,data:data51};
if(vErrors === null){
vErrors = [err118];
}
else {
vErrors.push(err118);
}
errors++;
}
else {
errors = _errs118;
if(vErrors !== null){
if(_errs118){
vErrors.length = _errs118;
}
else {
vErrors = null;
}
}
}
if(data51 && typeof data51 == "object" && !Array.isArray(data51)){
for(const key11 in data51){
if(!(func0.call(schema0.properties.mcpServers.additionalProperties.properties, key11))){
const err119 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key11},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.mcpServers.additionalProperties,data:data51};
if(vErrors === null){
vErrors = [err119];
}
else {
vErrors.push(err119);
}
errors++;
}
}
if(data51.type !== undefined){
let data52 = data51.type;
if(!((((data52 === "stdio") || (data52 === "http")) || (data52 === "streamable-http")) || (data52 === "sse"))){
const err120 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/type",schemaPath:"#/properties/mcpServers/additionalProperties/properties/type/enum",keyword:"enum",params:{allowedValues: schema0.properties.mcpServers.additionalProperties.properties.type.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.mcpServers.additionalProperties.properties.type.enum,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.type,data:data52};
if(vErrors === null){
vErrors = [err120];
}
else {
vErrors.push(err120);
}
errors++;
}
}
if(data51.command !== undefined){
let data53 = data51.command;
if(typeof data53 === "string"){
if(func1(data53) < 1){
const err121 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/command",schemaPath:"#/properties/mcpServers/additionalProperties/properties/command/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.command,data:data53};
if(vErrors === null){
vErrors = [err121];
}
else {
vErrors.push(err121);
}
errors++;
}
}
else {
const err122 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/command",schemaPath:"#/properties/mcpServers/additionalProperties/properties/command/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.command.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.command,data:data53};
if(vErrors === null){
vErrors = [err122];
}
else {
vErrors.push(err122);
}
errors++;
}
}
if(data51.args !== undefined){
let data54 = data51.args;
if(Array.isArray(data54)){
const len7 = data54.length;
for(let i14=0; i14<len7; i14++){
let data55 = data54[i14];
if(typeof data55 !== "string"){
const err123 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/args/" + i14,schemaPath:"#/properties/mcpServers/additionalProperties/properties/args/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.args.items.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.args.items,data:data55};
if(vErrors === null){
vErrors = [err123];
}
else {
vErrors.push(err123);
}
errors++;
}
}
}
else {
const err124 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/args",schemaPath:"#/properties/mcpServers/additionalProperties/properties/args/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.mcpServers.additionalProperties.properties.args.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.args,data:data54};
if(vErrors === null){
vErrors = [err124];
}
else {
vErrors.push(err124);
}
errors++;
}
}
if(data51.env !== undefined){
let data56 = data51.env;
if(data56 && typeof data56 == "object" && !Array.isArray(data56)){
for(const key12 in data56){
let data57 = data56[key12];
if(typeof data57 !== "string"){
const err125 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/env/" + key12.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/properties/env/additionalProperties/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.env.additionalProperties.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.env.additionalProperties,data:data57};
if(vErrors === null){
vErrors = [err125];
}
else {
vErrors.push(err125);
}
errors++;
}
}
}
else {
const err126 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/env",schemaPath:"#/properties/mcpServers/additionalProperties/properties/env/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.env.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.env,data:data56};
if(vErrors === null){
vErrors = [err126];
}
else {
vErrors.push(err126);
}
errors++;
}
}
if(data51.cwd !== undefined){
let data58 = data51.cwd;
if(typeof data58 !== "string"){
const err127 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/cwd",schemaPath:"#/properties/mcpServers/additionalProperties/properties/cwd/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.cwd.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.cwd,data:data58};
if(vErrors === null){
vErrors = [err127];
}
else {
vErrors.push(err127);
}
errors++;
}
}
if(data51.url !== undefined){
let data59 = data51.url;
if(typeof data59 === "string"){
if(func1(data59) < 1){
const err128 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/url",schemaPath:"#/properties/mcpServers/additionalProperties/properties/url/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.url,data:data59};
if(vErrors === null){
vErrors = [err128];
}
else {
vErrors.push(err128);
}
errors++;
}
}
else {
const err129 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/url",schemaPath:"#/properties/mcpServers/additionalProperties/properties/url/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.url.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.url,data:data59};
if(vErrors === null){
vErrors = [err129];
}
else {
vErrors.push(err129);
}
errors++;
}
}
if(data51.headers !== undefined){
let data60 = data51.headers;
if(data60 && typeof data60 == "object" && !Array.isArray(data60)){
for(const key13 in data60){
let data61 = data60[key13];
if(typeof data61 !== "string"){
const err130 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/headers/" + key13.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/properties/headers/additionalProperties/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.headers.additionalProperties.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.headers.additionalProperties,data:data61};
if(vErrors === null){
vErrors = [err130];
}
else {
vErrors.push(err130);
}
errors++;
}
}
}
else {
const err131 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/headers",schemaPath:"#/properties/mcpServers/additionalProperties/properties/headers/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.headers.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.headers,data:data60};
if(vErrors === null){
vErrors = [err131];
}
else {
vErrors.push(err131);
}
errors++;
}
}
if(data51.oauth !== undefined){
let data62 = data51.oauth;
if(data62 && typeof data62 == "object" && !Array.isArray(data62)){
for(const key14 in data62){
if(!(func0.call(schema0.properties.mcpServers.additionalProperties.properties.oauth.properties, key14))){
const err132 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key14},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth,data:data62};
if(vErrors === null){
vErrors = [err132];
}
else {
vErrors.push(err132);
}
errors++;
}
}
if(data62.grant !== undefined){
let data63 = data62.grant;
if(!(((data63 === "authorization_code") || (data63 === "client_credentials")) || (data63 === "jwt_bearer"))){
const err133 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/grant",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/grant/enum",keyword:"enum",params:{allowedValues: schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.grant.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.grant.enum,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.grant,data:data63};
if(vErrors === null){
vErrors = [err133];
}
else {
vErrors.push(err133);
}
errors++;
}
}
if(data62.clientId !== undefined){
let data64 = data62.clientId;
if(typeof data64 === "string"){
if(func1(data64) < 1){
const err134 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientId",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientId/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientId,data:data64};
if(vErrors === null){
vErrors = [err134];
}
else {
vErrors.push(err134);
}
errors++;
}
}
else {
const err135 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientId",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientId/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientId.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientId,data:data64};
if(vErrors === null){
vErrors = [err135];
}
else {
vErrors.push(err135);
}
errors++;
}
}
if(data62.clientSecret !== undefined){
let data65 = data62.clientSecret;
if(typeof data65 === "string"){
if(func1(data65) < 1){
const err136 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientSecret",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientSecret/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientSecret,data:data65};
if(vErrors === null){
vErrors = [err136];
}
else {
vErrors.push(err136);
}
errors++;
}
}
else {
const err137 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientSecret",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientSecret/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientSecret.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientSecret,data:data65};
if(vErrors === null){
vErrors = [err137];
}
else {
vErrors.push(err137);
}
errors++;
}
}
if(data62.privateKey !== undefined){
let data66 = data62.privateKey;
if(typeof data66 === "string"){
if(func1(data66) < 1){
const err138 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/privateKey",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/privateKey/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.privateKey,data:data66};
if(vErrors === null){
vErrors = [err138];
}
else {
vErrors.push(err138);
}
errors++;
}
}
else {
const err139 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/privateKey",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/privateKey/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.privateKey.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.privateKey,data:data66};
if(vErrors === null){
vErrors = [err139];
}
else {
vErrors.push(err139);
}
errors++;
}
}
if(data62.signingAlgorithm !== undefined){
let data67 = data62.signingAlgorithm;
if(!(((((((((data67 === "ES256") || (data67 === "ES384")) || (data67 === "ES512")) || (data67 === "RS256")) || (data67 === "RS384")) || (data67 === "RS512")) || (data67 === "PS256")) || (data67 === "PS384")) || (data67 === "PS512"))){
const err140 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/signingAlgorithm",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/signingAlgorithm/enum",keyword:"enum",params:{allowedValues: schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.signingAlgorithm.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.signingAlgorithm.enum,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.signingAlgorithm,data:data67};
if(vErrors === null){
vErrors = [err140];
}
else {
vErrors.push(err140);
}
errors++;
}
}
if(data62.scopes !== undefined){
let data68 = data62.scopes;
if(Array.isArray(data68)){
const len8 = data68.length;
for(let i15=0; i15<len8; i15++){
let data69 = data68[i15];
if(typeof data69 === "string"){
if(func1(data69) < 1){
const err141 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/scopes/" + i15,schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/scopes/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.scopes.items,data:data69};
if(vErrors === null){
vErrors = [err141];
}
else {
vErrors.push(err141);
}
errors++;
}
}
else {
const err142 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/scopes/" + i15,schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/scopes/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.scopes.items.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.scopes.items,data:data69};
if(vErrors === null){
vErrors = [err142];
}
else {
vErrors.push(err142);
}
errors++;
}
}
}
else {
const err143 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/scopes",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/scopes/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.scopes.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.scopes,data:data68};
if(vErrors === null){
vErrors = [err143];
}
else {
vErrors.push(err143);
}
errors++;
}
}
if(data62.redirectPort !== undefined){
let data70 = data62.redirectPort;
if(!((typeof data70 == "number") && (!(data70 % 1) && !isNaN(data70)))){
const err144 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/redirectPort",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/redirectPort/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.redirectPort.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.redirectPort,data:data70};
if(vErrors === null){
vErrors = [err144];
}
else {
vErrors.push(err144);
}
errors++;
}
if(typeof data70 == "number"){
if(data70 > 65535 || isNaN(data70)){
const err145 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/redirectPort",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/redirectPort/maximum",keyword:"maximum",params:{comparison: "<=", limit: 65535},message:"must be <= 65535",schema:65535,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.redirectPort,data:data70};
if(vErrors === null){
vErrors = [err145];
}
else {
vErrors.push(err145);
}
errors++;
}
if(data70 < 1 || isNaN(data70)){
const err146 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/redirectPort",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/redirectPort/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.redirectPort,data:data70};
if(vErrors === null){
vErrors = [err146];
}
else {
vErrors.push(err146);
}
errors++;
}
}
}
if(data62.clientName !== undefined){
let data71 = data62.clientName;
if(typeof data71 === "string"){
if(func1(data71) < 1){
const err147 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientName",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientName/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientName,data:data71};
if(vErrors === null){
vErrors = [err147];
}
else {
vErrors.push(err147);
}
errors++;
}
}
else {
const err148 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientName",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientName/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientName.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientName,data:data71};
if(vErrors === null){
vErrors = [err148];
}
else {
vErrors.push(err148);
}
errors++;
}
}
if(data62.clientMetadataUrl !== undefined){
let data72 = data62.clientMetadataUrl;
if(typeof data72 === "string"){
if(func1(data72) < 1){
const err149 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientMetadataUrl",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientMetadataUrl/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientMetadataUrl,data:data72};
if(vErrors === null){
vErrors = [err149];
}
else {
vErrors.push(err149);
}
errors++;
}
}
else {
const err150 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/clientMetadataUrl",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/clientMetadataUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientMetadataUrl.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.clientMetadataUrl,data:data72};
if(vErrors === null){
vErrors = [err150];
}
else {
vErrors.push(err150);
}
errors++;
}
}
if(data62.authorizationServer !== undefined){
let data73 = data62.authorizationServer;
if(typeof data73 === "string"){
if(func1(data73) < 1){
const err151 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/authorizationServer",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/authorizationServer/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.authorizationServer,data:data73};
if(vErrors === null){
vErrors = [err151];
}
else {
vErrors.push(err151);
}
errors++;
}
}
else {
const err152 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/authorizationServer",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/authorizationServer/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.authorizationServer.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.authorizationServer,data:data73};
if(vErrors === null){
vErrors = [err152];
}
else {
vErrors.push(err152);
}
errors++;
}
}
if(data62.identityProvider !== undefined){
let data74 = data62.identityProvider;
if(data74 && typeof data74 == "object" && !Array.isArray(data74)){
if(data74.tokenEndpoint === undefined){
const err153 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/required",keyword:"required",params:{missingProperty: "tokenEndpoint"},message:"must have required property '"+"tokenEndpoint"+"'",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.required,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider,data:data74};
if(vErrors === null){
vErrors = [err153];
}
else {
vErrors.push(err153);
}
errors++;
}
if(data74.clientId === undefined){
const err154 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/required",keyword:"required",params:{missingProperty: "clientId"},message:"must have required property '"+"clientId"+"'",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.required,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider,data:data74};
if(vErrors === null){
vErrors = [err154];
}
else {
vErrors.push(err154);
}
errors++;
}
if(data74.idToken === undefined){
const err155 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/required",keyword:"required",params:{missingProperty: "idToken"},message:"must have required property '"+"idToken"+"'",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.required,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider,data:data74};
if(vErrors === null){
vErrors = [err155];
}
else {
vErrors.push(err155);
}
errors++;
}
for(const key15 in data74){
if(!(((key15 === "tokenEndpoint") || (key15 === "clientId")) || (key15 === "idToken"))){
const err156 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key15},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider,data:data74};
if(vErrors === null){
vErrors = [err156];
}
else {
vErrors.push(err156);
}
errors++;
}
}
if(data74.tokenEndpoint !== undefined){
let data75 = data74.tokenEndpoint;
if(typeof data75 === "string"){
if(func1(data75) < 1){
const err157 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/tokenEndpoint",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/tokenEndpoint/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.tokenEndpoint,data:data75};
if(vErrors === null){
vErrors = [err157];
}
else {
vErrors.push(err157);
}
errors++;
}
}
else {
const err158 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/tokenEndpoint",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/tokenEndpoint/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.tokenEndpoint.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.tokenEndpoint,data:data75};
if(vErrors === null){
vErrors = [err158];
}
else {
vErrors.push(err158);
}
errors++;
}
}
if(data74.clientId !== undefined){
let data76 = data74.clientId;
if(typeof data76 === "string"){
if(func1(data76) < 1){
const err159 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/clientId",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/clientId/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.clientId,data:data76};
if(vErrors === null){
vErrors = [err159];
}
else {
vErrors.push(err159);
}
errors++;
}
}
else {
const err160 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/clientId",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/clientId/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.clientId.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.clientId,data:data76};
if(vErrors === null){
vErrors = [err160];
}
else {
vErrors.push(err160);
}
errors++;
}
}
if(data74.idToken !== undefined){
let data77 = data74.idToken;
if(typeof data77 === "string"){
if(func1(data77) < 1){
const err161 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/idToken",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/idToken/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.idToken,data:data77};
if(vErrors === null){
vErrors = [err161];
}
else {
vErrors.push(err161);
}
errors++;
}
}
else {
const err162 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider/idToken",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/properties/idToken/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.idToken.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.properties.idToken,data:data77};
if(vErrors === null){
vErrors = [err162];
}
else {
vErrors.push(err162);
}
errors++;
}
}
}
else {
const err163 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth/identityProvider",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/properties/identityProvider/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth.properties.identityProvider,data:data74};
if(vErrors === null){
vErrors = [err163];
}
else {
vErrors.push(err163);
}
errors++;
}
}
}
else {
const err164 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/oauth",schemaPath:"#/properties/mcpServers/additionalProperties/properties/oauth/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.oauth.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.oauth,data:data62};
if(vErrors === null){
vErrors = [err164];
}
else {
vErrors.push(err164);
}
errors++;
}
}
if(data51.timeoutMs !== undefined){
let data78 = data51.timeoutMs;
if(!((typeof data78 == "number") && (!(data78 % 1) && !isNaN(data78)))){
const err165 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/timeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/timeoutMs/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.mcpServers.additionalProperties.properties.timeoutMs.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.timeoutMs,data:data78};
if(vErrors === null){
vErrors = [err165];
}
else {
vErrors.push(err165);
}
errors++;
}
if(typeof data78 == "number"){
if(data78 > 3600000 || isNaN(data78)){
const err166 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/timeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/timeoutMs/maximum",keyword:"maximum",params:{comparison: "<=", limit: 3600000},message:"must be <= 3600000",schema:3600000,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.timeoutMs,data:data78};
if(vErrors === null){
vErrors = [err166];
}
else {
vErrors.push(err166);
}
errors++;
}
if(data78 < 1 || isNaN(data78)){
const err167 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/timeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/timeoutMs/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.timeoutMs,data:data78};
if(vErrors === null){
vErrors = [err167];
}
else {
vErrors.push(err167);
}
errors++;
}
}
}
if(data51.maxTotalTimeoutMs !== undefined){
let data79 = data51.maxTotalTimeoutMs;
if(!((typeof data79 == "number") && (!(data79 % 1) && !isNaN(data79)))){
const err168 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/maxTotalTimeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/maxTotalTimeoutMs/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.mcpServers.additionalProperties.properties.maxTotalTimeoutMs.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.maxTotalTimeoutMs,data:data79};
if(vErrors === null){
vErrors = [err168];
}
else {
vErrors.push(err168);
}
errors++;
}
if(typeof data79 == "number"){
if(data79 > 3600000 || isNaN(data79)){
const err169 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/maxTotalTimeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/maxTotalTimeoutMs/maximum",keyword:"maximum",params:{comparison: "<=", limit: 3600000},message:"must be <= 3600000",schema:3600000,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.maxTotalTimeoutMs,data:data79};
if(vErrors === null){
vErrors = [err169];
}
else {
vErrors.push(err169);
}
errors++;
}
if(data79 < 1 || isNaN(data79)){
const err170 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/maxTotalTimeoutMs",schemaPath:"#/properties/mcpServers/additionalProperties/properties/maxTotalTimeoutMs/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.maxTotalTimeoutMs,data:data79};
if(vErrors === null){
vErrors = [err170];
}
else {
vErrors.push(err170);
}
errors++;
}
}
}
if(data51.share !== undefined){
let data80 = data51.share;
if(typeof data80 !== "boolean"){
const err171 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/share",schemaPath:"#/properties/mcpServers/additionalProperties/properties/share/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.mcpServers.additionalProperties.properties.share.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.share,data:data80};
if(vErrors === null){
vErrors = [err171];
}
else {
vErrors.push(err171);
}
errors++;
}
}
if(data51.enabled !== undefined){
let data81 = data51.enabled;
if(typeof data81 !== "boolean"){
const err172 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/enabled",schemaPath:"#/properties/mcpServers/additionalProperties/properties/enabled/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.mcpServers.additionalProperties.properties.enabled.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.enabled,data:data81};
if(vErrors === null){
vErrors = [err172];
}
else {
vErrors.push(err172);
}
errors++;
}
}
if(data51.sampling !== undefined){
let data82 = data51.sampling;
if(typeof data82 !== "boolean"){
const err173 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/sampling",schemaPath:"#/properties/mcpServers/additionalProperties/properties/sampling/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.mcpServers.additionalProperties.properties.sampling.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.sampling,data:data82};
if(vErrors === null){
vErrors = [err173];
}
else {
vErrors.push(err173);
}
errors++;
}
}
if(data51.tools !== undefined){
let data83 = data51.tools;
if(data83 && typeof data83 == "object" && !Array.isArray(data83)){
for(const key16 in data83){
if(!((key16 === "allow") || (key16 === "deny"))){
const err174 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key16},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools,data:data83};
if(vErrors === null){
vErrors = [err174];
}
else {
vErrors.push(err174);
}
errors++;
}
}
if(data83.allow !== undefined){
let data84 = data83.allow;
if(Array.isArray(data84)){
if(data84.length > 256){
const err175 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/allow",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/allow/maxItems",keyword:"maxItems",params:{limit: 256},message:"must NOT have more than 256 items",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow,data:data84};
if(vErrors === null){
vErrors = [err175];
}
else {
vErrors.push(err175);
}
errors++;
}
const len9 = data84.length;
for(let i16=0; i16<len9; i16++){
let data85 = data84[i16];
if(typeof data85 === "string"){
if(func1(data85) > 256){
const err176 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/allow/" + i16,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/allow/items/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow.items,data:data85};
if(vErrors === null){
vErrors = [err176];
}
else {
vErrors.push(err176);
}
errors++;
}
if(func1(data85) < 1){
const err177 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/allow/" + i16,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/allow/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow.items,data:data85};
if(vErrors === null){
vErrors = [err177];
}
else {
vErrors.push(err177);
}
errors++;
}
}
else {
const err178 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/allow/" + i16,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/allow/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow.items.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow.items,data:data85};
if(vErrors === null){
vErrors = [err178];
}
else {
vErrors.push(err178);
}
errors++;
}
}
}
else {
const err179 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/allow",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/allow/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.allow,data:data84};
if(vErrors === null){
vErrors = [err179];
}
else {
vErrors.push(err179);
}
errors++;
}
}
if(data83.deny !== undefined){
let data86 = data83.deny;
if(Array.isArray(data86)){
if(data86.length > 256){
const err180 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/deny",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/deny/maxItems",keyword:"maxItems",params:{limit: 256},message:"must NOT have more than 256 items",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny,data:data86};
if(vErrors === null){
vErrors = [err180];
}
else {
vErrors.push(err180);
}
errors++;
}
const len10 = data86.length;
for(let i17=0; i17<len10; i17++){
let data87 = data86[i17];
if(typeof data87 === "string"){
if(func1(data87) > 256){
const err181 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/deny/" + i17,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/deny/items/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny.items,data:data87};
if(vErrors === null){
vErrors = [err181];
}
else {
vErrors.push(err181);
}
errors++;
}
if(func1(data87) < 1){
const err182 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/deny/" + i17,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/deny/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny.items,data:data87};
if(vErrors === null){
vErrors = [err182];
}
else {
vErrors.push(err182);
}
errors++;
}
}
else {
const err183 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/deny/" + i17,schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/deny/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny.items.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny.items,data:data87};
if(vErrors === null){
vErrors = [err183];
}
else {
vErrors.push(err183);
}
errors++;
}
}
}
else {
const err184 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools/deny",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/properties/deny/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools.properties.deny,data:data86};
if(vErrors === null){
vErrors = [err184];
}
else {
vErrors.push(err184);
}
errors++;
}
}
}
else {
const err185 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/tools",schemaPath:"#/properties/mcpServers/additionalProperties/properties/tools/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.tools.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.tools,data:data83};
if(vErrors === null){
vErrors = [err185];
}
else {
vErrors.push(err185);
}
errors++;
}
}
if(data51.approval !== undefined){
let data88 = data51.approval;
if(data88 && typeof data88 == "object" && !Array.isArray(data88)){
if(Object.keys(data88).length > 256){
const err186 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval",schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/maxProperties",keyword:"maxProperties",params:{limit: 256},message:"must NOT have more than 256 properties",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval,data:data88};
if(vErrors === null){
vErrors = [err186];
}
else {
vErrors.push(err186);
}
errors++;
}
for(const key17 in data88){
const _errs198 = errors;
if(typeof key17 === "string"){
if(func1(key17) > 256){
const err187 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval",schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/propertyNames/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters",schema:256,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval.propertyNames,data:key17,propertyName:key17};
if(vErrors === null){
vErrors = [err187];
}
else {
vErrors.push(err187);
}
errors++;
}
if(func1(key17) < 1){
const err188 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval",schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/propertyNames/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval.propertyNames,data:key17,propertyName:key17};
if(vErrors === null){
vErrors = [err188];
}
else {
vErrors.push(err188);
}
errors++;
}
}
var valid49 = _errs198 === errors;
if(!valid49){
const err189 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval",schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/propertyNames",keyword:"propertyNames",params:{propertyName: key17},message:"property name must be valid",schema:schema0.properties.mcpServers.additionalProperties.properties.approval.propertyNames,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval,data:data88};
if(vErrors === null){
vErrors = [err189];
}
else {
vErrors.push(err189);
}
errors++;
}
}
for(const key18 in data88){
let data89 = data88[key18];
if(!((data89 === "ask") || (data89 === "never"))){
const err190 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval/" + key18.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/additionalProperties/enum",keyword:"enum",params:{allowedValues: schema0.properties.mcpServers.additionalProperties.properties.approval.additionalProperties.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.mcpServers.additionalProperties.properties.approval.additionalProperties.enum,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval.additionalProperties,data:data89};
if(vErrors === null){
vErrors = [err190];
}
else {
vErrors.push(err190);
}
errors++;
}
}
}
else {
const err191 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/approval",schemaPath:"#/properties/mcpServers/additionalProperties/properties/approval/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.properties.approval.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.approval,data:data88};
if(vErrors === null){
vErrors = [err191];
}
else {
vErrors.push(err191);
}
errors++;
}
}
if(data51.sandbox !== undefined){
let data90 = data51.sandbox;
if(typeof data90 !== "boolean"){
const err192 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1")+"/sandbox",schemaPath:"#/properties/mcpServers/additionalProperties/properties/sandbox/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.mcpServers.additionalProperties.properties.sandbox.type,parentSchema:schema0.properties.mcpServers.additionalProperties.properties.sandbox,data:data90};
if(vErrors === null){
vErrors = [err192];
}
else {
vErrors.push(err192);
}
errors++;
}
}
}
else {
const err193 = {instancePath:instancePath+"/mcpServers/" + key10.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/mcpServers/additionalProperties/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.additionalProperties.type,parentSchema:schema0.properties.mcpServers.additionalProperties,data:data51};
if(vErrors === null){
vErrors = [err193];
}
else {
vErrors.push(err193);
}
errors++;
}
}
}
else {
const err194 = {instancePath:instancePath+"/mcpServers",schemaPath:"#/properties/mcpServers/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.mcpServers.type,parentSchema:schema0.properties.mcpServers,data:data50};
if(vErrors === null){
vErrors = [err194];
}
else {
vErrors.push(err194);
}
errors++;
}
}
if(data.approval !== undefined){
let data91 = data.approval;
if(!(((data91 === "never") || (data91 === "on-risk")) || (data91 === "always"))){
const err195 = {instancePath:instancePath+"/approval",schemaPath:"#/properties/approval/enum",keyword:"enum",params:{allowedValues: schema0.properties.approval.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.approval.enum,parentSchema:schema0.properties.approval,data:data91};
if(vErrors === null){
vErrors = [err195];
}
else {
vErrors.push(err195);
}
errors++;
}
}
if(data.shell !== undefined){
let data92 = data.shell;
if(data92 && typeof data92 == "object" && !Array.isArray(data92)){
for(const key19 in data92){
if(!((((((key19 === "deny") || (key19 === "ask")) || (key19 === "allow")) || (key19 === "sandbox")) || (key19 === "network")) || (key19 === "bwrap"))){
const err196 = {instancePath:instancePath+"/shell",schemaPath:"#/properties/shell/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key19},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.shell,data:data92};
if(vErrors === null){
vErrors = [err196];
}
else {
vErrors.push(err196);
}
errors++;
}
}
if(data92.deny !== undefined){
let data93 = data92.deny;
if(Array.isArray(data93)){
const len11 = data93.length;
for(let i18=0; i18<len11; i18++){
let data94 = data93[i18];
if(data94 && typeof data94 == "object" && !Array.isArray(data94)){
if(data94.prefix === undefined){
const err197 = {instancePath:instancePath+"/shell/deny/" + i18,schemaPath:"#/properties/shell/properties/deny/items/required",keyword:"required",params:{missingProperty: "prefix"},message:"must have required property '"+"prefix"+"'",schema:schema0.properties.shell.properties.deny.items.required,parentSchema:schema0.properties.shell.properties.deny.items,data:data94};
if(vErrors === null){
vErrors = [err197];
}
else {
vErrors.push(err197);
}
errors++;
}
for(const key20 in data94){
if(!((((key20 === "prefix") || (key20 === "reason")) || (key20 === "mustMatch")) || (key20 === "mustNotMatch"))){
const err198 = {instancePath:instancePath+"/shell/deny/" + i18,schemaPath:"#/properties/shell/properties/deny/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key20},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.shell.properties.deny.items,data:data94};
if(vErrors === null){
vErrors = [err198];
}
else {
vErrors.push(err198);
}
errors++;
}
}
if(data94.prefix !== undefined){
let data95 = data94.prefix;
if(Array.isArray(data95)){
if(data95.length < 1){
const err199 = {instancePath:instancePath+"/shell/deny/" + i18+"/prefix",schemaPath:"#/properties/shell/properties/deny/items/properties/prefix/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema0.properties.shell.properties.deny.items.properties.prefix,data:data95};
if(vErrors === null){
vErrors = [err199];
}
else {
vErrors.push(err199);
}
errors++;
}
const len12 = data95.length;
for(let i19=0; i19<len12; i19++){
let data96 = data95[i19];
if(typeof data96 === "string"){
if(func1(data96) < 1){
const err200 = {instancePath:instancePath+"/shell/deny/" + i18+"/prefix/" + i19,schemaPath:"#/properties/shell/properties/deny/items/properties/prefix/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.shell.properties.deny.items.properties.prefix.items,data:data96};
if(vErrors === null){
vErrors = [err200];
}
else {
vErrors.push(err200);
}
errors++;
}
}
else {
const err201 = {instancePath:instancePath+"/shell/deny/" + i18+"/prefix/" + i19,schemaPath:"#/properties/shell/properties/deny/items/properties/prefix/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.deny.items.properties.prefix.items.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.prefix.items,data:data96};
if(vErrors === null){
vErrors = [err201];
}
else {
vErrors.push(err201);
}
errors++;
}
}
}
else {
const err202 = {instancePath:instancePath+"/shell/deny/" + i18+"/prefix",schemaPath:"#/properties/shell/properties/deny/items/properties/prefix/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.deny.items.properties.prefix.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.prefix,data:data95};
if(vErrors === null){
vErrors = [err202];
}
else {
vErrors.push(err202);
}
errors++;
}
}
if(data94.reason !== undefined){
let data97 = data94.reason;
if(typeof data97 !== "string"){
const err203 = {instancePath:instancePath+"/shell/deny/" + i18+"/reason",schemaPath:"#/properties/shell/properties/deny/items/properties/reason/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.deny.items.properties.reason.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.reason,data:data97};
if(vErrors === null){
vErrors = [err203];
}
else {
vErrors.push(err203);
}
errors++;
}
}
if(data94.mustMatch !== undefined){
let data98 = data94.mustMatch;
if(Array.isArray(data98)){
const len13 = data98.length;
for(let i20=0; i20<len13; i20++){
let data99 = data98[i20];
if(typeof data99 !== "string"){
const err204 = {instancePath:instancePath+"/shell/deny/" + i18+"/mustMatch/" + i20,schemaPath:"#/properties/shell/properties/deny/items/properties/mustMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.deny.items.properties.mustMatch.items.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.mustMatch.items,data:data99};
if(vErrors === null){
vErrors = [err204];
}
else {
vErrors.push(err204);
}
errors++;
}
}
}
else {
const err205 = {instancePath:instancePath+"/shell/deny/" + i18+"/mustMatch",schemaPath:"#/properties/shell/properties/deny/items/properties/mustMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.deny.items.properties.mustMatch.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.mustMatch,data:data98};
if(vErrors === null){
vErrors = [err205];
}
else {
vErrors.push(err205);
}
errors++;
}
}
if(data94.mustNotMatch !== undefined){
let data100 = data94.mustNotMatch;
if(Array.isArray(data100)){
const len14 = data100.length;
for(let i21=0; i21<len14; i21++){
let data101 = data100[i21];
if(typeof data101 !== "string"){
const err206 = {instancePath:instancePath+"/shell/deny/" + i18+"/mustNotMatch/" + i21,schemaPath:"#/properties/shell/properties/deny/items/properties/mustNotMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.deny.items.properties.mustNotMatch.items.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.mustNotMatch.items,data:data101};
if(vErrors === null){
vErrors = [err206];
}
else {
vErrors.push(err206);
}
errors++;
}
}
}
else {
const err207 = {instancePath:instancePath+"/shell/deny/" + i18+"/mustNotMatch",schemaPath:"#/properties/shell/properties/deny/items/properties/mustNotMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.deny.items.properties.mustNotMatch.type,parentSchema:schema0.properties.shell.properties.deny.items.properties.mustNotMatch,data:data100};
if(vErrors === null){
vErrors = [err207];
}
else {
vErrors.push(err207);
}
errors++;
}
}
}
else {
const err208 = {instancePath:instancePath+"/shell/deny/" + i18,schemaPath:"#/properties/shell/properties/deny/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.shell.properties.deny.items.type,parentSchema:schema0.properties.shell.properties.deny.items,data:data94};
if(vErrors === null){
vErrors = [err208];
}
else {
vErrors.push(err208);
}
errors++;
}
}
}
else {
const err209 = {instancePath:instancePath+"/shell/deny",schemaPath:"#/properties/shell/properties/deny/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.deny.type,parentSchema:schema0.properties.shell.properties.deny,data:data93};
if(vErrors === null){
vErrors = [err209];
}
else {
vErrors.push(err209);
}
errors++;
}
}
if(data92.ask !== undefined){
let data102 = data92.ask;
if(Array.isArray(data102)){
const len15 = data102.length;
for(let i22=0; i22<len15; i22++){
let data103 = data102[i22];
if(data103 && typeof data103 == "object" && !Array.isArray(data103)){
if(data103.prefix === undefined){
const err210 = {instancePath:instancePath+"/shell/ask/" + i22,schemaPath:"#/properties/shell/properties/ask/items/required",keyword:"required",params:{missingProperty: "prefix"},message:"must have required property '"+"prefix"+"'",schema:schema0.properties.shell.properties.ask.items.required,parentSchema:schema0.properties.shell.properties.ask.items,data:data103};
if(vErrors === null){
vErrors = [err210];
}
else {
vErrors.push(err210);
}
errors++;
}
for(const key21 in data103){
if(!((((key21 === "prefix") || (key21 === "reason")) || (key21 === "mustMatch")) || (key21 === "mustNotMatch"))){
const err211 = {instancePath:instancePath+"/shell/ask/" + i22,schemaPath:"#/properties/shell/properties/ask/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key21},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.shell.properties.ask.items,data:data103};
if(vErrors === null){
vErrors = [err211];
}
else {
vErrors.push(err211);
}
errors++;
}
}
if(data103.prefix !== undefined){
let data104 = data103.prefix;
if(Array.isArray(data104)){
if(data104.length < 1){
const err212 = {instancePath:instancePath+"/shell/ask/" + i22+"/prefix",schemaPath:"#/properties/shell/properties/ask/items/properties/prefix/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema0.properties.shell.properties.ask.items.properties.prefix,data:data104};
if(vErrors === null){
vErrors = [err212];
}
else {
vErrors.push(err212);
}
errors++;
}
const len16 = data104.length;
for(let i23=0; i23<len16; i23++){
let data105 = data104[i23];
if(typeof data105 === "string"){
if(func1(data105) < 1){
const err213 = {instancePath:instancePath+"/shell/ask/" + i22+"/prefix/" + i23,schemaPath:"#/properties/shell/properties/ask/items/properties/prefix/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.shell.properties.ask.items.properties.prefix.items,data:data105};
if(vErrors === null){
vErrors = [err213];
}
else {
vErrors.push(err213);
}
errors++;
}
}
else {
const err214 = {instancePath:instancePath+"/shell/ask/" + i22+"/prefix/" + i23,schemaPath:"#/properties/shell/properties/ask/items/properties/prefix/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.ask.items.properties.prefix.items.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.prefix.items,data:data105};
if(vErrors === null){
vErrors = [err214];
}
else {
vErrors.push(err214);
}
errors++;
}
}
}
else {
const err215 = {instancePath:instancePath+"/shell/ask/" + i22+"/prefix",schemaPath:"#/properties/shell/properties/ask/items/properties/prefix/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.ask.items.properties.prefix.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.prefix,data:data104};
if(vErrors === null){
vErrors = [err215];
}
else {
vErrors.push(err215);
}
errors++;
}
}
if(data103.reason !== undefined){
let data106 = data103.reason;
if(typeof data106 !== "string"){
const err216 = {instancePath:instancePath+"/shell/ask/" + i22+"/reason",schemaPath:"#/properties/shell/properties/ask/items/properties/reason/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.ask.items.properties.reason.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.reason,data:data106};
if(vErrors === null){
vErrors = [err216];
}
else {
vErrors.push(err216);
}
errors++;
}
}
if(data103.mustMatch !== undefined){
let data107 = data103.mustMatch;
if(Array.isArray(data107)){
const len17 = data107.length;
for(let i24=0; i24<len17; i24++){
let data108 = data107[i24];
if(typeof data108 !== "string"){
const err217 = {instancePath:instancePath+"/shell/ask/" + i22+"/mustMatch/" + i24,schemaPath:"#/properties/shell/properties/ask/items/properties/mustMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.ask.items.properties.mustMatch.items.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.mustMatch.items,data:data108};
if(vErrors === null){
vErrors = [err217];
}
else {
vErrors.push(err217);
}
errors++;
}
}
}
else {
const err218 = {instancePath:instancePath+"/shell/ask/" + i22+"/mustMatch",schemaPath:"#/properties/shell/properties/ask/items/properties/mustMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.ask.items.properties.mustMatch.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.mustMatch,data:data107};
if(vErrors === null){
vErrors = [err218];
}
else {
vErrors.push(err218);
}
errors++;
}
}
if(data103.mustNotMatch !== undefined){
let data109 = data103.mustNotMatch;
if(Array.isArray(data109)){
const len18 = data109.length;
for(let i25=0; i25<len18; i25++){
let data110 = data109[i25];
if(typeof data110 !== "string"){
const err219 = {instancePath:instancePath+"/shell/ask/" + i22+"/mustNotMatch/" + i25,schemaPath:"#/properties/shell/properties/ask/items/properties/mustNotMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.ask.items.properties.mustNotMatch.items.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.mustNotMatch.items,data:data110};
if(vErrors === null){
vErrors = [err219];
}
else {
vErrors.push(err219);
}
errors++;
}
}
}
else {
const err220 = {instancePath:instancePath+"/shell/ask/" + i22+"/mustNotMatch",schemaPath:"#/properties/shell/properties/ask/items/properties/mustNotMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.ask.items.properties.mustNotMatch.type,parentSchema:schema0.properties.shell.properties.ask.items.properties.mustNotMatch,data:data109};
if(vErrors === null){
vErrors = [err220];
}
else {
vErrors.push(err220);
}
errors++;
}
}
}
else {
const err221 = {instancePath:instancePath+"/shell/ask/" + i22,schemaPath:"#/properties/shell/properties/ask/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.shell.properties.ask.items.type,parentSchema:schema0.properties.shell.properties.ask.items,data:data103};
if(vErrors === null){
vErrors = [err221];
}
else {
vErrors.push(err221);
}
errors++;
}
}
}
else {
const err222 = {instancePath:instancePath+"/shell/ask",schemaPath:"#/properties/shell/properties/ask/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.ask.type,parentSchema:schema0.properties.shell.properties.ask,data:data102};
if(vErrors === null){
vErrors = [err222];
}
else {
vErrors.push(err222);
}
errors++;
}
}
if(data92.allow !== undefined){
let data111 = data92.allow;
if(Array.isArray(data111)){
const len19 = data111.length;
for(let i26=0; i26<len19; i26++){
let data112 = data111[i26];
if(data112 && typeof data112 == "object" && !Array.isArray(data112)){
if(data112.prefix === undefined){
const err223 = {instancePath:instancePath+"/shell/allow/" + i26,schemaPath:"#/properties/shell/properties/allow/items/required",keyword:"required",params:{missingProperty: "prefix"},message:"must have required property '"+"prefix"+"'",schema:schema0.properties.shell.properties.allow.items.required,parentSchema:schema0.properties.shell.properties.allow.items,data:data112};
if(vErrors === null){
vErrors = [err223];
}
else {
vErrors.push(err223);
}
errors++;
}
for(const key22 in data112){
if(!((((key22 === "prefix") || (key22 === "reason")) || (key22 === "mustMatch")) || (key22 === "mustNotMatch"))){
const err224 = {instancePath:instancePath+"/shell/allow/" + i26,schemaPath:"#/properties/shell/properties/allow/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key22},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.shell.properties.allow.items,data:data112};
if(vErrors === null){
vErrors = [err224];
}
else {
vErrors.push(err224);
}
errors++;
}
}
if(data112.prefix !== undefined){
let data113 = data112.prefix;
if(Array.isArray(data113)){
if(data113.length < 1){
const err225 = {instancePath:instancePath+"/shell/allow/" + i26+"/prefix",schemaPath:"#/properties/shell/properties/allow/items/properties/prefix/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema0.properties.shell.properties.allow.items.properties.prefix,data:data113};
if(vErrors === null){
vErrors = [err225];
}
else {
vErrors.push(err225);
}
errors++;
}
const len20 = data113.length;
for(let i27=0; i27<len20; i27++){
let data114 = data113[i27];
if(typeof data114 === "string"){
if(func1(data114) < 1){
const err226 = {instancePath:instancePath+"/shell/allow/" + i26+"/prefix/" + i27,schemaPath:"#/properties/shell/properties/allow/items/properties/prefix/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.shell.properties.allow.items.properties.prefix.items,data:data114};
if(vErrors === null){
vErrors = [err226];
}
else {
vErrors.push(err226);
}
errors++;
}
}
else {
const err227 = {instancePath:instancePath+"/shell/allow/" + i26+"/prefix/" + i27,schemaPath:"#/properties/shell/properties/allow/items/properties/prefix/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.allow.items.properties.prefix.items.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.prefix.items,data:data114};
if(vErrors === null){
vErrors = [err227];
}
else {
vErrors.push(err227);
}
errors++;
}
}
}
else {
const err228 = {instancePath:instancePath+"/shell/allow/" + i26+"/prefix",schemaPath:"#/properties/shell/properties/allow/items/properties/prefix/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.allow.items.properties.prefix.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.prefix,data:data113};
if(vErrors === null){
vErrors = [err228];
}
else {
vErrors.push(err228);
}
errors++;
}
}
if(data112.reason !== undefined){
let data115 = data112.reason;
if(typeof data115 !== "string"){
const err229 = {instancePath:instancePath+"/shell/allow/" + i26+"/reason",schemaPath:"#/properties/shell/properties/allow/items/properties/reason/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.allow.items.properties.reason.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.reason,data:data115};
if(vErrors === null){
vErrors = [err229];
}
else {
vErrors.push(err229);
}
errors++;
}
}
if(data112.mustMatch !== undefined){
let data116 = data112.mustMatch;
if(Array.isArray(data116)){
const len21 = data116.length;
for(let i28=0; i28<len21; i28++){
let data117 = data116[i28];
if(typeof data117 !== "string"){
const err230 = {instancePath:instancePath+"/shell/allow/" + i26+"/mustMatch/" + i28,schemaPath:"#/properties/shell/properties/allow/items/properties/mustMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.allow.items.properties.mustMatch.items.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.mustMatch.items,data:data117};
if(vErrors === null){
vErrors = [err230];
}
else {
vErrors.push(err230);
}
errors++;
}
}
}
else {
const err231 = {instancePath:instancePath+"/shell/allow/" + i26+"/mustMatch",schemaPath:"#/properties/shell/properties/allow/items/properties/mustMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.allow.items.properties.mustMatch.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.mustMatch,data:data116};
if(vErrors === null){
vErrors = [err231];
}
else {
vErrors.push(err231);
}
errors++;
}
}
if(data112.mustNotMatch !== undefined){
let data118 = data112.mustNotMatch;
if(Array.isArray(data118)){
const len22 = data118.length;
for(let i29=0; i29<len22; i29++){
let data119 = data118[i29];
if(typeof data119 !== "string"){
const err232 = {instancePath:instancePath+"/shell/allow/" + i26+"/mustNotMatch/" + i29,schemaPath:"#/properties/shell/properties/allow/items/properties/mustNotMatch/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.allow.items.properties.mustNotMatch.items.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.mustNotMatch.items,data:data119};
if(vErrors === null){
vErrors = [err232];
}
else {
vErrors.push(err232);
}
errors++;
}
}
}
else {
const err233 = {instancePath:instancePath+"/shell/allow/" + i26+"/mustNotMatch",schemaPath:"#/properties/shell/properties/allow/items/properties/mustNotMatch/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.allow.items.properties.mustNotMatch.type,parentSchema:schema0.properties.shell.properties.allow.items.properties.mustNotMatch,data:data118};
if(vErrors === null){
vErrors = [err233];
}
else {
vErrors.push(err233);
}
errors++;
}
}
}
else {
const err234 = {instancePath:instancePath+"/shell/allow/" + i26,schemaPath:"#/properties/shell/properties/allow/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.shell.properties.allow.items.type,parentSchema:schema0.properties.shell.properties.allow.items,data:data112};
if(vErrors === null){
vErrors = [err234];
}
else {
vErrors.push(err234);
}
errors++;
}
}
}
else {
const err235 = {instancePath:instancePath+"/shell/allow",schemaPath:"#/properties/shell/properties/allow/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.shell.properties.allow.type,parentSchema:schema0.properties.shell.properties.allow,data:data111};
if(vErrors === null){
vErrors = [err235];
}
else {
vErrors.push(err235);
}
errors++;
}
}
if(data92.sandbox !== undefined){
let data120 = data92.sandbox;
if(!((data120 === "on") || (data120 === "off"))){
const err236 = {instancePath:instancePath+"/shell/sandbox",schemaPath:"#/properties/shell/properties/sandbox/enum",keyword:"enum",params:{allowedValues: schema0.properties.shell.properties.sandbox.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.shell.properties.sandbox.enum,parentSchema:schema0.properties.shell.properties.sandbox,data:data120};
if(vErrors === null){
vErrors = [err236];
}
else {
vErrors.push(err236);
}
errors++;
}
}
if(data92.network !== undefined){
let data121 = data92.network;
if(!(((data121 === "none") || (data121 === "guarded")) || (data121 === "full"))){
const err237 = {instancePath:instancePath+"/shell/network",schemaPath:"#/properties/shell/properties/network/enum",keyword:"enum",params:{allowedValues: schema0.properties.shell.properties.network.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.shell.properties.network.enum,parentSchema:schema0.properties.shell.properties.network,data:data121};
if(vErrors === null){
vErrors = [err237];
}
else {
vErrors.push(err237);
}
errors++;
}
}
if(data92.bwrap !== undefined){
let data122 = data92.bwrap;
if(typeof data122 === "string"){
if(!pattern15.test(data122)){
const err238 = {instancePath:instancePath+"/shell/bwrap",schemaPath:"#/properties/shell/properties/bwrap/pattern",keyword:"pattern",params:{pattern: "^/"},message:"must match pattern \""+"^/"+"\"",schema:"^/",parentSchema:schema0.properties.shell.properties.bwrap,data:data122};
if(vErrors === null){
vErrors = [err238];
}
else {
vErrors.push(err238);
}
errors++;
}
}
else {
const err239 = {instancePath:instancePath+"/shell/bwrap",schemaPath:"#/properties/shell/properties/bwrap/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.shell.properties.bwrap.type,parentSchema:schema0.properties.shell.properties.bwrap,data:data122};
if(vErrors === null){
vErrors = [err239];
}
else {
vErrors.push(err239);
}
errors++;
}
}
}
else {
const err240 = {instancePath:instancePath+"/shell",schemaPath:"#/properties/shell/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.shell.type,parentSchema:schema0.properties.shell,data:data92};
if(vErrors === null){
vErrors = [err240];
}
else {
vErrors.push(err240);
}
errors++;
}
}
if(data.hook !== undefined){
let data123 = data.hook;
if(data123 && typeof data123 == "object" && !Array.isArray(data123)){
for(const key23 in data123){
if(!(key23 === "sandbox")){
const err241 = {instancePath:instancePath+"/hook",schemaPath:"#/properties/hook/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key23},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.hook,data:data123};
if(vErrors === null){
vErrors = [err241];
}
else {
vErrors.push(err241);
}
errors++;
}
}
if(data123.sandbox !== undefined){
let data124 = data123.sandbox;
if(typeof data124 !== "boolean"){
const err242 = {instancePath:instancePath+"/hook/sandbox",schemaPath:"#/properties/hook/properties/sandbox/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.hook.properties.sandbox.type,parentSchema:schema0.properties.hook.properties.sandbox,data:data124};
if(vErrors === null){
vErrors = [err242];
}
else {
vErrors.push(err242);
}
errors++;
}
}
}
else {
const err243 = {instancePath:instancePath+"/hook",schemaPath:"#/properties/hook/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.hook.type,parentSchema:schema0.properties.hook,data:data123};
if(vErrors === null){
vErrors = [err243];
}
else {
vErrors.push(err243);
}
errors++;
}
}
if(data.web !== undefined){
let data125 = data.web;
if(data125 && typeof data125 == "object" && !Array.isArray(data125)){
for(const key24 in data125){
if(!(key24 === "allowHosts")){
const err244 = {instancePath:instancePath+"/web",schemaPath:"#/properties/web/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key24},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.web,data:data125};
if(vErrors === null){
vErrors = [err244];
}
else {
vErrors.push(err244);
}
errors++;
}
}
if(data125.allowHosts !== undefined){
let data126 = data125.allowHosts;
if(Array.isArray(data126)){
const len23 = data126.length;
for(let i30=0; i30<len23; i30++){
let data127 = data126[i30];
if(typeof data127 === "string"){
if(func1(data127) < 1){
const err245 = {instancePath:instancePath+"/web/allowHosts/" + i30,schemaPath:"#/properties/web/properties/allowHosts/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.web.properties.allowHosts.items,data:data127};
if(vErrors === null){
vErrors = [err245];
}
else {
vErrors.push(err245);
}
errors++;
}
}
else {
const err246 = {instancePath:instancePath+"/web/allowHosts/" + i30,schemaPath:"#/properties/web/properties/allowHosts/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.web.properties.allowHosts.items.type,parentSchema:schema0.properties.web.properties.allowHosts.items,data:data127};
if(vErrors === null){
vErrors = [err246];
}
else {
vErrors.push(err246);
}
errors++;
}
}
}
else {
const err247 = {instancePath:instancePath+"/web/allowHosts",schemaPath:"#/properties/web/properties/allowHosts/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.web.properties.allowHosts.type,parentSchema:schema0.properties.web.properties.allowHosts,data:data126};
if(vErrors === null){
vErrors = [err247];
}
else {
vErrors.push(err247);
}
errors++;
}
}
}
else {
const err248 = {instancePath:instancePath+"/web",schemaPath:"#/properties/web/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.web.type,parentSchema:schema0.properties.web,data:data125};
if(vErrors === null){
vErrors = [err248];
}
else {
vErrors.push(err248);
}
errors++;
}
}
if(data.limits !== undefined){
let data128 = data.limits;
if(data128 && typeof data128 == "object" && !Array.isArray(data128)){
for(const key25 in data128){
if(!(((((((key25 === "timeoutMs") || (key25 === "outputBytes")) || (key25 === "readBytes")) || (key25 === "fetchBytes")) || (key25 === "maxSteps")) || (key25 === "maxToolCalls")) || (key25 === "workers"))){
const err249 = {instancePath:instancePath+"/limits",schemaPath:"#/properties/limits/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key25},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.limits,data:data128};
if(vErrors === null){
vErrors = [err249];
}
else {
vErrors.push(err249);
}
errors++;
}
}
if(data128.timeoutMs !== undefined){
let data129 = data128.timeoutMs;
if(!((typeof data129 == "number") && (!(data129 % 1) && !isNaN(data129)))){
const err250 = {instancePath:instancePath+"/limits/timeoutMs",schemaPath:"#/properties/limits/properties/timeoutMs/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.timeoutMs.type,parentSchema:schema0.properties.limits.properties.timeoutMs,data:data129};
if(vErrors === null){
vErrors = [err250];
}
else {
vErrors.push(err250);
}
errors++;
}
if(typeof data129 == "number"){
if(data129 > 3600000 || isNaN(data129)){
const err251 = {instancePath:instancePath+"/limits/timeoutMs",schemaPath:"#/properties/limits/properties/timeoutMs/maximum",keyword:"maximum",params:{comparison: "<=", limit: 3600000},message:"must be <= 3600000",schema:3600000,parentSchema:schema0.properties.limits.properties.timeoutMs,data:data129};
if(vErrors === null){
vErrors = [err251];
}
else {
vErrors.push(err251);
}
errors++;
}
if(data129 < 100 || isNaN(data129)){
const err252 = {instancePath:instancePath+"/limits/timeoutMs",schemaPath:"#/properties/limits/properties/timeoutMs/minimum",keyword:"minimum",params:{comparison: ">=", limit: 100},message:"must be >= 100",schema:100,parentSchema:schema0.properties.limits.properties.timeoutMs,data:data129};
if(vErrors === null){
vErrors = [err252];
}
else {
vErrors.push(err252);
}
errors++;
}
}
}
if(data128.outputBytes !== undefined){
let data130 = data128.outputBytes;
if(!((typeof data130 == "number") && (!(data130 % 1) && !isNaN(data130)))){
const err253 = {instancePath:instancePath+"/limits/outputBytes",schemaPath:"#/properties/limits/properties/outputBytes/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.outputBytes.type,parentSchema:schema0.properties.limits.properties.outputBytes,data:data130};
if(vErrors === null){
vErrors = [err253];
}
else {
vErrors.push(err253);
}
errors++;
}
if(typeof data130 == "number"){
if(data130 > 67108864 || isNaN(data130)){
const err254 = {instancePath:instancePath+"/limits/outputBytes",schemaPath:"#/properties/limits/properties/outputBytes/maximum",keyword:"maximum",params:{comparison: "<=", limit: 67108864},message:"must be <= 67108864",schema:67108864,parentSchema:schema0.properties.limits.properties.outputBytes,data:data130};
if(vErrors === null){
vErrors = [err254];
}
else {
vErrors.push(err254);
}
errors++;
}
if(data130 < 1024 || isNaN(data130)){
const err255 = {instancePath:instancePath+"/limits/outputBytes",schemaPath:"#/properties/limits/properties/outputBytes/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1024},message:"must be >= 1024",schema:1024,parentSchema:schema0.properties.limits.properties.outputBytes,data:data130};
if(vErrors === null){
vErrors = [err255];
}
else {
vErrors.push(err255);
}
errors++;
}
}
}
if(data128.readBytes !== undefined){
let data131 = data128.readBytes;
if(!((typeof data131 == "number") && (!(data131 % 1) && !isNaN(data131)))){
const err256 = {instancePath:instancePath+"/limits/readBytes",schemaPath:"#/properties/limits/properties/readBytes/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.readBytes.type,parentSchema:schema0.properties.limits.properties.readBytes,data:data131};
if(vErrors === null){
vErrors = [err256];
}
else {
vErrors.push(err256);
}
errors++;
}
if(typeof data131 == "number"){
if(data131 > 67108864 || isNaN(data131)){
const err257 = {instancePath:instancePath+"/limits/readBytes",schemaPath:"#/properties/limits/properties/readBytes/maximum",keyword:"maximum",params:{comparison: "<=", limit: 67108864},message:"must be <= 67108864",schema:67108864,parentSchema:schema0.properties.limits.properties.readBytes,data:data131};
if(vErrors === null){
vErrors = [err257];
}
else {
vErrors.push(err257);
}
errors++;
}
if(data131 < 1024 || isNaN(data131)){
const err258 = {instancePath:instancePath+"/limits/readBytes",schemaPath:"#/properties/limits/properties/readBytes/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1024},message:"must be >= 1024",schema:1024,parentSchema:schema0.properties.limits.properties.readBytes,data:data131};
if(vErrors === null){
vErrors = [err258];
}
else {
vErrors.push(err258);
}
errors++;
}
}
}
if(data128.fetchBytes !== undefined){
let data132 = data128.fetchBytes;
if(!((typeof data132 == "number") && (!(data132 % 1) && !isNaN(data132)))){
const err259 = {instancePath:instancePath+"/limits/fetchBytes",schemaPath:"#/properties/limits/properties/fetchBytes/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.fetchBytes.type,parentSchema:schema0.properties.limits.properties.fetchBytes,data:data132};
if(vErrors === null){
vErrors = [err259];
}
else {
vErrors.push(err259);
}
errors++;
}
if(typeof data132 == "number"){
if(data132 > 268435456 || isNaN(data132)){
const err260 = {instancePath:instancePath+"/limits/fetchBytes",schemaPath:"#/properties/limits/properties/fetchBytes/maximum",keyword:"maximum",params:{comparison: "<=", limit: 268435456},message:"must be <= 268435456",schema:268435456,parentSchema:schema0.properties.limits.properties.fetchBytes,data:data132};
if(vErrors === null){
vErrors = [err260];
}
else {
vErrors.push(err260);
}
errors++;
}
if(data132 < 1024 || isNaN(data132)){
const err261 = {instancePath:instancePath+"/limits/fetchBytes",schemaPath:"#/properties/limits/properties/fetchBytes/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1024},message:"must be >= 1024",schema:1024,parentSchema:schema0.properties.limits.properties.fetchBytes,data:data132};
if(vErrors === null){
vErrors = [err261];
}
else {
vErrors.push(err261);
}
errors++;
}
}
}
if(data128.maxSteps !== undefined){
let data133 = data128.maxSteps;
if(!((typeof data133 == "number") && (!(data133 % 1) && !isNaN(data133)))){
const err262 = {instancePath:instancePath+"/limits/maxSteps",schemaPath:"#/properties/limits/properties/maxSteps/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.maxSteps.type,parentSchema:schema0.properties.limits.properties.maxSteps,data:data133};
if(vErrors === null){
vErrors = [err262];
}
else {
vErrors.push(err262);
}
errors++;
}
if(typeof data133 == "number"){
if(data133 > 10000 || isNaN(data133)){
const err263 = {instancePath:instancePath+"/limits/maxSteps",schemaPath:"#/properties/limits/properties/maxSteps/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10000},message:"must be <= 10000",schema:10000,parentSchema:schema0.properties.limits.properties.maxSteps,data:data133};
if(vErrors === null){
vErrors = [err263];
}
else {
vErrors.push(err263);
}
errors++;
}
if(data133 < 1 || isNaN(data133)){
const err264 = {instancePath:instancePath+"/limits/maxSteps",schemaPath:"#/properties/limits/properties/maxSteps/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.limits.properties.maxSteps,data:data133};
if(vErrors === null){
vErrors = [err264];
}
else {
vErrors.push(err264);
}
errors++;
}
}
}
if(data128.maxToolCalls !== undefined){
let data134 = data128.maxToolCalls;
if(!((typeof data134 == "number") && (!(data134 % 1) && !isNaN(data134)))){
const err265 = {instancePath:instancePath+"/limits/maxToolCalls",schemaPath:"#/properties/limits/properties/maxToolCalls/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.maxToolCalls.type,parentSchema:schema0.properties.limits.properties.maxToolCalls,data:data134};
if(vErrors === null){
vErrors = [err265];
}
else {
vErrors.push(err265);
}
errors++;
}
if(typeof data134 == "number"){
if(data134 > 1000000 || isNaN(data134)){
const err266 = {instancePath:instancePath+"/limits/maxToolCalls",schemaPath:"#/properties/limits/properties/maxToolCalls/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000},message:"must be <= 1000000",schema:1000000,parentSchema:schema0.properties.limits.properties.maxToolCalls,data:data134};
if(vErrors === null){
vErrors = [err266];
}
else {
vErrors.push(err266);
}
errors++;
}
if(data134 < 1 || isNaN(data134)){
const err267 = {instancePath:instancePath+"/limits/maxToolCalls",schemaPath:"#/properties/limits/properties/maxToolCalls/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.limits.properties.maxToolCalls,data:data134};
if(vErrors === null){
vErrors = [err267];
}
else {
vErrors.push(err267);
}
errors++;
}
}
}
if(data128.workers !== undefined){
let data135 = data128.workers;
if(!((typeof data135 == "number") && (!(data135 % 1) && !isNaN(data135)))){
const err268 = {instancePath:instancePath+"/limits/workers",schemaPath:"#/properties/limits/properties/workers/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.limits.properties.workers.type,parentSchema:schema0.properties.limits.properties.workers,data:data135};
if(vErrors === null){
vErrors = [err268];
}
else {
vErrors.push(err268);
}
errors++;
}
if(typeof data135 == "number"){
if(data135 > 64 || isNaN(data135)){
const err269 = {instancePath:instancePath+"/limits/workers",schemaPath:"#/properties/limits/properties/workers/maximum",keyword:"maximum",params:{comparison: "<=", limit: 64},message:"must be <= 64",schema:64,parentSchema:schema0.properties.limits.properties.workers,data:data135};
if(vErrors === null){
vErrors = [err269];
}
else {
vErrors.push(err269);
}
errors++;
}
if(data135 < 1 || isNaN(data135)){
const err270 = {instancePath:instancePath+"/limits/workers",schemaPath:"#/properties/limits/properties/workers/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.limits.properties.workers,data:data135};
if(vErrors === null){
vErrors = [err270];
}
else {
vErrors.push(err270);
}
errors++;
}
}
}
}
else {
const err271 = {instancePath:instancePath+"/limits",schemaPath:"#/properties/limits/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.limits.type,parentSchema:schema0.properties.limits,data:data128};
if(vErrors === null){
vErrors = [err271];
}
else {
vErrors.push(err271);
}
errors++;
}
}
if(data.browser !== undefined){
let data136 = data.browser;
if(data136 && typeof data136 == "object" && !Array.isArray(data136)){
for(const key26 in data136){
if(!(key26 === "executablePath")){
const err272 = {instancePath:instancePath+"/browser",schemaPath:"#/properties/browser/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key26},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.browser,data:data136};
if(vErrors === null){
vErrors = [err272];
}
else {
vErrors.push(err272);
}
errors++;
}
}
if(data136.executablePath !== undefined){
let data137 = data136.executablePath;
if(typeof data137 === "string"){
if(func1(data137) < 1){
const err273 = {instancePath:instancePath+"/browser/executablePath",schemaPath:"#/properties/browser/properties/executablePath/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.browser.properties.executablePath,data:data137};
if(vErrors === null){
vErrors = [err273];
}
else {
vErrors.push(err273);
}
errors++;
}
}
else {
const err274 = {instancePath:instancePath+"/browser/executablePath",schemaPath:"#/properties/browser/properties/executablePath/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.browser.properties.executablePath.type,parentSchema:schema0.properties.browser.properties.executablePath,data:data137};
if(vErrors === null){
vErrors = [err274];
}
else {
vErrors.push(err274);
}
errors++;
}
}
}
else {
const err275 = {instancePath:instancePath+"/browser",schemaPath:"#/properties/browser/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.browser.type,parentSchema:schema0.properties.browser,data:data136};
if(vErrors === null){
vErrors = [err275];
}
else {
vErrors.push(err275);
}
errors++;
}
}
if(data.gate !== undefined){
let data138 = data.gate;
if(data138 && typeof data138 == "object" && !Array.isArray(data138)){
for(const key27 in data138){
if(!(((((key27 === "profile") || (key27 === "preload")) || (key27 === "idleMs")) || (key27 === "maxSessions")) || (key27 === "maxSessionsPerToken"))){
const err276 = {instancePath:instancePath+"/gate",schemaPath:"#/properties/gate/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key27},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.gate,data:data138};
if(vErrors === null){
vErrors = [err276];
}
else {
vErrors.push(err276);
}
errors++;
}
}
if(data138.profile !== undefined){
let data139 = data138.profile;
if(typeof data139 === "string"){
if(func1(data139) < 1){
const err277 = {instancePath:instancePath+"/gate/profile",schemaPath:"#/properties/gate/properties/profile/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.gate.properties.profile,data:data139};
if(vErrors === null){
vErrors = [err277];
}
else {
vErrors.push(err277);
}
errors++;
}
}
else {
const err278 = {instancePath:instancePath+"/gate/profile",schemaPath:"#/properties/gate/properties/profile/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.gate.properties.profile.type,parentSchema:schema0.properties.gate.properties.profile,data:data139};
if(vErrors === null){
vErrors = [err278];
}
else {
vErrors.push(err278);
}
errors++;
}
}
if(data138.preload !== undefined){
let data140 = data138.preload;
if(Array.isArray(data140)){
const len24 = data140.length;
for(let i31=0; i31<len24; i31++){
let data141 = data140[i31];
if(typeof data141 === "string"){
if(func1(data141) < 1){
const err279 = {instancePath:instancePath+"/gate/preload/" + i31,schemaPath:"#/properties/gate/properties/preload/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.gate.properties.preload.items,data:data141};
if(vErrors === null){
vErrors = [err279];
}
else {
vErrors.push(err279);
}
errors++;
}
}
else {
const err280 = {instancePath:instancePath+"/gate/preload/" + i31,schemaPath:"#/properties/gate/properties/preload/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.gate.properties.preload.items.type,parentSchema:schema0.properties.gate.properties.preload.items,data:data141};
if(vErrors === null){
vErrors = [err280];
}
else {
vErrors.push(err280);
}
errors++;
}
}
let i32 = data140.length;
let j7;
if(i32 > 1){
const indices7 = {};
for(;i32--;){
let item7 = data140[i32];
if(typeof item7 !== "string"){
continue;
}
if(typeof indices7[item7] == "number"){
j7 = indices7[item7];
const err281 = {instancePath:instancePath+"/gate/preload",schemaPath:"#/properties/gate/properties/preload/uniqueItems",keyword:"uniqueItems",params:{i: i32, j: j7},message:"must NOT have duplicate items (items ## "+j7+" and "+i32+" are identical)",schema:true,parentSchema:schema0.properties.gate.properties.preload,data:data140};
if(vErrors === null){
vErrors = [err281];
}
else {
vErrors.push(err281);
}
errors++;
break;
}
indices7[item7] = i32;
}
}
}
else {
const err282 = {instancePath:instancePath+"/gate/preload",schemaPath:"#/properties/gate/properties/preload/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.gate.properties.preload.type,parentSchema:schema0.properties.gate.properties.preload,data:data140};
if(vErrors === null){
vErrors = [err282];
}
else {
vErrors.push(err282);
}
errors++;
}
}
if(data138.idleMs !== undefined){
let data142 = data138.idleMs;
if(!((typeof data142 == "number") && (!(data142 % 1) && !isNaN(data142)))){
const err283 = {instancePath:instancePath+"/gate/idleMs",schemaPath:"#/properties/gate/properties/idleMs/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.gate.properties.idleMs.type,parentSchema:schema0.properties.gate.properties.idleMs,data:data142};
if(vErrors === null){
vErrors = [err283];
}
else {
vErrors.push(err283);
}
errors++;
}
if(typeof data142 == "number"){
if(data142 > 86400000 || isNaN(data142)){
const err284 = {instancePath:instancePath+"/gate/idleMs",schemaPath:"#/properties/gate/properties/idleMs/maximum",keyword:"maximum",params:{comparison: "<=", limit: 86400000},message:"must be <= 86400000",schema:86400000,parentSchema:schema0.properties.gate.properties.idleMs,data:data142};
if(vErrors === null){
vErrors = [err284];
}
else {
vErrors.push(err284);
}
errors++;
}
if(data142 < 1000 || isNaN(data142)){
const err285 = {instancePath:instancePath+"/gate/idleMs",schemaPath:"#/properties/gate/properties/idleMs/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1000},message:"must be >= 1000",schema:1000,parentSchema:schema0.properties.gate.properties.idleMs,data:data142};
if(vErrors === null){
vErrors = [err285];
}
else {
vErrors.push(err285);
}
errors++;
}
}
}
if(data138.maxSessions !== undefined){
let data143 = data138.maxSessions;
if(!((typeof data143 == "number") && (!(data143 % 1) && !isNaN(data143)))){
const err286 = {instancePath:instancePath+"/gate/maxSessions",schemaPath:"#/properties/gate/properties/maxSessions/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.gate.properties.maxSessions.type,parentSchema:schema0.properties.gate.properties.maxSessions,data:data143};
if(vErrors === null){
vErrors = [err286];
}
else {
vErrors.push(err286);
}
errors++;
}
if(typeof data143 == "number"){
if(data143 > 100000 || isNaN(data143)){
const err287 = {instancePath:instancePath+"/gate/maxSessions",schemaPath:"#/properties/gate/properties/maxSessions/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000},message:"must be <= 100000",schema:100000,parentSchema:schema0.properties.gate.properties.maxSessions,data:data143};
if(vErrors === null){
vErrors = [err287];
}
else {
vErrors.push(err287);
}
errors++;
}
if(data143 < 1 || isNaN(data143)){
const err288 = {instancePath:instancePath+"/gate/maxSessions",schemaPath:"#/properties/gate/properties/maxSessions/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.gate.properties.maxSessions,data:data143};
if(vErrors === null){
vErrors = [err288];
}
else {
vErrors.push(err288);
}
errors++;
}
}
}
if(data138.maxSessionsPerToken !== undefined){
let data144 = data138.maxSessionsPerToken;
if(!((typeof data144 == "number") && (!(data144 % 1) && !isNaN(data144)))){
const err289 = {instancePath:instancePath+"/gate/maxSessionsPerToken",schemaPath:"#/properties/gate/properties/maxSessionsPerToken/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema0.properties.gate.properties.maxSessionsPerToken.type,parentSchema:schema0.properties.gate.properties.maxSessionsPerToken,data:data144};
if(vErrors === null){
vErrors = [err289];
}
else {
vErrors.push(err289);
}
errors++;
}
if(typeof data144 == "number"){
if(data144 > 100000 || isNaN(data144)){
const err290 = {instancePath:instancePath+"/gate/maxSessionsPerToken",schemaPath:"#/properties/gate/properties/maxSessionsPerToken/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000},message:"must be <= 100000",schema:100000,parentSchema:schema0.properties.gate.properties.maxSessionsPerToken,data:data144};
if(vErrors === null){
vErrors = [err290];
}
else {
vErrors.push(err290);
}
errors++;
}
if(data144 < 1 || isNaN(data144)){
const err291 = {instancePath:instancePath+"/gate/maxSessionsPerToken",schemaPath:"#/properties/gate/properties/maxSessionsPerToken/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema0.properties.gate.properties.maxSessionsPerToken,data:data144};
if(vErrors === null){
vErrors = [err291];
}
else {
vErrors.push(err291);
}
errors++;
}
}
}
}
else {
const err292 = {instancePath:instancePath+"/gate",schemaPath:"#/properties/gate/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.gate.type,parentSchema:schema0.properties.gate,data:data138};
if(vErrors === null){
vErrors = [err292];
}
else {
vErrors.push(err292);
}
errors++;
}
}
if(data.telemetry !== undefined){
let data145 = data.telemetry;
if(data145 && typeof data145 == "object" && !Array.isArray(data145)){
for(const key28 in data145){
if(!((((((key28 === "enabled") || (key28 === "endpoint")) || (key28 === "protocol")) || (key28 === "headers")) || (key28 === "serviceName")) || (key28 === "captureContent"))){
const err293 = {instancePath:instancePath+"/telemetry",schemaPath:"#/properties/telemetry/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key28},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.telemetry,data:data145};
if(vErrors === null){
vErrors = [err293];
}
else {
vErrors.push(err293);
}
errors++;
}
}
if(data145.enabled !== undefined){
let data146 = data145.enabled;
if(typeof data146 !== "boolean"){
const err294 = {instancePath:instancePath+"/telemetry/enabled",schemaPath:"#/properties/telemetry/properties/enabled/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.telemetry.properties.enabled.type,parentSchema:schema0.properties.telemetry.properties.enabled,data:data146};
if(vErrors === null){
vErrors = [err294];
}
else {
vErrors.push(err294);
}
errors++;
}
}
if(data145.endpoint !== undefined){
let data147 = data145.endpoint;
if(typeof data147 === "string"){
if(!pattern16.test(data147)){
const err295 = {instancePath:instancePath+"/telemetry/endpoint",schemaPath:"#/properties/telemetry/properties/endpoint/pattern",keyword:"pattern",params:{pattern: "^https?://"},message:"must match pattern \""+"^https?://"+"\"",schema:"^https?://",parentSchema:schema0.properties.telemetry.properties.endpoint,data:data147};
if(vErrors === null){
vErrors = [err295];
}
else {
vErrors.push(err295);
}
errors++;
}
}
else {
const err296 = {instancePath:instancePath+"/telemetry/endpoint",schemaPath:"#/properties/telemetry/properties/endpoint/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.telemetry.properties.endpoint.type,parentSchema:schema0.properties.telemetry.properties.endpoint,data:data147};
if(vErrors === null){
vErrors = [err296];
}
else {
vErrors.push(err296);
}
errors++;
}
}
if(data145.protocol !== undefined){
let data148 = data145.protocol;
if(!((data148 === "http/protobuf") || (data148 === "http/json"))){
const err297 = {instancePath:instancePath+"/telemetry/protocol",schemaPath:"#/properties/telemetry/properties/protocol/enum",keyword:"enum",params:{allowedValues: schema0.properties.telemetry.properties.protocol.enum},message:"must be equal to one of the allowed values",schema:schema0.properties.telemetry.properties.protocol.enum,parentSchema:schema0.properties.telemetry.properties.protocol,data:data148};
if(vErrors === null){
vErrors = [err297];
}
else {
vErrors.push(err297);
}
errors++;
}
}
if(data145.headers !== undefined){
let data149 = data145.headers;
if(data149 && typeof data149 == "object" && !Array.isArray(data149)){
for(const key29 in data149){
let data150 = data149[key29];
if(typeof data150 !== "string"){
const err298 = {instancePath:instancePath+"/telemetry/headers/" + key29.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/telemetry/properties/headers/additionalProperties/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.telemetry.properties.headers.additionalProperties.type,parentSchema:schema0.properties.telemetry.properties.headers.additionalProperties,data:data150};
if(vErrors === null){
vErrors = [err298];
}
else {
vErrors.push(err298);
}
errors++;
}
}
}
else {
const err299 = {instancePath:instancePath+"/telemetry/headers",schemaPath:"#/properties/telemetry/properties/headers/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.telemetry.properties.headers.type,parentSchema:schema0.properties.telemetry.properties.headers,data:data149};
if(vErrors === null){
vErrors = [err299];
}
else {
vErrors.push(err299);
}
errors++;
}
}
if(data145.serviceName !== undefined){
let data151 = data145.serviceName;
if(typeof data151 === "string"){
if(func1(data151) < 1){
const err300 = {instancePath:instancePath+"/telemetry/serviceName",schemaPath:"#/properties/telemetry/properties/serviceName/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters",schema:1,parentSchema:schema0.properties.telemetry.properties.serviceName,data:data151};
if(vErrors === null){
vErrors = [err300];
}
else {
vErrors.push(err300);
}
errors++;
}
}
else {
const err301 = {instancePath:instancePath+"/telemetry/serviceName",schemaPath:"#/properties/telemetry/properties/serviceName/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.telemetry.properties.serviceName.type,parentSchema:schema0.properties.telemetry.properties.serviceName,data:data151};
if(vErrors === null){
vErrors = [err301];
}
else {
vErrors.push(err301);
}
errors++;
}
}
if(data145.captureContent !== undefined){
let data152 = data145.captureContent;
if(typeof data152 !== "boolean"){
const err302 = {instancePath:instancePath+"/telemetry/captureContent",schemaPath:"#/properties/telemetry/properties/captureContent/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema0.properties.telemetry.properties.captureContent.type,parentSchema:schema0.properties.telemetry.properties.captureContent,data:data152};
if(vErrors === null){
vErrors = [err302];
}
else {
vErrors.push(err302);
}
errors++;
}
}
}
else {
const err303 = {instancePath:instancePath+"/telemetry",schemaPath:"#/properties/telemetry/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.telemetry.type,parentSchema:schema0.properties.telemetry,data:data145};
if(vErrors === null){
vErrors = [err303];
}
else {
vErrors.push(err303);
}
errors++;
}
}
if(data.env !== undefined){
let data153 = data.env;
if(data153 && typeof data153 == "object" && !Array.isArray(data153)){
for(const key30 in data153){
if(!((key30 === "inherit") || (key30 === "set"))){
const err304 = {instancePath:instancePath+"/env",schemaPath:"#/properties/env/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key30},message:"must NOT have additional properties",schema:false,parentSchema:schema0.properties.env,data:data153};
if(vErrors === null){
vErrors = [err304];
}
else {
vErrors.push(err304);
}
errors++;
}
}
if(data153.inherit !== undefined){
let data154 = data153.inherit;
if(Array.isArray(data154)){
const len25 = data154.length;
for(let i33=0; i33<len25; i33++){
let data155 = data154[i33];
if(typeof data155 === "string"){
if(!pattern17.test(data155)){
const err305 = {instancePath:instancePath+"/env/inherit/" + i33,schemaPath:"#/properties/env/properties/inherit/items/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z_][A-Za-z0-9_]*$"},message:"must match pattern \""+"^[A-Za-z_][A-Za-z0-9_]*$"+"\"",schema:"^[A-Za-z_][A-Za-z0-9_]*$",parentSchema:schema0.properties.env.properties.inherit.items,data:data155};
if(vErrors === null){
vErrors = [err305];
}
else {
vErrors.push(err305);
}
errors++;
}
}
else {
const err306 = {instancePath:instancePath+"/env/inherit/" + i33,schemaPath:"#/properties/env/properties/inherit/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.env.properties.inherit.items.type,parentSchema:schema0.properties.env.properties.inherit.items,data:data155};
if(vErrors === null){
vErrors = [err306];
}
else {
vErrors.push(err306);
}
errors++;
}
}
}
else {
const err307 = {instancePath:instancePath+"/env/inherit",schemaPath:"#/properties/env/properties/inherit/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema0.properties.env.properties.inherit.type,parentSchema:schema0.properties.env.properties.inherit,data:data154};
if(vErrors === null){
vErrors = [err307];
}
else {
vErrors.push(err307);
}
errors++;
}
}
if(data153.set !== undefined){
let data156 = data153.set;
if(data156 && typeof data156 == "object" && !Array.isArray(data156)){
for(const key31 in data156){
let data157 = data156[key31];
if(typeof data157 !== "string"){
const err308 = {instancePath:instancePath+"/env/set/" + key31.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/env/properties/set/additionalProperties/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema0.properties.env.properties.set.additionalProperties.type,parentSchema:schema0.properties.env.properties.set.additionalProperties,data:data157};
if(vErrors === null){
vErrors = [err308];
}
else {
vErrors.push(err308);
}
errors++;
}
}
}
else {
const err309 = {instancePath:instancePath+"/env/set",schemaPath:"#/properties/env/properties/set/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.env.properties.set.type,parentSchema:schema0.properties.env.properties.set,data:data156};
if(vErrors === null){
vErrors = [err309];
}
else {
vErrors.push(err309);
}
errors++;
}
}
}
else {
const err310 = {instancePath:instancePath+"/env",schemaPath:"#/properties/env/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.env.type,parentSchema:schema0.properties.env,data:data153};
if(vErrors === null){
vErrors = [err310];
}
else {
vErrors.push(err310);
}
errors++;
}
}
}
else {
const err311 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.type,parentSchema:schema0,data};
if(vErrors === null){
vErrors = [err311];
}
else {
vErrors.push(err311);
}
errors++;
}
validate0.errors = vErrors;
return errors === 0;
}
validate0.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};
    return module.exports;
  },
};
