import { mkdirSync, realpathSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type Chat,
  type CreateChatOptions,
  createChat,
  FileRunStore,
  type LoopApprovalHook,
  type LoopEnvironment,
  MemoryStore,
  type RunGoalOptions,
  type RunGoalResult,
  runGoal,
} from "@capgate/loop";
import type {
  ElicitationHandler,
  GateCallExtra,
  McpPool,
  McpServersMap,
  McpStdioServerConfig,
  SamplingHandler,
} from "@capgate/mcp-client";
import { createNodeMcpPool } from "@capgate/mcp-client/stdio";
import { createModel, type ModelClient } from "@capgate/models";
import { killMarkedProcesses } from "@capgate/process-group";
import type { ProfileSet } from "@capgate/profiles";
import type { Registry } from "@capgate/registry";
import { assertStateDirPlacement, probeBwrap, stateDirFor } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import { startTelemetry, type Telemetry, telemetrySettings } from "@capgate/telemetry";
import {
  type CapabilityEntry,
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type HostResources,
  type PolicyConfig,
  type ToolLimits,
} from "@capgate/tools";
import { hostPath, withHostPath } from "@capgate/workspace";
import { builtinCapabilities } from "./builtins.js";
import { type CallToolOptions, type CallToolOutcome, callTool } from "./call-tool.js";
import { type CapgateConfig, parseConfig, type ResolvedConfig, resolveConfigPath } from "./config.js";
import { checkConfigAgainstHarness } from "./config-check.js";
import { type ConfigReloadResult, diffConfigs } from "./config-diff.js";
import { createDefaultRegistry } from "./default-registry.js";
import { toolEnvironment } from "./environment.js";
import { createGateSession, type GateSession, type GateSessionOptions } from "./gate.js";
import { modelSamplingHandler } from "./mcp-sampling.js";
import { type CapabilityLoadProblem, type CapabilitySource, loadCapabilityPlugins } from "./plugins.js";
import { containServers, sandboxServers } from "./sandboxed-servers.js";
import { refuseHomeWorkspace } from "./workspace-guard.js";

/** Told on every start while the config turns the sandbox off: the operator chose it, and must not forget it. */
export const SANDBOX_OFF_WARNING =
  'capgate: warning: the OS sandbox is off ("shell": { "sandbox": "off" } in capgate.config.json) — commands the model runs are not confined to the workspace, can read your secrets and reach your desktop and network.';

export interface HarnessOptions {
  /** A config value or an already loaded one (from loadConfig); default: an empty config. */
  config?: CapgateConfig | ResolvedConfig;
  /** Workspace root; default: the config's `workspace`, else the current directory. */
  workspace?: string;
  /** Where traces and memory live; default: the config's `stateDir`, else $CAPGATE_HOME, else ~/.capgate. */
  stateDir?: string;
  /** Answers approval requests (CLI prompt, server endpoint). Without one, required approvals are denied. */
  approve?: LoopApprovalHook;
  /** Overrides the config's approval mode. */
  approval?: PolicyConfig["approval"];
  /** More capabilities to register beside the eleven built-ins (defined, or deferred: see deferCapability). */
  capabilities?: CapabilityEntry[];
  /**
   * More capability plugins (package names or paths, resolved against `pluginBaseDir`,
   * default the current directory) beside the config's `capabilities` — the CLI's
   * `--capability`. Loaded, linted and registered like the config's.
   */
  capabilityPlugins?: string[];
  pluginBaseDir?: string;
  /** Process environment to take the minimal tool environment from (default process.env). */
  processEnv?: Record<string, string | undefined>;
  /**
   * Answers MCP servers' elicitation requests (CLI: a form on the terminal, decline without
   * one; server app: a pending request for the operator). Without one, servers are told no.
   */
  onElicitation?: ElicitationHandler;
  /**
   * Answers sampling for servers whose entry says `"sampling": true`. Default: the model of
   * the most recently started run or chat (else the configured model).
   */
  onSampling?: SamplingHandler;
  /**
   * Traces of runs and direct calls: a started Telemetry, or `false` for none. Default: the
   * config's `telemetry` section and the OTEL_* variables of `processEnv` (off unless they
   * enable it; the SDK is loaded only then).
   */
  telemetry?: Telemetry | false;
  /**
   * Only for shell commands that are fixed and bundled (a demo's), never a model's: where
   * bubblewrap cannot start, run them without the OS sandbox instead of refusing. Called
   * with the reason (for the user) before anything starts; the sandbox-off warning is then
   * not repeated in `notices`.
   */
  unsandboxedIfUnavailable?: (reason: string) => void;
}

