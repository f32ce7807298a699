import { CapgateError, stableHash } from "@capgate/schema";
import { CallChecks } from "./call-checks.js";
import {
  enabledServerNames,
  type McpServerConfig,
  type McpServersMap,
  parseMcpServersConfig,
  serverMaxTotalTimeoutMs,
  serverTimeoutMs,
} from "./config.js";
import { McpClientError, type McpErrorCode } from "./errors.js";
import { type McpAuthStore, memoryAuthStore } from "./oauth/auth-store.js";
import type { InteractiveAuthorization } from "./oauth/oauth-provider.js";
import type {
  ElicitationHandler,
  McpPoolEvent,
  McpRoot,
  McpServerTools,
  SamplingHandler,
  ToolListCache,
} from "./pool-types.js";
import { DEFAULT_OUTPUT_BYTES, renderCallToolResult, type ToolResult } from "./render.js";
import {
  MAX_LISTED_ITEMS,
  type McpPromptInfo,
  type McpResourceListing,
  renderPrompt,
  renderResourceContents,
  toPromptInfo,
  toResourceInfo,
  toTemplateInfo,
} from "./server-features.js";
import type { McpProgress, McpSession } from "./session.js";
import { SessionSet } from "./session-set.js";
import { type McpToolApproval, toolApprovalOverride } from "./tool-filter.js";
import { filterTools, namesOf } from "./tool-filtering.js";
import { ToolIndex } from "./tool-index.js";
import { type McpToolInfo, normalizeToolList, type SkippedTool } from "./tool-list.js";
import type { StdioTransportFactory } from "./transport.js";

export interface McpPoolOptions {
  /** Sent in initialize (default `{ name: "capgate", version: "0" }`). */
  clientInfo?: { name: string; version: string };
  /** Cap on a call's summary and kept content, in UTF-8 bytes (default 64 KiB). */
  outputBytes?: number;
  /** Cap on one binary content block passed on unchanged, in base64 characters (default 16 MiB). */
  binaryBytes?: number;
  /** Spawns `command` servers; pass `createStdioTransport` from `@capgate/mcp-client/stdio`. */
  stdio?: StdioTransportFactory;
  /** Persists tool lists across processes (see ToolListCache). */
  toolCache?: ToolListCache;
  /** Connect budget per server in `listAllTools` (default 5 000 ms). */
  connectTimeoutMs?: number;
  /** Called only for servers whose entry says `"sampling": true`; others are refused. */
  onSampling?: SamplingHandler;
  onElicitation?: ElicitationHandler;
  onEvent?: (event: McpPoolEvent) => void;
  /** OAuth state of `url` servers with `oauth` (default: in memory). Node hosts: `fileAuthStore`. */
  authStore?: McpAuthStore;
  /** A person who can complete logins (`capgate mcp login`); without it a needed login is `mcp_auth_required`. */
  interactiveAuth?: InteractiveAuthorization;
  /** Roots servers may ask for (`roots/list`): the host's workspace. Without them the capability is not declared. */
  roots?: readonly McpRoot[];
  /** Upstream sessions of one server open at once for scopes (one per gate session; default 16). */
  maxSessionsPerServer?: number;
}

export interface McpCallOptions {
  signal?: AbortSignal;
  /** Overrides the server's `timeoutMs` for this call (each progress report restarts it). */
  timeoutMs?: number;
  /** The server's progress reports (`notifications/progress`) while the call runs. */
  onProgress?: (progress: McpProgress) => void;
  /** The call comes from an MCP App the host renders: tools for the app only may be called too. */
  app?: boolean;
}

