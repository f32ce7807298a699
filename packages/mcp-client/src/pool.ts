import { CapgateError, stableHash } from "@capgate/schema";
import { CallChecks } from "./call-checks.js";
import {
  enabledServerNames,
  type McpServerConfig,
  type McpServersMap,
  parseMcpServersConfig,
  serverTimeoutMs,
} from "./config.js";
import { McpClientError, type McpErrorCode } from "./errors.js";
import { type McpAuthStore, memoryAuthStore } from "./oauth/auth-store.js";
import type { InteractiveAuthorization } from "./oauth/oauth-provider.js";
import type {
  ElicitationHandler,
  McpPoolEvent,
  McpServerTools,
  SamplingHandler,
  ToolListCache,
} from "./pool-types.js";
import { DEFAULT_OUTPUT_BYTES, renderCallToolResult, type ToolResult } from "./render.js";
import { McpSession } from "./session.js";
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
}

export interface McpCallOptions {
  signal?: AbortSignal;
  /** Overrides the server's `timeoutMs` for this call. */
  timeoutMs?: number;
}

/** What the fallthrough needs from a pool; McpPool implements it. */
export interface McpCaller {
  readonly servers: McpServersMap;
  hasTool(server: string, tool: string, options?: McpCallOptions): Promise<boolean>;
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
}

/**
 * One lazily connected session per configured server, reused by every call. Tool lists are
 * listed once (all pages) and cached until the server says they changed. A crash fails the
 * pending calls at once with an error naming the server; the next call reconnects; nothing
 * is replayed. `close()` ends every session (for stdio servers, their whole process group).
 */
export class McpPool implements McpCaller {
  readonly servers: McpServersMap;
  private readonly options: McpPoolOptions;
  private readonly sessions = new Map<string, Promise<McpSession>>();
  /** Connected sessions, for the hot path (no promise hop per call). */
  private readonly live = new Map<string, McpSession>();
  private readonly toolLists = new Map<string, ToolListEntry>();
  private closed = false;
  private readonly closing = new AbortController();
  /** OAuth state: the host's store, or one in memory shared by this pool's reconnects. */
  readonly authStore: McpAuthStore;
  private readonly checks: CallChecks;

  /** Validates `servers` (throws McpConfigError naming the bad property). */
  constructor(servers: McpServersMap, options: McpPoolOptions = {}) {
    this.servers = parseMcpServersConfig(servers);
    this.options = options;
    this.authStore = options.authStore ?? memoryAuthStore();
    this.checks = new CallChecks((warning) => this.emit({ type: "schema_warning", ...warning }));
  }

  /** Enabled server names in config order (the first takes bare tool names). */
  serverNames(): string[] {
    return enabledServerNames(this.servers);
  }

  private config(server: string): McpServerConfig {
    const config = Object.hasOwn(this.servers, server) ? this.servers[server] : undefined;
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

  /** The live session of a server, connecting on first use (concurrent callers share one connect). */
  async connect(server: string): Promise<McpSession> {
    if (this.closed) throw new McpClientError("mcp_unavailable", "This MCP pool is closed.", { server });
    const existing = this.sessions.get(server);
    if (existing) {
      const session = await existing;
      if (session.isAlive) return session;
      if (this.sessions.get(server) === existing) this.sessions.delete(server);
      return this.connect(server);
    }
    const config = this.config(server);
    const opening = McpSession.open(server, config, {
      clientInfo: this.options.clientInfo ?? { name: "capgate", version: "0" },
      stdio: this.options.stdio,
      onSampling: this.options.onSampling,
      onElicitation: this.options.onElicitation,
      onEvent: this.options.onEvent,
      authStore: this.authStore,
      interactiveAuth: this.options.interactiveAuth,
      onToolListChanged: () => this.onToolListChanged(server),
      signal: this.closing.signal,
    });
    this.sessions.set(server, opening);
    let session: McpSession;
    try {
      session = await opening;
    } catch (error) {
      if (this.sessions.get(server) === opening) this.sessions.delete(server);
      throw error;
    }
    if (this.closed) {
      await session.close();
      throw new McpClientError("mcp_unavailable", "This MCP pool was closed while connecting.", { server });
    }
    this.live.set(server, session);
    void session.closed.then(() => {
      if (this.sessions.get(server) === opening) this.sessions.delete(server);
      if (this.live.get(server) === session) this.live.delete(server);
      this.emit({
        type: "disconnected",
        server,
        reason: session.transport.exitReason?.() ?? "connection closed",
      });
    });
    return session;
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
      const raw = await session.listToolsRaw(options.timeoutMs ?? serverTimeoutMs(config), options.signal);
      const { tools, skipped } = normalizeToolList(server, raw);
      if (skipped.length > 0) this.emit({ type: "tools_skipped", server, skipped });
      current.skipped = skipped;
      current.tools = tools;
      current.index = new ToolIndex(server, tools, skipped);
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
    return this.live.get(server)?.instructions;
  }

  /** True when the server lists a tool callable by this name and capgate admits it. */
  async hasTool(server: string, tool: string, options: McpCallOptions = {}): Promise<boolean> {
    return (await this.index(server, options)).find(tool) !== undefined;
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
    const config = this.config(server);
    // The callable name (whitespace mapped to `_`) goes out as the server's own name.
    const info = (await this.index(server, options)).require(tool);
    this.checks.checkArguments(info, args);
    const live = this.live.get(server);
    const session = live?.isAlive ? live : await this.connect(server);
    const raw = await session.callTool(
      info.name,
      args,
      options.timeoutMs ?? serverTimeoutMs(config),
      options.signal,
    );
    const result = renderCallToolResult(raw, {
      server,
      tool,
      outputBytes: this.options.outputBytes ?? DEFAULT_OUTPUT_BYTES,
      ...(this.options.binaryBytes !== undefined ? { binaryBytes: this.options.binaryBytes } : {}),
    });
    return this.checks.checkResult(info, result);
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
    if (!cache) return undefined;
    return cache.load(server, configHash(this.config(server))).catch(() => undefined);
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
    const pending = this.sessions.get(server);
    if (!pending) return undefined;
    const session = await pending.catch(() => undefined);
    return session?.isAlive ? session.pid : undefined;
  }

  /** Close every session (stdio servers: their whole process group). The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const pending = [...this.sessions.values()];
    this.sessions.clear();
    this.live.clear();
    await Promise.all(
      pending.map(async (p) => {
        const session = await p.catch(() => undefined);
        await session?.close();
      }),
    );
  }
}

/** Hash of one server entry, the disk cache key next to its name. */
export function configHash(config: McpServerConfig): string {
  return stableHash(config);
}