export interface McpIndexResult {
  server: string;
  /** Tools indexed for search (each under the name it is called by). */
  tools: number;
  /** Tools left out (hostile or malformed names, oversized schemas). */
  skipped: number;
  /** Where the list came from: the server itself, the disk cache, or nowhere yet. */
  source: "live" | "cache" | "none";
  error?: string;
}

/**
 * The config with the sandbox off when the caller allows it (`unsandboxedIfUnavailable`)
 * and bubblewrap cannot start; undefined when nothing changes.
 */
async function sandboxFallback(
  resolved: ResolvedConfig,
  tell: ((reason: string) => void) | undefined,
): Promise<ResolvedConfig | undefined> {
  const shell = resolved.config.shell;
  if (!tell || shell?.sandbox === "off") return undefined;
  const reason = await probeBwrap(shell?.bwrap).then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (reason === undefined) return undefined;
  tell(reason);
  // The fallback is for the bundled commands alone: MCP servers (which may ask for the
  // sandbox) are left out rather than started under a sandbox-off policy.
  const { mcpServers: _servers, ...rest } = resolved.config;
  return { ...resolved, mcpServers: {}, config: { ...rest, shell: { ...shell, sandbox: "off" } } };
}

/** Everything a frontend needs: registry, executor, loops, MCP — built from one config. */
export interface Harness {
  readonly config: CapgateConfig;
  readonly configPath: string | undefined;
  readonly workspace: string;
  readonly stateDir: string;
  readonly registry: Registry;
  readonly capabilities: CapabilitySet;
  /** Where each registered capability came from (built-in, an option, a plugin's package or path). */
  readonly capabilitySources: ReadonlyMap<string, CapabilitySource>;
  /** Plugin problems by spec: errors (it did not load; the rest did) and contract warnings. */
  readonly capabilityProblems: readonly CapabilityLoadProblem[];
  /**
   * What every frontend tells its operator when it starts, one line each: the after-command
   * steps loading the config did for a killed process (`ResolvedConfig.recovered`), and
   * `SANDBOX_OFF_WARNING` while the config turns the OS sandbox off.
   */
  readonly notices: readonly string[];
  readonly profiles: ProfileSet;
  /** This process's traces under the state dir (a queue worker's runs go to its own store instead). */
  readonly store: FileRunStore;
  readonly memory: MemoryStore;
  readonly resources: HostResources;
  /** The configured MCP servers' pool (undefined when none is configured). */
  readonly mcp: McpPool | undefined;
  /** Traces being exported (undefined when telemetry is off). Closed with the harness. */
  readonly telemetry: Telemetry | undefined;
  /** The loop environment, for calling runGoal/createChat from @capgate/loop directly. */
  readonly environment: LoopEnvironment;
  readonly maxSteps: number | undefined;
  /** A model by spec string (default: the config's `model`). */
  model(spec?: string): ModelClient;
  /** The goal loop with this harness's registry, policies and stores. */
  runGoal(options: HarnessRunOptions): Promise<RunGoalResult>;
  /** The chat loop (MCP fallthrough on). */
  createChat(options: HarnessChatOptions): Chat;
  /** One tool through the executor and policies (its capability loaded for the call; `<server>/<tool>` routed to MCP). */
  callTool(
    tool: string,
    args: Record<string, unknown> | undefined,
    options?: CallToolOptions,
  ): Promise<CallToolOutcome>;
  /** Index the configured MCP servers' tools into the registry as `mcp:<server>` (connecting lazily, short timeout). */
  indexMcpTools(options?: { connectTimeoutMs?: number }): Promise<McpIndexResult[]>;
  /** A gate session (one router) for serving capability_search/load/call/memory_search over MCP; profile and preload default to the config's `gate`. */
  createGateSession(options?: GateSessionOptions): GateSession;
  /**
   * Put an edited config in force without a restart (checked as at start; InvalidConfigError
   * and nothing changed when it fails). MCP servers added start lazily, removed ones are
   * closed (their processes end), changed ones (any difference in their entry) restart,
   * unchanged ones keep their sessions; search follows. Other fields apply only at start:
   * ones that differ are listed in `needsRestart` and ignored. Reloads run one at a time.
   */
  reloadConfig(next: ResolvedConfig): Promise<ConfigReloadResult>;
  /** Close MCP sessions, the browser, background processes and open traces. */
  close(): Promise<void>;
}