/** A configured server's resources, prompts and instructions, as a pool (or a scope of one) reaches them. */
export interface McpServerFeatures {
  /** The `instructions` the server sent at initialize (untrusted text, as sent), when connected. */
  serverInstructions(server: string): string | undefined;
  /** Whether a connected server declared resources and prompts at initialize (undefined: not connected). */
  serverOffers(server: string): { resources: boolean; prompts: boolean } | undefined;
  /** Its resources and templates (`resources/list`, `resources/templates/list`), bounded and sanitised. */
  listResources(server: string, options?: McpCallOptions): Promise<McpResourceListing>;
  /** `resources/read`, bounded like a tool result; `content` holds one embedded `resource` block per item. */
  readResource(server: string, uri: string, options?: McpCallOptions): Promise<ToolResult>;
  listPrompts(server: string, options?: McpCallOptions): Promise<McpPromptInfo[]>;
  /** `prompts/get`, bounded like a tool result; `data.messages` keeps the messages. */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
    options?: McpCallOptions,
  ): Promise<ReturnType<typeof renderPrompt>>;
}

/** Server-initiated requests answered differently in one scope (a gate session asking its own client). */
export interface McpScopeOptions {
  onElicitation?: ElicitationHandler;
  onSampling?: SamplingHandler;
}

/**
 * A pool as one gate session sees it: the pool's tool lists and admission, and for every
 * server not marked `share: true` an upstream session of its own, opened on first use and
 * closed by `close()` — so one client's browser page or server state is never another's.
 */
export interface McpPoolScope extends McpCaller, McpServerFeatures {
  /** The pool's admitted tools of a server (the same list for every scope). */
  listTools(server: string, options?: McpCallOptions): Promise<McpToolInfo[]>;
  refusalOf(server: string, tool: string, options?: McpCallOptions): Promise<string | undefined>;
  /** pid of this scope's own stdio session of a server (undefined for shared servers or none yet). */
  pidOf(server: string): Promise<number | undefined>;
  close(): Promise<void>;
}

/** What the fallthrough needs from a pool; McpPool implements it. */
export interface McpCaller {
  readonly servers: McpServersMap;
  hasTool(server: string, tool: string, options?: McpCallOptions): Promise<boolean>;
  /**
   * Why the server entry's `tools` filter keeps out the tool a call names (e.g. `tools.deny
   * matches it ("*_delete_*")`), or undefined: so a bare name is refused as excluded, not unknown.
   */
  excludedBy?(server: string, tool: string, options?: McpCallOptions): Promise<string | undefined>;
  /** The server entry's `approval` override for the tool a call names (`ask`, `never`), or undefined. */
  approvalOverride?(
    server: string,
    tool: string,
    options?: McpCallOptions,
  ): Promise<McpToolApproval | undefined>;
  /** Throws `invalid_arguments` when the arguments fail the tool's inputSchema (so nobody is asked to approve a call that cannot go out). */
  checkArguments?(server: string, tool: string, args: Record<string, unknown>): Promise<void>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options?: McpCallOptions,
  ): Promise<ToolResult>;
}

interface ToolListEntry {
  tools?: McpToolInfo[];
  stale: boolean;
  /** Bumped by tools/list_changed, so a listing that raced a change is not taken as fresh. */
  generation: number;
  fetching?: Promise<McpToolInfo[]>;
  /** What the last listing left out. */
  skipped?: SkippedTool[];
  /** The last listing by the names calls use: what may be called. */
  index?: ToolIndex;
  /** Tools of the last listing for the MCP App only (never offered to the model). */
  appTools?: McpToolInfo[];
}

/**
 * One lazily connected session per configured server, reused by every call. Tool lists are
 * listed once (all pages) and cached until the server says they changed. A crash fails the
 * pending calls at once with an error naming the server; the next call reconnects; nothing
 * is replayed. `close()` ends every session (for stdio servers, their whole process group).
 */
