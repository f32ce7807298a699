import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { type McpServersMap, parseMcpServersConfig } from "@capgate/mcp-client";
import { parseModelSpec } from "@capgate/models";
import { parseAllowHost } from "@capgate/net-guard";
import { type ProfileSet, resolveProfiles } from "@capgate/profiles";
import {
  policyFilesOfRunningSandboxes,
  recoverInterruptedSandboxes,
  stateDirFor,
  stateDirPlacementProblem,
} from "@capgate/sandbox";
import {
  addPrecompiledValidators,
  CapgateError,
  parseJsonStrict,
  type ValidationResult,
  validate,
} from "@capgate/schema";
import type { TelemetryConfig } from "@capgate/telemetry";
import type { ApprovalMode, ShellPolicyConfig, ToolLimits } from "@capgate/tools";
import { POLICY_FILE_NAME } from "@capgate/workspace";
import { configSchema } from "./config-schema.js";
import type { configValidators } from "./generated/config-validator.js";

/** The policy file, by the name the file and sandbox guards protect (`POLICY_FILE_NAME`). */
export const CONFIG_FILE_NAME = POLICY_FILE_NAME;

export interface CapgateConfig {
  model?: string;
  /** Capability plugins: package names or paths (relative to this file's directory). */
  capabilities?: string[];
  workspace?: string;
  stateDir?: string;
  /** PostgreSQL URL: `capgate serve` hands runs to `capgate worker` nodes through it, and `capgate worker` takes them. */
  database?: string;
  profiles?: Record<string, Record<string, unknown>>;
  /** Server entries; a stdio entry may also carry `"sandbox": true` (see ResolvedConfig.sandboxedServers). */
  mcpServers?: Record<string, McpServersMap[string] & { sandbox?: boolean }>;
  approval?: ApprovalMode;
  shell?: ShellPolicyConfig;
  /** `capgate hook claude-code`: `sandbox: true` runs an allowed Bash call in capgate's OS sandbox. */
  hook?: { sandbox?: boolean };
  web?: { allowHosts?: string[] };
  limits?: Partial<ToolLimits> & { maxSteps?: number; maxToolCalls?: number; workers?: number };
  browser?: { executablePath?: string };
  env?: { inherit?: string[]; set?: Record<string, string> };
  /** The MCP gate (`capgate mcp serve`, the server's /mcp): each session's profile and preloads, and /mcp session limits. */
  gate?: GateConfig;
  /** OpenTelemetry traces over OTLP/HTTP (off unless enabled here or by the OTEL_* variables). */
  telemetry?: TelemetryConfig;
}

export interface GateConfig {
  /** Profile of every gate session (default Orchestrator). */
  profile?: string;
  /** Capabilities loaded at the start of every gate session (e.g. ["fs", "shell"]), for clients that open one session per call. */
  preload?: string[];
  /** /mcp: a session idle this long is closed (default 300000, 5 minutes). */
  idleMs?: number;
  /** /mcp: most sessions open at once; at the cap the least recently used idle one is closed (default 64). */
  maxSessions?: number;
  /** /mcp: most sessions per bearer token (default: maxSessions). */
  maxSessionsPerToken?: number;
}

/** A checked config with everything derived from it resolved. */
export interface ResolvedConfig {
  config: CapgateConfig;
  /** The file it came from, when there was one. */
  path?: string;
  /** Relative paths in the config resolve against this directory. */
  baseDir: string;
  profiles: ProfileSet;
  mcpServers: McpServersMap;
  /** Configured stdio servers with `"sandbox": true`: the harness runs them in the OS sandbox. */
  sandboxedServers: string[];
  /** What loading did first: the after-command steps of sandboxes whose capgate process was killed (notices for the operator). */
  recovered?: string[];
}

export interface ConfigProblem {
  property: string;
  message: string;
}