export type HarnessRunOptions = Omit<RunGoalOptions, "model" | "workspace"> & {
  model?: ModelClient | string;
  workspace?: string;
  /** This run's approval mode (default: the harness's). */
  approval?: PolicyConfig["approval"];
  /** This run's approver (default: the harness's). */
  approve?: LoopApprovalHook;
};

export type HarnessChatOptions = Omit<CreateChatOptions, "model" | "workspace"> & {
  model?: ModelClient | string;
  workspace?: string;
};

function isResolved(c: CapgateConfig | ResolvedConfig | undefined): c is ResolvedConfig {
  return (
    c !== undefined && typeof (c as ResolvedConfig).baseDir === "string" && "profiles" in c && "config" in c
  );
}

/**
 * Build a harness: the eleven built-in capabilities (plus any given), the registry (with
 * the configured MCP servers' cached tool lists), profiles with config overrides, the
 * run store and memory under the state dir, one host-resource scope (browser session,
 * background processes), and the MCP pool.
 */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const given = isResolved(options.config)
    ? options.config
    : parseConfig(options.config ?? {}, { source: "the capgate config" });
  const fallback = await sandboxFallback(given, options.unsandboxedIfUnavailable);
  const resolved = fallback ?? given;
  const config = resolved.config;
  const { capabilities, capabilitySources, capabilityProblems } = await collectCapabilities(
    resolved,
    options,
  );
  // Checked before anything is created (state dir, MCP pool), so a bad config leaves nothing behind.
  await checkConfigAgainstHarness(
    resolved,
    capabilities.list().map((c) => c.manifest.name),
    resolved.path ?? "the capgate config",
  );
  const processEnv = options.processEnv ?? process.env;
  const { workspace, stateDir } = placeHarness(resolved, options, processEnv);

  const registry = createDefaultRegistry();
  for (const c of capabilities.list()) {
    // Built-in schemas are fixed at build time and compiled by this package's tests; each
    // is compiled before its first call. Everything else is compiled here, at registration.
    const builtin = capabilitySources.get(c.manifest.name)?.kind === "builtin";
    registry.register(c.manifest, builtin ? { compileSchemas: false } : {});
  }

  const limits: ToolLimits = { ...DEFAULT_LIMITS, ...pickLimits(config.limits) };
  const policy: PolicyConfig = {
    ...(config.shell ? { shell: config.shell } : {}),
    ...(config.web ? { web: config.web } : {}),
    approval: options.approval ?? config.approval ?? "never",
  };
  const toolEnv = toolEnvironment(processEnv, config.env);

  const model = modelFactory(resolved, processEnv);
  // Sampling uses the run's model: the one the latest run or chat started with.
  const sampling: { model?: ModelClient } = {};
  const placing: ServerPlacing = { workspace, stateDir, policy, toolEnv, processEnv };
  const { mcp, marks } = await startMcpPool({
    resolved,
    options,
    registry,
    placing,
    samplingModel: () => {
      if (sampling.model) return sampling.model;
      try {
        return model();
      } catch {
        return undefined;
      }
    },
  });

  const telemetry =
    options.telemetry === false
      ? undefined
      : (options.telemetry ?? (await configuredTelemetry(config, processEnv)));
  const store = new FileRunStore(stateDir);
  const memory = new MemoryStore(stateDir);
  const resources = createHostResources();
  const browserExecutable = config.browser?.executablePath ?? processEnv.CAPGATE_CHROMIUM;

  const environment: LoopEnvironment = {
    registry,
    capabilities,
    profiles: resolved.profiles,
    stateDir,
    // Every event a run, chat or gate session records also becomes spans when telemetry is on.
    store: telemetry ? telemetry.traceRunStore(store) : store,
    memory,
    policy,
    limits,
    ...(options.approve ? { approve: options.approve } : {}),
    resources,
    env: toolEnv,
    ...(mcp ? { mcp } : {}),
    ...(browserExecutable ? { browserExecutable } : {}),
    ...(config.limits?.workers ? { workerLimit: config.limits.workers } : {}),
    ...(config.limits?.maxToolCalls ? { maxToolCalls: config.limits.maxToolCalls } : {}),
  };
  const indexer = mcpIndexer(mcp, registry);
  const capabilityNames = capabilities.list().map((c) => c.manifest.name);
  // The config in force: the one the harness started with, its mcpServers replaced by reloads.
  let current = resolved;
  let reloading: Promise<unknown> = Promise.resolve();

  let closed = false;
  const harness: Harness = {
    get config() {
      return current.config;
    },
    configPath: resolved.path,
    workspace,
    stateDir,
    registry,
    capabilities,
    capabilitySources,
    capabilityProblems,
    notices: [
      ...(resolved.recovered ?? []).map((notice) => `capgate: ${notice}`),
      // A fallback to no sandbox was told by its callback: not a second line for the same thing.
      ...(resolved.config.shell?.sandbox === "off" && !fallback ? [SANDBOX_OFF_WARNING] : []),
    ],
    profiles: resolved.profiles,
    store,
    memory,
    resources,
    mcp,
    telemetry,
    environment,
    maxSteps: config.limits?.maxSteps,
    model: (spec) => model(spec),
    async runGoal({ approval, approve, ...runOptions }) {
      const m = model(runOptions.model);
      sampling.model = m;
      if (runOptions.mcp) await indexer.ensureIndexed();
      const nativeTools = runOptions.nativeTools ?? (m as { nativeTools?: boolean }).nativeTools === true;
      const env: LoopEnvironment =
        approval === undefined && approve === undefined
          ? environment
          : {
              ...environment,
              policy: { ...environment.policy, ...(approval ? { approval } : {}) },
              ...(approve ? { approve } : {}),
            };
      return runGoal(env, {
        ...runOptions,
        model: m,
        workspace: runOptions.workspace ? realpathOrFail(runOptions.workspace) : workspace,
        maxSteps: runOptions.maxSteps ?? config.limits?.maxSteps,
        nativeTools,
      });
    },
    createChat(chatOptions) {
      const m = model(chatOptions.model);
      sampling.model = m;
      const nativeTools = chatOptions.nativeTools ?? (m as { nativeTools?: boolean }).nativeTools === true;
      const chat = createChat(environment, {
        ...chatOptions,
        model: m,
        workspace: chatOptions.workspace ? realpathOrFail(chatOptions.workspace) : workspace,
        nativeTools,
      });
      if (chatOptions.mcp === false) return chat;
      void indexer.ensureIndexed();
      return withSend(chat, async (message, sendOptions) => {
        await indexer.ensureIndexed();
        return chat.send(message, sendOptions);
      });
    },
    callTool: telemetry
      ? (tool, args, callOptions = {}) =>
          telemetry.traceToolCall({ tool, arguments: args ?? {} }, (approval) =>
            callTool(environment, workspace, tool, args ?? {}, callOptions, approval),
          )
      : (tool, args, callOptions = {}) => callTool(environment, workspace, tool, args ?? {}, callOptions),
    indexMcpTools: (indexOptions = {}) => indexer.indexNow(indexOptions.connectTimeoutMs),
    createGateSession: (gateOptions = {}) => {
      const profile = gateOptions.profile ?? config.gate?.profile;
      const preload = gateOptions.preload ?? config.gate?.preload;
      const gate = createGateSession(environment, workspace, {
        ...(profile ? { profile } : {}),
        ...(preload ? { preload } : {}),
        ...(gateOptions.upstream ? { upstream: gateOptions.upstream } : {}),
        ...(gateOptions.upstreamRequests ? { upstreamRequests: gateOptions.upstreamRequests } : {}),
      });
      return afterMcpIndexed(gate, indexer.ensureIndexed);
    },
    reloadConfig(next) {
      const run = reloading.then(async () => {
        if (closed)
          throw new CapgateError("harness_closed", "This harness is closed; its config cannot be reloaded.");
        await checkConfigAgainstHarness(next, capabilityNames, next.path ?? "the capgate config");
        const diff = diffConfigs(current, next, mcp !== undefined);
        if (mcp && diff.added.length + diff.removed.length + diff.changed.length > 0) {
          await reloadMcpServers({ mcp, registry, marks, placing, next, diff });
          indexer.reset();
        }
        if (diff.applied)
          current = {
            ...current,
            config: withMcpServers(current.config, next.config.mcpServers),
            mcpServers: next.mcpServers,
            sandboxedServers: next.sandboxedServers,
          };
        const { applied: _, ...result } = diff;
        return result;
      });
      reloading = run.catch(() => undefined);
      return run;
    },
    async close() {
      if (closed) return;
      closed = true;
      await reloading;
      const results = await Promise.allSettled([resources.closeAll(), mcp?.close()]);
      // Where no pid namespace could hold configured servers, what they left behind goes by its mark.
      for (const mark of marks.values()) killMarkedProcesses(mark);
      store.close();
      // After the sessions: their last events are spans too.
      await telemetry?.shutdown().catch(() => undefined);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    },
  };
  return harness;
}