export class McpPool implements McpCaller, McpServerFeatures {
  #servers: McpServersMap;
  private readonly options: McpPoolOptions;
  /** The sessions every caller shares (and through which tool lists are taken). */
  private readonly shared: SessionSet;
  private readonly toolLists = new Map<string, ToolListEntry>();
  /** Upstream sessions scopes hold per server (open or opening), against `maxSessionsPerServer`. */
  private readonly scoped = new Map<string, number>();
  /** Each scope's own sessions, so a reconfigure can end a changed server's sessions in every scope. */
  private readonly scopes = new Map<McpPoolScope, SessionSet>();
  private closed = false;
  private readonly closing = new AbortController();
  /** OAuth state: the host's store, or one in memory shared by this pool's reconnects. */
  readonly authStore: McpAuthStore;
  private readonly checks: CallChecks;

  /** Validates `servers` (throws McpConfigError naming the bad property). */
  constructor(servers: McpServersMap, options: McpPoolOptions = {}) {
    this.#servers = parseMcpServersConfig(servers);
    this.options = options;
    this.authStore = options.authStore ?? memoryAuthStore();
    this.checks = new CallChecks((warning) => this.emit({ type: "schema_warning", ...warning }));
    this.shared = new SessionSet(
      (server) => this.openSession(server, {}),
      (server, session) => this.emitDisconnected(server, session),
      "MCP pool",
    );
  }

  /** The server entries in force (replaced as a whole by `reconfigure`). */
  get servers(): McpServersMap {
    return this.#servers;
  }

  /**
   * Put a new servers map in force without a restart: servers missing from `next` and the
   * ones named in `restart` lose their sessions (shared and every scope's; stdio servers'
   * process groups end) and their tool lists, and start again lazily from their new entry;
   * every other server keeps its sessions and lists. Which entries count as changed is the
   * caller's call: a host that rewrites entries (sandbox wrapping, marks) compares what the
   * operator wrote, not what it derived. Validates `next` first (McpConfigError, nothing
   * changed). Resolves once the dropped sessions are closed.
   */
  async reconfigure(next: McpServersMap, restart: readonly string[] = []): Promise<void> {
    if (this.closed) throw new McpClientError("mcp_unavailable", "This MCP pool is closed.");
    const parsed = parseMcpServersConfig(next);
    const dropped = Object.keys(this.#servers).filter(
      (name) => !Object.hasOwn(parsed, name) || restart.includes(name),
    );
    // Dropped from the sets before the new map is in force, so no call reaches an old session with a new entry.
    const closing = dropped.flatMap((server) => [
      this.shared.drop(server),
      ...[...this.scopes.values()].map((own) => own.drop(server)),
    ]);
    for (const server of dropped) this.toolLists.delete(server);
    this.#servers = parsed;
    await Promise.all(closing);
  }

  /** Enabled server names in config order (the first takes bare tool names). */
  serverNames(): string[] {
    return enabledServerNames(this.servers);
  }