/** The config file failed its schema or a semantic check. `property` names the first bad property; `problems` lists all. */
export class InvalidConfigError extends CapgateError {
  readonly problems: ConfigProblem[];
  constructor(source: string, problems: ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.property || "(root)"}: ${p.message}`).join("\n");
    super("invalid_config", `${source} is invalid:\n${lines}`, { property: problems[0]?.property });
    this.name = "InvalidConfigError";
    this.problems = problems;
  }
}

function withPrefix(path: string): string {
  return path === "" ? "" : path;
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    Reflect.ownKeys(value).length === 0
  );
}

const requireHere = createRequire(import.meta.url);

/**
 * The config schema's precompiled validator (200 KB of code), read when a config other than
 * `{}` is first checked: most commands run without a config file and never need it. A
 * separate file beside the bundle (an entry of its own in tsup.config.ts), so `require`
 * keeps parseConfig synchronous.
 */
function checkAgainstSchema(value: unknown): ValidationResult {
  const { configValidators: precompiled } = requireHere("./generated/config-validator.js") as {
    configValidators: typeof configValidators;
  };
  addPrecompiledValidators(precompiled);
  return validate(configSchema, value);
}

/**
 * Check a config value: the published JSON Schema first (every problem, by property
 * path), then the semantic checks of the packages that own each section (profiles,
 * MCP servers). Throws InvalidConfigError naming the bad properties.
 */
export function parseConfig(
  value: unknown,
  options: { source?: string; baseDir?: string; path?: string } = {},
): ResolvedConfig {
  const source = options.source ?? "the capgate config";
  // The empty config (no file) is valid by the schema (a test checks it), so it is not
  // checked. Any other is checked with the schema's precompiled validator (a test keeps it
  // in step with the schema): a config file costs no schema compile either.
  const checked = isEmptyObject(value) ? { ok: true as const } : checkAgainstSchema(value);
  if (!checked.ok) {
    throw new InvalidConfigError(
      source,
      checked.errors.map((e) => ({ property: withPrefix(e.property), message: e.message })),
    );
  }
  const config = value as CapgateConfig;
  const problems: ConfigProblem[] = [];
  let profiles: ProfileSet | undefined;
  try {
    profiles = resolveProfiles(config.profiles ?? {});
  } catch (error) {
    problems.push(...problemsOf(error, "profiles"));
  }
  let mcpServers: McpServersMap = {};
  const { servers, sandboxed } = splitSandboxFlags(config.mcpServers, problems);
  try {
    mcpServers = servers ? parseMcpServersConfig(servers) : {};
  } catch (error) {
    problems.push(...problemsOf(error, "mcpServers"));
  }
  problems.push(...allowHostProblems(config.web?.allowHosts), ...modelProblems(config.model));
  if (problems.length > 0 || !profiles) throw new InvalidConfigError(source, problems);
  return {
    config,
    ...(options.path ? { path: options.path } : {}),
    baseDir: options.baseDir ?? process.cwd(),
    profiles,
    mcpServers,
    sandboxedServers: sandboxed,
  };
}

/** Each allowHosts entry must be a host or host:port (a URL or a path would never match a request). */
function allowHostProblems(entries: readonly string[] | undefined): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [i, entry] of (entries ?? []).entries()) {
    try {
      parseAllowHost(entry);
    } catch {
      const url = /^[a-z][a-z0-9+.-]*:\/\//i.exec(entry);
      problems.push({
        property: `web.allowHosts[${i}]`,
        message: `${JSON.stringify(entry)} is ${url ? "a URL" : "not a host"}: write a host or host:port such as "127.0.0.1:3000" or "localhost"${url ? ` (drop "${url[0]}" and any path)` : ""}`,
      });
    }
  }
  return problems;
}

/** The model spec's syntax (provider, query options) — the file or API key is checked when the model is made. */
function modelProblems(model: string | undefined): ConfigProblem[] {
  if (model === undefined) return [];
  try {
    parseModelSpec(model);
    return [];
  } catch (error) {
    return [{ property: "model", message: error instanceof Error ? error.message : String(error) }];
  }
}

/**
 * `"sandbox"` is the harness's key, not the MCP client's: take it out of each entry before
 * the client parses the servers, and remember which servers asked for it (stdio only).
 */
function splitSandboxFlags(
  entries: CapgateConfig["mcpServers"],
  problems: ConfigProblem[],
): { servers: Record<string, unknown> | undefined; sandboxed: string[] } {
  if (!entries) return { servers: undefined, sandboxed: [] };
  const servers: Record<string, unknown> = {};
  const sandboxed: string[] = [];
  for (const [name, entry] of Object.entries(entries)) {
    const { sandbox, ...rest } = entry;
    servers[name] = rest;
    if (sandbox !== true) continue;
    if (typeof (rest as { command?: unknown }).command !== "string") {
      problems.push({
        property: `mcpServers.${name}.sandbox`,
        message: `mcpServers.${name}.sandbox applies to stdio servers (with "command") only; an HTTP server is not a process capgate starts.`,
      });
      continue;
    }
    sandboxed.push(name);
  }
  return { servers, sandboxed };
}

function problemsOf(error: unknown, section: string): ConfigProblem[] {
  const list = (error as { problems?: Array<{ property?: string; path?: string; message: string }> })
    .problems;
  if (Array.isArray(list) && list.length > 0) {
    return list.map((p) => ({ property: p.property ?? p.path ?? section, message: p.message }));
  }
  if (CapgateError.isInstance(error))
    return [{ property: error.property ?? section, message: error.message }];
  throw error;
}

/**
 * Find and read `capgate.config.json`: the explicit `path` (which must exist), else the
 * file in `cwd`, else no file (an empty config). JSON errors name the line and column.
 *
 * The config is the policy, and the model can create one where none was (a sandboxed
 * command, until its after-command step renames the file aside). So before reading, the
 * after-command steps a killed capgate process left undone are done (their notices are in
 * `recovered`), and a config file that a sandbox still running may have created is not read
 * as policy: the default config applies (said in `recovered`), and a `path` asked for by name
 * is refused — for every frontend that loads a config, and for every reload.
 */
export function loadConfig(
  options: { cwd?: string; path?: string; env?: Record<string, string | undefined> } = {},
): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const explicit = options.path !== undefined;
  const path = explicit ? resolve(cwd, options.path as string) : join(cwd, CONFIG_FILE_NAME);
  const defaultState = stateDirFor(undefined, cwd, env);
  // A state directory this working directory's workspace would expose is refused when the
  // harness starts; its journal is not acted on before that (the model could have written it).
  const usable = (dir: string): boolean => stateDirPlacementProblem(cwd, dir) === undefined;
  const states = usable(defaultState) ? [defaultState] : [];
  const recovered = states.length > 0 ? recoverInterruptedSandboxes(defaultState) : [];
  let resolved = readConfigFile(path, explicit, cwd);
  // A config naming its own state directory: the sandboxes recorded there too.
  if (resolved.config.stateDir !== undefined) {
    const own = stateDirFor(resolved.config.stateDir, resolved.baseDir, env);
    if (resolve(own) !== resolve(defaultState) && usable(own)) {
      states.push(own);
      const more = recoverInterruptedSandboxes(own);
      if (more.length > 0) {
        recovered.push(...more);
        resolved = readConfigFile(path, explicit, cwd);
      }
    }
  }
  // After the read, so no timing helps: a sandbox records the policy files missing at its
  // start before its command runs, so a file that command made is listed before it exists.
  const running = resolved.path === undefined ? undefined : runningSandboxMissing(states, path);
  if (running && explicit)
    throw new CapgateError(
      "invalid_config",
      `${path} did not exist when a sandboxed command (or MCP server) of capgate process ${running} started, and it is still running: the file may be its work, so capgate does not read it as policy. When it ends, capgate renames a file it created aside; run again then.`,
      { property: "config" },
    );
  if (running) {
    // What was in force when that command started (no file): the default config.
    resolved = parseConfig({}, { source: "the default config", baseDir: cwd });
    recovered.push(
      `ignored ${path}: it did not exist when a sandboxed command (or MCP server) of capgate process ${running} started, which still runs, so it may be its work; the default config applies until it ends (then a file it created is renamed aside).`,
    );
  }
  return recovered.length > 0 ? { ...resolved, recovered } : resolved;
}

/** The pid of a running sandbox (recorded in one of `states`) that listed `path` as missing at its start. */
function runningSandboxMissing(states: readonly string[], path: string): number | undefined {
  const real = realPolicyPath(path);
  for (const stateDir of states) {
    const hit = policyFilesOfRunningSandboxes(stateDir).find((f) => f.path === real);
    if (hit) return hit.pid;
  }
  return undefined;
}

/** The path as the sandbox records it: the directory's real path (the file itself may not exist). */
function realPolicyPath(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

function readConfigFile(path: string, explicit: boolean, cwd: string): ResolvedConfig {
  if (!existsSync(path)) {
    if (explicit)
      throw new CapgateError("invalid_config", `The config file ${path} does not exist.`, {
        property: "config",
      });
    return parseConfig({}, { source: "the default config", baseDir: cwd });
  }
  const parsed = parseJsonStrict(readFileSync(path, "utf8"));
  if (!parsed.ok) {
    throw new InvalidConfigError(path, [
      {
        property: parsed.path,
        message: `not valid JSON at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`,
      },
    ]);
  }
  return parseConfig(parsed.value, { source: path, baseDir: dirname(path), path });
}

/** Resolve a path from the config against the config file's directory. */
export function resolveConfigPath(baseDir: string, value: string): string {
  if (value.startsWith("~/")) return join(process.env.HOME ?? "", value.slice(2));
  return isAbsolute(value) ? value : resolve(baseDir, value);
}