/** The telemetry the config and the OTEL_* variables ask for, started; undefined when off (the SDK is not loaded). */
async function configuredTelemetry(
  config: CapgateConfig,
  env: Record<string, string | undefined>,
): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(config.telemetry, env);
  return settings ? startTelemetry(settings) : undefined;
}

/**
 * The capabilities a harness registers, each with where it came from: the built-ins, the
 * given ones, then the config's plugins (resolved against the config file's directory) and
 * the option's (against the cwd). A plugin that fails to load is a problem, not an error.
 */
async function collectCapabilities(
  resolved: ResolvedConfig,
  options: HarnessOptions,
): Promise<{
  capabilities: CapabilitySet;
  capabilitySources: Map<string, CapabilitySource>;
  capabilityProblems: CapabilityLoadProblem[];
}> {
  const capabilities = new CapabilitySet();
  const capabilitySources = new Map<string, CapabilitySource>();
  for (const c of builtinCapabilities()) {
    capabilities.add(c);
    capabilitySources.set(c.manifest.name, { kind: "builtin" });
  }
  for (const c of options.capabilities ?? []) {
    capabilities.add(c);
    capabilitySources.set(c.manifest.name, { kind: "option" });
  }
  const taken = {
    has: (name: string) => capabilities.get(name) !== undefined,
    toolTaken: (tool: string) => capabilities.lookup(tool)?.capability.manifest.name,
  };
  const profileNames = Object.keys(resolved.profiles);
  const fromConfig = await loadCapabilityPlugins(
    resolved.config.capabilities ?? [],
    resolved.baseDir,
    taken,
    profileNames,
  );
  for (const p of fromConfig.loaded) {
    capabilities.add(p.capability);
    capabilitySources.set(p.capability.manifest.name, p.source);
  }
  const fromOptions = await loadCapabilityPlugins(
    options.capabilityPlugins ?? [],
    resolve(options.pluginBaseDir ?? process.cwd()),
    taken,
    profileNames,
  );
  for (const p of fromOptions.loaded) {
    capabilities.add(p.capability);
    capabilitySources.set(p.capability.manifest.name, p.source);
  }
  return {
    capabilities,
    capabilitySources,
    capabilityProblems: [...fromConfig.problems, ...fromOptions.problems],
  };
}