  private config(server: string): McpServerConfig {
    const config = Object.hasOwn(this.#servers, server) ? this.#servers[server] : undefined;
    if (config && config.enabled !== false) return config;
    const names = this.serverNames();
    throw new CapgateError(
      "unknown_tool",
      `No enabled MCP server named '${server}' (configured: ${names.length ? names.join(", ") : "none"}).`,
      { property: "server" },
    );
  }

  private emit(event: McpPoolEvent): void {
    this.options.onEvent?.(event);
  }

  private emitDisconnected(server: string, session: McpSession): void {
    this.emit({
      type: "disconnected",
      server,
      reason: session.transport.exitReason?.() ?? "connection closed",
    });
  }

  private openSession(server: string, scope: McpScopeOptions): Promise<McpSession> {
    if (this.closed) throw new McpClientError("mcp_unavailable", "This MCP pool is closed.", { server });
    const config = this.config(server);
    // The session module brings the SDK's client (and zod): loaded on the first connection,
    // so a pool whose servers are never reached (a built-in tool call) costs no SDK.
    return import("./session.js").then(({ McpSession }) =>
      McpSession.open(server, config, {
        clientInfo: this.options.clientInfo ?? { name: "capgate", version: "0" },
        stdio: this.options.stdio,
        onSampling: scope.onSampling ?? this.options.onSampling,
        onElicitation: scope.onElicitation ?? this.options.onElicitation,
        onEvent: this.options.onEvent,
        authStore: this.authStore,
        interactiveAuth: this.options.interactiveAuth,
        onToolListChanged: () => this.onToolListChanged(server),
        signal: this.closing.signal,
        roots: this.options.roots,
      }),
    );
  }

  /** The shared live session of a server, connecting on first use (concurrent callers share one connect). */
  async connect(server: string): Promise<McpSession> {
    this.config(server);
    return this.shared.connect(server);
  }

  private onToolListChanged(server: string): void {
    const entry = this.toolLists.get(server);
    if (entry) {
      entry.stale = true;
      entry.generation++;
    }
    // Refresh now when someone listens (search re-indexing); otherwise on the next listTools.
    if (this.options.onEvent)
      this.refreshAfterChange(server).then(
        (tools) => this.emit({ type: "tools_changed", server, tools }),
        () => {},
      );
  }

  /** A listing that was already in flight when the change came is stale: list again. */
  private async refreshAfterChange(server: string): Promise<McpToolInfo[]> {
    let tools = await this.listTools(server);
    for (let i = 0; i < 3 && this.toolLists.get(server)?.stale; i++) tools = await this.listTools(server);
    return tools;
  }

  /** The server's tools (all pages), cached until tools/list_changed or `refresh`. */
  async listTools(
    server: string,
    options: McpCallOptions & { refresh?: boolean } = {},
  ): Promise<McpToolInfo[]> {
    const config = this.config(server);
    let entry = this.toolLists.get(server);
    if (!entry) {
      entry = { stale: true, generation: 0 };
      this.toolLists.set(server, entry);
    }
    if (entry.tools && !entry.stale && !options.refresh) return entry.tools;
    if (entry.fetching) return entry.fetching;
    const current = entry;
    const generation = current.generation;
    const fetching = (async () => {
      const session = await this.connect(server);
      const listed = await session.listToolsRaw(options.timeoutMs ?? serverTimeoutMs(config), options.signal);
      const normalized = normalizeToolList(server, listed.tools);
      // The server was removed or restarted while listing: this list belongs to the old entry
      // (still filtered by the config it was listed under).
      if (this.toolLists.get(server) !== current) return filterTools(config, normalized.tools).kept;
      const { skipped } = normalized;
      // The config's filter applies here, once: search, load, listings and calls all read this list.
      const { kept: tools, excluded } = filterTools(config, normalized.tools);
      const { kept: appTools, excluded: excludedApp } = filterTools(config, normalized.appTools);
      // What was not read is reported like a refused tool, so the operator sees why it is missing.
      if (listed.cut) skipped.push({ server, name: "(the rest of the list)", reason: listed.cut });
      if (skipped.length > 0) this.emit({ type: "tools_skipped", server, skipped });
      current.skipped = skipped;
      current.tools = tools;
      current.index = new ToolIndex(server, tools, skipped, appTools, [...excluded, ...excludedApp]);
      current.appTools = appTools;
      this.emit({ type: "tools_listed", server, tools });
      current.stale = current.generation !== generation;
      await this.options.toolCache?.save(server, configHash(config), tools).catch(() => {});
      return tools;
    })();
    current.fetching = fetching;
    try {
      return await fetching;
    } finally {
      if (current.fetching === fetching) current.fetching = undefined;
    }
  }

  /**
   * The `instructions` a connected server sent at initialize (untrusted: for search, which
   * sanitises it like a tool description); undefined when it sent none or is not connected.
   */
  serverInstructions(server: string): string | undefined {
    return this.shared.current(server)?.instructions;
  }

  serverOffers(server: string): { resources: boolean; prompts: boolean } | undefined {
    return offers(this.shared.current(server));
  }

  /** True when the server lists a tool callable by this name and capgate admits it. */
  async hasTool(server: string, tool: string, options: McpCallOptions = {}): Promise<boolean> {
    return (await this.index(server, options)).find(tool, options.app === true) !== undefined;
  }

  async excludedBy(server: string, tool: string, options: McpCallOptions = {}): Promise<string | undefined> {
    return (await this.index(server, options)).exclusion(tool);
  }

  /**
   * The entry's `approval` override for the tool a call names, matched against its own and
   * callable names once the listing resolves which tool that is (undefined for no match or no such tool).
   */
  async approvalOverride(
    server: string,
    tool: string,
    options: McpCallOptions = {},
  ): Promise<McpToolApproval | undefined> {
    const config = this.config(server);
    if (!config.approval) return undefined;
    const info = (await this.index(server, options)).find(tool, options.app === true);
    return toolApprovalOverride(config, info ? namesOf(info) : { name: tool, callable: tool });
  }

  /**
   * The server's tools for the MCP App only (`_meta.ui.visibility` without "model"), for a
   * host that renders the app: callable with `{ app: true }`, never listed for the model.
   */
  async appTools(server: string, options: McpCallOptions = {}): Promise<McpToolInfo[]> {
    await this.index(server, options);
    return this.toolLists.get(server)?.appTools ?? [];
  }

  /**
   * The tools of the server's latest live listing in this pool, or undefined when none has
   * completed yet. A listing that outlasted a caller's budget may complete afterwards: what
   * it found is newer than any cache.
   */
  listedTools(server: string): McpToolInfo[] | undefined {
    return this.toolLists.get(server)?.tools;
  }

  /** Tools the last listing of a server left out (hostile or malformed names, schemas that cannot check arguments). */
  skippedTools(server: string): SkippedTool[] {
    return this.toolLists.get(server)?.skipped ?? [];
  }

  /**
   * The server's admitted tools by name, from its current list (or, when a refresh after
   * tools/list_changed fails, the last one). Without any list nothing can be called: a
   * tool is called only once capgate has seen it listed and admitted it.
   */
  private async index(server: string, options: McpCallOptions): Promise<ToolIndex> {
    const entry = this.toolLists.get(server);
    if (entry?.index && !entry.stale) return entry.index;
    try {
      await this.listTools(server, options);
    } catch (error) {
      const last = this.toolLists.get(server)?.index;
      if (last) return last;
      if (!(error instanceof McpClientError)) throw error;
      throw new McpClientError(
        error.code as McpErrorCode,
        `${error.message.replace(/\.?$/, ".")} capgate calls only tools it has seen listed, so no tool of '${server}' was called.`,
        { server, cause: error, ...(error.rpcCode !== undefined ? { rpcCode: error.rpcCode } : {}) },
      );
    }
    return this.toolLists.get(server)?.index as ToolIndex;
  }

  /**
   * Why capgate refuses to call a tool by this name although the server may have it (a
   * name or schema the admission rule refuses), or undefined: admitted, or never listed.
   */
  async refusalOf(server: string, tool: string, options: McpCallOptions = {}): Promise<string | undefined> {
    return (await this.index(server, options)).refusal(tool);
  }

  /** Throws `unknown_tool` for a tool that is not admitted, `invalid_arguments` for arguments its inputSchema refuses. */
  async checkArguments(server: string, tool: string, args: Record<string, unknown>): Promise<void> {
    this.config(server);
    this.checks.checkArguments((await this.index(server, {})).require(tool), args);
  }

  /**
   * Call one tool and render its result as `{ success, summary, data }` (summary capped to
   * `outputBytes`, head and tail kept). Only tools of the server's admitted list are called
   * (`unknown_tool` otherwise, saying why), with arguments valid against their inputSchema
   * (`invalid_arguments`); nothing else is sent. Transport faults throw McpClientError
   * naming the server: `mcp_timeout`, `mcp_closed`, `mcp_connect_failed`, `mcp_rpc_error`,
   * `mcp_aborted`.
   */
  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown> = {},
    options: McpCallOptions = {},
  ): Promise<ToolResult> {
    return this.callVia(this.shared, server, tool, args, options);
  }

  /** A call through one set of sessions (the shared one, or a scope's). */
  private async callVia(
    sessions: SessionSet,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions,
  ): Promise<ToolResult> {
    const config = this.config(server);
    // The callable name (whitespace mapped to `_`) goes out as the server's own name.
    const info = (await this.index(server, options)).require(tool, options.app === true);
    this.checks.checkArguments(info, args);
    const session = sessions.current(server) ?? (await sessions.connect(server));
    const timeoutMs = options.timeoutMs ?? serverTimeoutMs(config);
    const raw = await session.callTool(info.name, args, {
      timeoutMs,
      maxTotalTimeoutMs: serverMaxTotalTimeoutMs(config, timeoutMs),
      signal: options.signal,
      onProgress: options.onProgress,
    });
    const result = renderCallToolResult(raw, {
      server,
      tool,
      outputBytes: this.options.outputBytes ?? DEFAULT_OUTPUT_BYTES,
      ...(this.options.binaryBytes !== undefined ? { binaryBytes: this.options.binaryBytes } : {}),
    });
    return this.checks.checkResult(info, result);
  }

  listResources(server: string, options: McpCallOptions = {}): Promise<McpResourceListing> {
    return this.listResourcesVia(this.shared, server, options);
  }

  readResource(server: string, uri: string, options: McpCallOptions = {}): Promise<ToolResult> {
    return this.readResourceVia(this.shared, server, uri, options);
  }