/** The workspace (real path, never the home directory) and the state dir (created, 0700). */
function placeHarness(
  resolved: ResolvedConfig,
  options: HarnessOptions,
  processEnv: Record<string, string | undefined>,
): { workspace: string; stateDir: string } {
  const { config } = resolved;
  const workspace = realpathOrFail(
    options.workspace ??
      (config.workspace ? resolveConfigPath(resolved.baseDir, config.workspace) : process.cwd()),
  );
  refuseHomeWorkspace(workspace, processEnv);
  const stateDir = resolve(options.stateDir ?? stateDirFor(config.stateDir, resolved.baseDir, processEnv));
  // The configured state directory, and the default one every sandbox mirrors its journal
  // to and every config loader recovers from ($CAPGATE_HOME, ~/.capgate).
  assertStateDirPlacement(workspace, stateDir);
  assertStateDirPlacement(workspace, stateDirFor(undefined, resolved.baseDir, processEnv));
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  return { workspace, stateDir };
}

/** A model by spec string, a given client as is, or the configured one; a clear error when there is none. */
function modelFactory(
  resolved: ResolvedConfig,
  processEnv: Record<string, string | undefined>,
): (spec?: string | ModelClient) => ModelClient {
  return (spec) => {
    if (spec !== undefined && typeof spec !== "string") return spec;
    const chosen = spec ?? resolved.config.model ?? processEnv.CAPGATE_MODEL;
    if (!chosen) {
      throw new CapgateError(
        "no_model",
        'No model is configured: pass --model openai:<model>, anthropic:<model> or scripted:<file>, or set "model" in capgate.config.json.',
        { property: "model" },
      );
    }
    return createModel(chosen, { cwd: resolved.baseDir });
  };
}