  listPrompts(server: string, options: McpCallOptions = {}): Promise<McpPromptInfo[]> {
    return this.listPromptsVia(this.shared, server, options);
  }

  getPrompt(server: string, name: string, args: Record<string, string>, options: McpCallOptions = {}) {
    return this.getPromptVia(this.shared, server, name, args, options);
  }

  private async featureSession(
    sessions: SessionSet,
    server: string,
    feature: "resources" | "prompts",
  ): Promise<{ session: McpSession; timeoutMs: number }> {
    const config = this.config(server);
    const session = sessions.current(server) ?? (await sessions.connect(server));
    if (!session.serverCapabilities?.[feature])
      throw new McpClientError(
        "mcp_unavailable",
        `MCP server '${server}' offers no ${feature} (it did not declare the ${feature} capability at initialize).`,
        { server },
      );
    return { session, timeoutMs: serverTimeoutMs(config) };
  }

  private async listResourcesVia(
    sessions: SessionSet,
    server: string,
    options: McpCallOptions,
  ): Promise<McpResourceListing> {
    const { session, timeoutMs } = await this.featureSession(sessions, server, "resources");
    const t = options.timeoutMs ?? timeoutMs;
    const listed = await session.listResources(t, MAX_LISTED_ITEMS, options.signal);
    // Templates are optional for a server with resources: one that has none may answer -32601.
    const templates = await session
      .listResourceTemplates(t, MAX_LISTED_ITEMS, options.signal)
      .catch((error: unknown) => {
        if ((error as { rpcCode?: unknown } | null)?.rpcCode === -32601) return { items: [], complete: true };
        throw error;
      });
    return {
      resources: listed.items.flatMap((r) => toResourceInfo(server, r) ?? []),
      templates: templates.items.flatMap((r) => toTemplateInfo(server, r) ?? []),
      complete: listed.complete && templates.complete,
    };
  }

  private async readResourceVia(
    sessions: SessionSet,
    server: string,
    uri: string,
    options: McpCallOptions,
  ): Promise<ToolResult> {
    const { session, timeoutMs } = await this.featureSession(sessions, server, "resources");
    const raw = await session.readResource(uri, options.timeoutMs ?? timeoutMs, options.signal);
    return renderResourceContents(server, uri, raw, this.caps());
  }

  private async listPromptsVia(
    sessions: SessionSet,
    server: string,
    options: McpCallOptions,
  ): Promise<McpPromptInfo[]> {
    const { session, timeoutMs } = await this.featureSession(sessions, server, "prompts");
    const listed = await session.listPrompts(
      options.timeoutMs ?? timeoutMs,
      MAX_LISTED_ITEMS,
      options.signal,
    );
    return listed.items.flatMap((p) => toPromptInfo(server, p) ?? []);
  }

  private async getPromptVia(
    sessions: SessionSet,
    server: string,
    name: string,
    args: Record<string, string>,
    options: McpCallOptions,
  ) {
    const { session, timeoutMs } = await this.featureSession(sessions, server, "prompts");
    const raw = await session.getPrompt(name, args, options.timeoutMs ?? timeoutMs, options.signal);
    return renderPrompt(server, name, raw, this.caps());
  }

  private caps(): { outputBytes: number; binaryBytes?: number } {
    return {
      outputBytes: this.options.outputBytes ?? DEFAULT_OUTPUT_BYTES,
      ...(this.options.binaryBytes !== undefined ? { binaryBytes: this.options.binaryBytes } : {}),
    };
  }

  /**
   * A view of this pool for one gate session (see McpPoolScope): same tool lists and
   * checks; its own upstream session of each server not marked `share: true`, closed with
   * the scope. Server-initiated requests of those sessions go to `options`' handlers when given.
   */
  scope(options: McpScopeOptions = {}): McpPoolScope {
    if (this.closed) throw new McpClientError("mcp_unavailable", "This MCP pool is closed.");
    const own = new SessionSet(
      (server) => this.openScoped(server, options),
      (server, session) => {
        this.scoped.set(server, Math.max(0, (this.scoped.get(server) ?? 1) - 1));
        this.emitDisconnected(server, session);
      },
      "gate session's MCP scope",
    );
    const via = (server: string): SessionSet => (this.config(server).share === true ? this.shared : own);
    const pool = this;
    const scope: McpPoolScope = {
      get servers() {
        return pool.servers;
      },
      hasTool: (server, tool, options) => this.hasTool(server, tool, options),
      excludedBy: (server, tool, options) => this.excludedBy(server, tool, options),
      approvalOverride: (server, tool, options) => this.approvalOverride(server, tool, options),
      checkArguments: (server, tool, args) => this.checkArguments(server, tool, args),
      callTool: (server, tool, args, callOptions = {}) =>
        this.callVia(via(server), server, tool, args, callOptions),
      listTools: (server, o) => this.listTools(server, o),
      refusalOf: (server, tool, o) => this.refusalOf(server, tool, o),
      serverInstructions: (server) =>
        via(server).current(server)?.instructions ?? this.serverInstructions(server),
      serverOffers: (server) => offers(via(server).current(server)) ?? this.serverOffers(server),
      listResources: (server, o = {}) => this.listResourcesVia(via(server), server, o),
      readResource: (server, uri, o = {}) => this.readResourceVia(via(server), server, uri, o),
      listPrompts: (server, o = {}) => this.listPromptsVia(via(server), server, o),
      getPrompt: (server, name, args, o = {}) => this.getPromptVia(via(server), server, name, args, o),
      pidOf: (server) => own.pidOf(server),
      close: async () => {
        this.scopes.delete(scope);
        await own.close();
      },
    };
    this.scopes.set(scope, own);
    return scope;
  }