/** Where configured servers are placed: what sandboxing and containing them needs. */
interface ServerPlacing {
  workspace: string;
  stateDir: string;
  policy: PolicyConfig;
  toolEnv: Record<string, string | undefined>;
  processEnv: Record<string, string | undefined>;
}

/**
 * The pool's entries of the named configured servers: the sandboxed ones wrapped, each
 * started without workspace entries on PATH and contained; `marks` finds by server what
 * they leave behind where no pid namespace could hold them.
 */
async function placeServers(
  resolved: ResolvedConfig,
  names: readonly string[],
  placing: ServerPlacing,
): Promise<{ servers: McpServersMap; marks: Record<string, string> }> {
  const { workspace, stateDir } = placing;
  const chosen: McpServersMap = {};
  for (const name of names) chosen[name] = resolved.mcpServers[name] as McpServersMap[string];
  const sandboxed = (resolved.sandboxedServers ?? []).filter((name) => names.includes(name));
  const serverPath = hostPath(placing.processEnv.PATH, workspace);
  const contained = containServers(
    withServerHostPlace(
      await sandboxServers(chosen, sandboxed, {
        workspace,
        stateDir,
        policy: placing.policy,
        env: withHostPath(placing.toolEnv, workspace),
      }),
      serverPath,
      { sandboxed, stateDir },
    ),
    sandboxed,
    serverPath ?? placing.processEnv.PATH,
  );
  return { servers: contained.servers, marks: contained.byServer };
}

/**
 * The configured MCP servers' pool (undefined when none is configured), placed by
 * placeServers, with their cached tool lists searchable at once. Every later listing is
 * indexed too.
 */
async function startMcpPool(inputs: {
  resolved: ResolvedConfig;
  options: HarnessOptions;
  registry: Registry;
  placing: ServerPlacing;
  samplingModel: () => ModelClient | undefined;
}): Promise<{ mcp: McpPool | undefined; marks: Map<string, string> }> {
  const { resolved, options, registry, placing } = inputs;
  const names = Object.keys(resolved.mcpServers);
  if (names.length === 0) return { mcp: undefined, marks: new Map() };
  const placed = await placeServers(resolved, names, placing);
  const { workspace, stateDir } = placing;
  const mcp: McpPool = createNodeMcpPool(placed.servers, {
    stateDir,
    // Servers that work on files (filesystem, pdf) ask where: the workspace, and only it.
    roots: [{ uri: pathToFileURL(workspace).href, name: basename(workspace) || workspace }],
    onSampling: options.onSampling ?? modelSamplingHandler(inputs.samplingModel),
    ...(options.onElicitation ? { onElicitation: options.onElicitation } : {}),
    // Every listing the pool takes (the first, one that outlasted the indexing budget, one
    // after tools/list_changed) is indexed: search offers exactly what calls can reach. A
    // server a reload removed is not indexed again.
    onEvent: (event) => {
      if (event.type === "tools_listed" && Object.hasOwn(mcp.servers, event.server))
        registerMcp(registry, event.server, event.tools, mcp.serverInstructions(event.server));
    },
  });
  // Cached tool lists make MCP tools searchable before any server is started.
  for (const entry of await mcp.knownTools())
    registerMcp(registry, entry.server, entry.tools, mcp.serverInstructions(entry.server));
  return { mcp, marks: new Map(Object.entries(placed.marks)) };
}