  /** A scope's own session of a server, within `maxSessionsPerServer`. */
  private async openScoped(server: string, options: McpScopeOptions): Promise<McpSession> {
    const max = this.options.maxSessionsPerServer ?? DEFAULT_MAX_SESSIONS_PER_SERVER;
    const open = this.scoped.get(server) ?? 0;
    if (open >= max)
      throw new McpClientError(
        "mcp_unavailable",
        `MCP server '${server}' already has ${open} sessions open, one per gate session (at most ${max}); close idle sessions, or set "share": true in mcpServers.${server} if the server keeps no per-client state.`,
        { server },
      );
    this.scoped.set(server, open + 1);
    try {
      return await this.openSession(server, options);
    } catch (error) {
      this.scoped.set(server, Math.max(0, (this.scoped.get(server) ?? 1) - 1));
      throw error;
    }
  }

  /** Tool lists known without connecting: memory first, then the ToolListCache. */
  async knownTools(): Promise<McpServerTools[]> {
    return Promise.all(
      this.serverNames().map(async (server): Promise<McpServerTools> => {
        const tools = this.toolLists.get(server)?.tools;
        if (tools) return { server, tools, source: "live" };
        const cached = await this.cachedTools(server);
        return cached ? { server, tools: cached, source: "cache" } : { server, tools: [], source: "none" };
      }),
    );
  }

  /** The ToolListCache's list for a server's current config entry, if any. */
  async cachedTools(server: string): Promise<McpToolInfo[] | undefined> {
    const cache = this.options.toolCache;
    // A server a reconfigure removed while it was being listed has no list any more.
    if (!cache || !Object.hasOwn(this.#servers, server)) return undefined;
    const config = this.config(server);
    const tools = await cache.load(server, configHash(config)).catch(() => undefined);
    return tools && filterTools(config, tools).kept;
  }

  /**
   * Every enabled server's tools for search indexing: live where the server answers within
   * `connectTimeoutMs`, else the cached list, else none — never throws. A slow connect keeps
   * going in the background and serves later calls.
   */
  async listAllTools(options: { connectTimeoutMs?: number } = {}): Promise<McpServerTools[]> {
    const budget = options.connectTimeoutMs ?? this.options.connectTimeoutMs ?? 5_000;
    return Promise.all(
      this.serverNames().map(async (server): Promise<McpServerTools> => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const listing = this.listTools(server);
          // If the budget wins the race, the listing's later failure is expected, not unhandled.
          listing.catch(() => {});
          const tools = await Promise.race([
            listing,
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`MCP server '${server}' did not list its tools within ${budget} ms`)),
                budget,
              );
            }),
          ]);
          const skipped = this.skippedTools(server);
          return { server, tools, source: "live", ...(skipped.length > 0 ? { skipped } : {}) };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          const cached = await this.cachedTools(server);
          // The listing may have completed while the cache was read: live beats the cache.
          const listed = this.listedTools(server);
          if (listed) {
            const skipped = this.skippedTools(server);
            return { server, tools: listed, source: "live", ...(skipped.length > 0 ? { skipped } : {}) };
          }
          return cached
            ? { server, tools: cached, source: "cache", error: message }
            : { server, tools: [], source: "none", error: message };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }

  /** pid of a connected stdio server (for diagnostics and tests). */
  async pidOf(server: string): Promise<number | undefined> {
    return this.shared.pidOf(server);
  }

  /** Close every session, scopes' included (stdio servers: their whole process group). The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const scopes = [...this.scopes.keys()];
    await Promise.all([this.shared.close(), ...scopes.map((s) => s.close())]);
  }
}

function offers(session: McpSession | undefined): { resources: boolean; prompts: boolean } | undefined {
  const caps = session?.serverCapabilities;
  return caps ? { resources: caps.resources !== undefined, prompts: caps.prompts !== undefined } : undefined;
}

/** Upstream sessions of one server that scopes may hold at once. */
export const DEFAULT_MAX_SESSIONS_PER_SERVER = 16;

/** Hash of one server entry, the disk cache key next to its name. */
export function configHash(config: McpServerConfig): string {
  return stableHash(config);
}