/**
 * A reload's MCP part: added and changed servers placed as at start, the pool given the
 * new map (unchanged servers keep their placed entries, so their running sessions match),
 * what removed and changed servers left behind killed by their marks, and search updated:
 * their old tools gone, added servers' cached lists in at once.
 */
async function reloadMcpServers(inputs: {
  mcp: McpPool;
  registry: Registry;
  marks: Map<string, string>;
  placing: ServerPlacing;
  next: ResolvedConfig;
  diff: ConfigReloadResult;
}): Promise<void> {
  const { mcp, registry, marks, next, diff } = inputs;
  const placed = await placeServers(next, [...diff.added, ...diff.changed], inputs.placing);
  const servers: McpServersMap = {};
  for (const name of Object.keys(next.mcpServers))
    servers[name] = (placed.servers[name] ?? mcp.servers[name]) as McpServersMap[string];
  await mcp.reconfigure(servers, diff.changed);
  for (const name of [...diff.removed, ...diff.changed]) {
    const mark = marks.get(name);
    if (mark) killMarkedProcesses(mark);
    marks.delete(name);
    registry.unregisterMcpServer(name);
  }
  for (const [name, mark] of Object.entries(placed.marks)) marks.set(name, mark);
  for (const name of [...diff.added, ...diff.changed]) {
    const cached = await mcp.cachedTools(name);
    if (cached) registerMcp(registry, name, cached, undefined);
  }
}

/** A config with another mcpServers section (none when `servers` is undefined). */
function withMcpServers(config: CapgateConfig, servers: CapgateConfig["mcpServers"]): CapgateConfig {
  const { mcpServers: _, ...rest } = config;
  return servers === undefined ? rest : { ...rest, mcpServers: servers };
}

/**
 * MCP tools become searchable once their lists are known: from the disk cache at once,
 * and from the servers themselves (short connect timeout) the first time a session that
 * can reach MCP starts. Later sessions reuse the result.
 */
function mcpIndexer(
  mcp: McpPool | undefined,
  registry: Registry,
): {
  ensureIndexed: () => Promise<unknown>;
  indexNow: (connectTimeoutMs?: number) => Promise<McpIndexResult[]>;
  /** The servers changed: the next ensureIndexed lists again (unchanged servers answer from their kept lists). */
  reset: () => void;
} {
  let indexing: Promise<McpIndexResult[]> | undefined;
  const indexMcp = async (connectTimeoutMs?: number): Promise<McpIndexResult[]> => {
    if (!mcp) return [];
    const results: McpIndexResult[] = [];
    for (const entry of await mcp.listAllTools(connectTimeoutMs === undefined ? {} : { connectTimeoutMs })) {
      // Removed by a reload while this listing ran: not searchable again.
      if (!Object.hasOwn(mcp.servers, entry.server)) continue;
      // A listing that outlasted the budget and completed since (while other servers were
      // awaited) is already indexed from its tools_listed event: a cached or empty entry
      // must not replace it.
      const listed = entry.source === "live" ? undefined : mcp.listedTools(entry.server);
      const outcome = registerMcp(
        registry,
        entry.server,
        listed ?? entry.tools,
        mcp.serverInstructions(entry.server),
      );
      results.push({
        server: entry.server,
        tools: outcome.tools,
        // What the client's own listing left out plus what the registry could not index (normally none).
        skipped: outcome.skipped + (entry.skipped?.length ?? 0),
        source: entry.source,
        ...(entry.error ? { error: entry.error } : {}),
      });
    }
    return results;
  };
  return {
    ensureIndexed: () => {
      if (!mcp) return Promise.resolve();
      indexing ??= indexMcp(MCP_INDEX_TIMEOUT_MS).catch(() => []);
      return indexing;
    },
    async indexNow(connectTimeoutMs) {
      const results = await indexMcp(connectTimeoutMs);
      indexing = Promise.resolve(results);
      return results;
    },
    reset: () => {
      indexing = undefined;
    },
  };
}

/** A gate session whose handlers and preload wait for the MCP tools to be indexed first. */
function afterMcpIndexed(gate: GateSession, ensureIndexed: () => Promise<unknown>): GateSession {
  void ensureIndexed();
  const handlers = Object.fromEntries(
    Object.entries(gate.handlers).map(([name, handler]) => [
      name,
      async (args: Record<string, unknown>, extra: GateCallExtra) => {
        await ensureIndexed();
        return handler(args, extra);
      },
    ]),
  ) as GateSession["handlers"];
  return {
    ...gate,
    handlers,
    loaded: gate.loaded,
    close: gate.close,
    preload: async () => {
      await ensureIndexed();
      await gate.preload();
    },
  };
}

/** How long a first MCP connect may take when indexing tools for search. */
const MCP_INDEX_TIMEOUT_MS = 5_000;

/** The same chat with another `send` (getters stay live: no spreading). */
function withSend(chat: Chat, send: Chat["send"]): Chat {
  return {
    get runId() {
      return chat.runId;
    },
    get profile() {
      return chat.profile;
    },
    send,
    setProfile: (name) => chat.setProfile(name),
    loaded: () => chat.loaded(),
    loadedSignatures: () => chat.loadedSignatures(),
    subscribe: (listener) => chat.subscribe(listener),
    close: () => chat.close(),
  };
}

/** A server's tools into search, with its `instructions` (when connected) as context for them. */
function registerMcp(
  registry: Registry,
  server: string,
  tools: readonly unknown[] | undefined,
  instructions: string | undefined,
): { tools: number; skipped: number } {
  if (!tools) return { tools: 0, skipped: 0 };
  const registration = registry.registerMcpServer(server, tools, instructions ? { instructions } : {});
  return { tools: registration.tools.length, skipped: registration.skipped.length };
}

function pickLimits(limits: CapgateConfig["limits"]): Partial<ToolLimits> {
  if (!limits) return {};
  const out: Partial<ToolLimits> = {};
  if (limits.timeoutMs !== undefined) out.timeoutMs = limits.timeoutMs;
  if (limits.outputBytes !== undefined) out.outputBytes = limits.outputBytes;
  if (limits.readBytes !== undefined) out.readBytes = limits.readBytes;
  if (limits.fetchBytes !== undefined) out.fetchBytes = limits.fetchBytes;
  return out;
}

function realpathOrFail(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    throw new CapgateError("invalid_workspace", `The workspace ${path} does not exist.`, {
      property: "workspace",
    });
  }
}

/**
 * Configured stdio servers are started with a PATH that has no entry inside the workspace
 * (`hostPath`), unless their entry sets PATH itself: `"command": "npx"` must not find the
 * model's `node_modules/.bin/npx` when capgate itself was started from an npm script.
 *
 * And, unless sandboxed or given a `cwd`, in a directory of their own under the state dir
 * (empty, outside the workspace), not capgate's working directory: `npx`, `python -m`,
 * `uv run` and node's module lookup load code relative to where they start, and the
 * workspace is where the model writes (`node_modules/.bin/mcp-server-github` planted there
 * ran on the host when `npx -y @modelcontextprotocol/server-github` started). A `cwd` in the
 * entry is the operator's choice and is kept.
 */
function withServerHostPlace(
  servers: McpServersMap,
  path: string | undefined,
  place: { sandboxed: readonly string[]; stateDir: string },
): McpServersMap {
  const out: McpServersMap = {};
  for (const [name, entry] of Object.entries(servers)) {
    const stdio = entry as McpStdioServerConfig;
    if (typeof stdio.command !== "string") {
      out[name] = entry;
      continue;
    }
    let next: McpStdioServerConfig = stdio;
    if (path !== undefined && stdio.env?.PATH === undefined)
      next = { ...next, env: { ...(stdio.env ?? {}), PATH: path } };
    if (stdio.cwd === undefined && !place.sandboxed.includes(name)) {
      const cwd = join(place.stateDir, "mcp-servers", name.replace(/[^A-Za-z0-9._-]/g, "_"));
      mkdirSync(cwd, { recursive: true, mode: 0o700 });
      next = { ...next, cwd };
    }
    out[name] = next;
  }
  return out;
}
