import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  type GetPromptResult,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListRootsRequestSchema,
  McpError,
  type Progress,
  type ReadResourceResult,
  ReadResourceResultSchema,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { isStdioServer, type McpServerConfig, serverTimeoutMs } from "./config.js";
import { McpClientError } from "./errors.js";
import { type AuthorizingTransport, connectHttp } from "./http-transport.js";
import { type McpAuthStore, memoryAuthStore } from "./oauth/auth-store.js";
import { type InteractiveAuthorization, McpOAuthProvider } from "./oauth/oauth-provider.js";
import type { ElicitationHandler, McpPoolEvent, McpRoot, SamplingHandler } from "./pool-types.js";
import type { ManagedTransport, StdioTransportFactory } from "./transport.js";

export type SessionTransportKind = "stdio" | "streamable-http" | "sse";

export interface SessionDeps {
  clientInfo: { name: string; version: string };
  stdio?: StdioTransportFactory | undefined;
  onSampling?: SamplingHandler | undefined;
  onElicitation?: ElicitationHandler | undefined;
  onToolListChanged?: () => void;
  /** OAuth state for `url` servers with `oauth` (default: in memory, this process only). */
  authStore?: McpAuthStore | undefined;
  /** Present when a person can complete a login (see InteractiveAuthorization). */
  interactiveAuth?: InteractiveAuthorization | undefined;
  onEvent?: ((event: McpPoolEvent) => void) | undefined;
  /** Aborts a connect in progress (the pool is closing). */
  signal?: AbortSignal | undefined;
  /** Roots offered to servers (`roots/list`); without them the capability is not declared. */
  roots?: readonly McpRoot[] | undefined;
}

/** One progress report of a call, as the server sent it (`notifications/progress`). */
export type McpProgress = Pick<Progress, "progress" | "total" | "message">;

/** What one tools/call may be given beyond its name and arguments. */
export interface SessionCallOptions {
  timeoutMs: number;
  /** Hard limit from the call's start while progress keeps restarting `timeoutMs`. */
  maxTotalTimeoutMs: number;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: McpProgress) => void) | undefined;
}

// Paging guard: a server that keeps returning cursors must not keep a listing going forever.
const MAX_LIST_PAGES = 1_000;
/**
 * Most tool entries read from one server, over all its pages: every entry is admitted (its
 * schema compiled) and kept, so a server paging out millions would hold the gate's memory
 * and CPU for minutes (measured: 1,000,000 entries took 110 s and 970 MB) — and every other
 * server and session of the process with it. Twice the 10,000 tools a server may list.
 */
export const MAX_LISTED_TOOLS = 20_000;

function politeRefusal(method: string): string {
  if (method === "sampling/createMessage")
    return "This MCP client does not offer sampling: no model is available to servers here. Continue without it.";
  if (method === "elicitation/create")
    return "This MCP client cannot ask the user for input (elicitation is not supported here). Continue without it, or explain in the tool result what you need.";
  return `This MCP client does not handle '${method}' requests.`;
}

/** An OAuth error answer (token endpoint, registration): its code and description, never a credential. */
function authFailed(server: string, error: OAuthError): McpClientError {
  return new McpClientError(
    "mcp_auth_failed",
    `The authorization server of MCP server '${server}' refused the request (${error.errorCode}${error.message ? `: ${error.message}` : ""}); check mcpServers.${server}.oauth, or run \`capgate mcp login ${server}\`.`,
    { server, property: `mcpServers.${server}.oauth`, cause: error },
  );
}

/**
 * The SDK's own timeout, not a server's -32001 reply: the SDK rejects with exactly
 * `{ timeout }` as data, and only once the time has passed.
 */
function isOwnTimeout(error: unknown, timeoutMs: number, started: number): boolean {
  return (
    error instanceof McpError &&
    error.code === ErrorCode.RequestTimeout &&
    (error.data as { timeout?: unknown } | undefined)?.timeout === timeoutMs &&
    Date.now() - started >= timeoutMs - 5
  );
}

/** One live connection to one server: an SDK Client over a stdio or HTTP transport. */
export class McpSession {
  readonly server: string;
  readonly client: Client;
  readonly transport: ManagedTransport;
  readonly kind: SessionTransportKind;
  /** Resolves when the connection is gone, for whatever reason. */
  readonly closed: Promise<void>;
  private alive = true;
  private markClosed!: () => void;
  /** Set for OAuth servers: lets a mid-session step-up (403 insufficient_scope) finish. */
  auth?: { provider: McpOAuthProvider; transport: AuthorizingTransport; signal?: AbortSignal | undefined };

  private constructor(
    server: string,
    client: Client,
    transport: ManagedTransport,
    kind: SessionTransportKind,
  ) {
    this.server = server;
    this.client = client;
    this.transport = transport;
    this.kind = kind;
    this.closed = new Promise<void>((resolve) => {
      this.markClosed = resolve;
    });
  }

  /** The server's `instructions` from initialize (untrusted text, as sent), if it gave any. */
  get instructions(): string | undefined {
    const text = this.client.getInstructions();
    return typeof text === "string" && text.trim() !== "" ? text : undefined;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  get pid(): number | undefined {
    return this.transport.pid ?? undefined;
  }

  /** Spawn or dial the server and run initialize, bounded by the server's timeoutMs. */
  static async open(server: string, config: McpServerConfig, deps: SessionDeps): Promise<McpSession> {
    const timeoutMs = serverTimeoutMs(config);
    const capabilities: ClientCapabilities = {};
    // Sampling spends the host's model on the server's prompts: only for entries that allow it.
    const onSampling = config.sampling === true ? deps.onSampling : undefined;
    if (onSampling) capabilities.sampling = {};
    // Form mode only (URL mode would send the person to a page the server picks); the SDK
    // fills in schema defaults the person left out (SEP-1034).
    if (deps.onElicitation) capabilities.elicitation = { form: { applyDefaults: true } };
    // The host's workspace, so servers that work on files (filesystem, pdf) know where.
    const roots = deps.roots;
    if (roots) capabilities.roots = {};
    const emit = deps.onEvent ?? (() => {});
    let session: McpSession | undefined;
    const makeClient = () => {
      const client = new Client(deps.clientInfo, { capabilities });
      // Requests the host installed no handler for (sampling, elicitation, roots, …) get a
      // JSON-RPC error that says so, instead of a bare "Method not found".
      client.fallbackRequestHandler = async (request) => {
        throw new McpError(ErrorCode.MethodNotFound, politeRefusal(request.method));
      };
      if (onSampling)
        client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
          onSampling({ server, params: request.params, signal: extra.signal }),
        );
      const onElicitation = deps.onElicitation;
      if (onElicitation)
        client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
          onElicitation({ server, params: request.params, signal: extra.signal }),
        );
      if (roots)
        client.setRequestHandler(ListRootsRequestSchema, async () => ({
          roots: roots.map((r) => ({ uri: r.uri, ...(r.name ? { name: r.name } : {}) })),
        }));
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        deps.onToolListChanged?.();
      });
      client.onerror = (error) => emit({ type: "protocol_error", server, message: error.message });
      client.onclose = () => session?.onTransportClosed();
      return client;
    };

    let client: Client;
    let transport: ManagedTransport;
    let kind: SessionTransportKind;
    try {
      if (isStdioServer(config)) {
        if (!deps.stdio)
          throw new McpClientError(
            "mcp_unavailable",
            `MCP server '${server}' is a stdio server (command '${config.command}'), but this pool cannot spawn processes; create it with createNodeMcpPool from '@capgate/mcp-client/stdio' (Node only).`,
            { server },
          );
        transport = deps.stdio(server, config, {
          onStderr: (text) => emit({ type: "stderr", server, text }),
          onGarbage: (line) => emit({ type: "garbage", server, line }),
        });
        client = makeClient();
        kind = "stdio";
        // Assigned before connect so a crash during initialize is reported through onclose.
        session = new McpSession(server, client, transport, kind);
        await client.connect(transport, {
          timeout: timeoutMs,
          ...(deps.signal ? { signal: deps.signal } : {}),
        });
      } else {
        const provider = config.oauth
          ? await McpOAuthProvider.open(
              server,
              config.url,
              config.oauth,
              deps.authStore ?? memoryAuthStore(),
              deps.interactiveAuth,
            )
          : undefined;
        const connected = await connectHttp(config, makeClient, timeoutMs, deps.signal, provider);
        client = connected.client;
        transport = connected.transport;
        kind = connected.kind;
        session = new McpSession(server, client, transport, kind);
        if (provider) session.auth = { provider, transport: connected.transport, signal: deps.signal };
      }
    } catch (error) {
      // Read how it went away before close() (which would report our own stop).
      const reason = session?.transport.exitReason?.();
      if (session) await session.close();
      if (McpClientError.isInstance(error)) throw error;
      if (error instanceof UnauthorizedError)
        throw new McpClientError(
          "mcp_auth_required",
          `MCP server '${server}' refused the connection (401 Unauthorized)${!isStdioServer(config) && config.oauth ? `: run \`capgate mcp login ${server}\`` : isStdioServer(config) ? "" : `; if it uses OAuth, add "oauth": {} to mcpServers.${server} and run \`capgate mcp login ${server}\``}.`,
          { server, cause: error },
        );
      if (error instanceof OAuthError) throw authFailed(server, error);
      const status = (error as { code?: unknown } | null)?.code;
      if (!isStdioServer(config) && !config.oauth && status === 401)
        throw new McpClientError(
          "mcp_auth_required",
          `MCP server '${server}' answered 401 Unauthorized; if it uses OAuth, add "oauth": {} to mcpServers.${server} and run \`capgate mcp login ${server}\`.`,
          { server, cause: error },
        );
      const detail = deps.signal?.aborted
        ? "was stopped while connecting (the pool was closed)"
        : error instanceof McpError && error.code === ErrorCode.RequestTimeout
          ? `did not answer initialize within ${timeoutMs} ms`
          : `${isStdioServer(config) ? "failed to start" : "could not connect"}: ${error instanceof Error ? error.message : String(error)}`;
      throw new McpClientError(
        "mcp_connect_failed",
        `MCP server '${server}' ${detail}${reason ? ` (${reason})` : ""}.`,
        { server, cause: error },
      );
    }
    if (!session.alive) {
      const reason = transport.exitReason?.() ?? "closed the connection";
      throw new McpClientError(
        "mcp_connect_failed",
        `MCP server '${server}' ${reason} right after initialize.`,
        {
          server,
        },
      );
    }
    emit({
      type: "connected",
      server,
      transport: kind,
      ...(session.pid !== undefined ? { pid: session.pid } : {}),
    });
    return session;
  }

  private onTransportClosed(): void {
    if (!this.alive) return;
    this.alive = false;
    this.markClosed();
  }

  /**
   * Raw tool entries, following `nextCursor` until the last page — or until MAX_LISTED_TOOLS
   * entries, a repeated cursor or MAX_LIST_PAGES pages: then what was read so far, with
   * `cut` saying why the rest was not read.
   */
  async listToolsRaw(timeoutMs: number, signal?: AbortSignal): Promise<{ tools: unknown[]; cut?: string }> {
    const tools: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.request("tools/list", timeoutMs, signal, (options) =>
        this.client.listTools(cursor === undefined ? undefined : { cursor }, options),
      );
      // One by one: a page of hundreds of thousands of entries would overflow push(...page).
      for (const tool of result.tools) {
        if (tools.length === MAX_LISTED_TOOLS)
          return {
            tools,
            cut: `the server lists more than ${MAX_LISTED_TOOLS} tools; capgate read the first ${MAX_LISTED_TOOLS} and left the rest out`,
          };
        tools.push(tool);
      }
      cursor = result.nextCursor;
      if (cursor === undefined) return { tools };
      // A cursor seen before would loop forever: stop with what we have.
      if (seen.has(cursor)) return { tools };
      seen.add(cursor);
    }
    return {
      tools,
      cut: `the server's tool list goes on past ${MAX_LIST_PAGES} pages; capgate read the first ${MAX_LIST_PAGES}`,
    };
  }

  /** What the server declared at initialize (tools, resources, prompts, …). */
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.client.getServerCapabilities();
  }

  /**
   * One tools/call, never retried. It always carries a progress token: each
   * `notifications/progress` the server sends restarts `timeoutMs` (a long job that reports
   * progress lives on) up to `maxTotalTimeoutMs` from the start, and goes to `onProgress`.
   * A timeout, the hard limit or an abort cancels the call on the server
   * (`notifications/cancelled`).
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: SessionCallOptions,
  ): Promise<CallToolResult> {
    const { timeoutMs, maxTotalTimeoutMs, signal, onProgress } = options;
    // Aborting this controller is how the hard limit cancels the request (the SDK's own
    // maxTotalTimeout rejects without telling the server); it follows the caller's signal too.
    const link = new AbortController();
    const started = Date.now();
    let hardLimit: ReturnType<typeof setTimeout> | undefined;
    const overLimit = new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", {
      maxTotalTimeout: maxTotalTimeoutMs,
    });
    const onprogress = (progress: Progress) => {
      // Armed at the first report: before any, timeoutMs alone bounds the call (no second timer on the hot path).
      hardLimit ??= setTimeout(
        () => link.abort(overLimit),
        Math.max(0, started + maxTotalTimeoutMs - Date.now()),
      );
      if (onProgress)
        try {
          onProgress({
            progress: progress.progress,
            ...(progress.total !== undefined ? { total: progress.total } : {}),
            ...(typeof progress.message === "string" ? { message: progress.message } : {}),
          });
        } catch {
          // A listener's failure is not the call's.
        }
    };
    try {
      // client.request, not client.callTool: the SDK's callTool throws when structuredContent
      // misses the outputSchema, losing the result; CallChecks reports a mismatch instead.
      return (await this.request(
        `tools/call '${tool}'`,
        timeoutMs,
        signal,
        (requestOptions) =>
          this.client.request(
            { method: "tools/call", params: { name: tool, arguments: args } },
            CallToolResultSchema,
            { ...requestOptions, onprogress, resetTimeoutOnProgress: true },
          ),
        { link, overLimit },
      )) as CallToolResult;
    } finally {
      clearTimeout(hardLimit);
    }
  }

  /** resources/list, every page (bounded by `maxItems`). */
  async listResources(timeoutMs: number, maxItems: number, signal?: AbortSignal) {
    return this.pages("resources/list", timeoutMs, maxItems, signal, async (cursor, options) => {
      const r = await this.client.request(
        { method: "resources/list", params: cursor === undefined ? {} : { cursor } },
        ListResourcesResultSchema,
        options,
      );
      return { items: r.resources as unknown[], nextCursor: r.nextCursor };
    });
  }

  /** resources/templates/list, every page (bounded by `maxItems`). */
  async listResourceTemplates(timeoutMs: number, maxItems: number, signal?: AbortSignal) {
    return this.pages("resources/templates/list", timeoutMs, maxItems, signal, async (cursor, options) => {
      const r = await this.client.request(
        { method: "resources/templates/list", params: cursor === undefined ? {} : { cursor } },
        ListResourceTemplatesResultSchema,
        options,
      );
      return { items: r.resourceTemplates as unknown[], nextCursor: r.nextCursor };
    });
  }

  /** prompts/list, every page (bounded by `maxItems`). */
  async listPrompts(timeoutMs: number, maxItems: number, signal?: AbortSignal) {
    return this.pages("prompts/list", timeoutMs, maxItems, signal, async (cursor, options) => {
      const r = await this.client.request(
        { method: "prompts/list", params: cursor === undefined ? {} : { cursor } },
        ListPromptsResultSchema,
        options,
      );
      return { items: r.prompts as unknown[], nextCursor: r.nextCursor };
    });
  }

  async readResource(uri: string, timeoutMs: number, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.request(`resources/read ${JSON.stringify(uri.slice(0, 200))}`, timeoutMs, signal, (options) =>
      this.client.request({ method: "resources/read", params: { uri } }, ReadResourceResultSchema, options),
    );
  }

  async getPrompt(
    name: string,
    args: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    return this.request(`prompts/get '${name}'`, timeoutMs, signal, (options) =>
      this.client.request(
        { method: "prompts/get", params: { name, arguments: args } },
        GetPromptResultSchema,
        options,
      ),
    );
  }

  /** A paginated list, following `nextCursor` until the last page, a repeated cursor or `maxItems`. */
  private async pages(
    what: string,
    timeoutMs: number,
    maxItems: number,
    signal: AbortSignal | undefined,
    page: (
      cursor: string | undefined,
      options: { signal?: AbortSignal; timeout: number },
    ) => Promise<{ items: unknown[]; nextCursor?: string | undefined }>,
  ): Promise<{ items: unknown[]; complete: boolean }> {
    const items: unknown[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let n = 0; n < MAX_LIST_PAGES; n++) {
      const result = await this.request(what, timeoutMs, signal, (options) => page(cursor, options));
      items.push(...result.items);
      cursor = result.nextCursor;
      if (items.length >= maxItems) return { items: items.slice(0, maxItems), complete: false };
      if (cursor === undefined) return { items, complete: true };
      if (seen.has(cursor)) return { items, complete: false };
      seen.add(cursor);
    }
    return { items, complete: false };
  }

  /**
   * Run one request with the SDK's timeout: on timeout or abort it sends
   * `notifications/cancelled` and drops the request id, so a late reply is ignored.
   * Errors come back as McpClientError naming the server and what was pending.
   */
  private async request<T>(
    what: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    run: (options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
    limit?: { link: AbortController; overLimit: McpError },
  ): Promise<T> {
    if (!this.alive) throw this.closedError(what);
    if (signal?.aborted) throw this.abortedError(what);
    // The caller's signal is linked through a per-call controller: the SDK never removes
    // its abort listener, so a long-lived signal passed straight in would collect one per call.
    let link: AbortController | undefined = limit?.link;
    const onAbort = () => link?.abort(new Error("aborted by the caller"));
    if (signal) {
      link ??= new AbortController();
      signal.addEventListener("abort", onAbort, { once: true });
    }
    const started = Date.now();
    const options = link ? { signal: link.signal, timeout: timeoutMs } : { timeout: timeoutMs };
    try {
      try {
        return await run(options);
      } catch (error) {
        // A step-up a person is completing (403 insufficient_scope, interactive host): the
        // request was refused before the server ran it, so sending it again is safe.
        const auth = this.auth;
        if (!(error instanceof UnauthorizedError) || !auth?.provider.authorizationPending) throw error;
        await auth.provider.completeAuthorization((code) => auth.transport.finishAuth(code), auth.signal);
        return await run(options);
      }
    } catch (error) {
      if (signal?.aborted) throw this.abortedError(what);
      if (limit && error === limit.overLimit)
        throw new McpClientError(
          "mcp_timeout",
          `MCP server '${this.server}' did not finish ${what} within the hard limit of ${(limit.overLimit.data as { maxTotalTimeout: number }).maxTotalTimeout} ms (it kept reporting progress, which restarts the ${timeoutMs} ms timeout; raise maxTotalTimeoutMs for longer jobs); the request was cancelled (notifications/cancelled) and was not retried.`,
          { server: this.server, cause: error },
        );
      // Our own errors (a login needed, a bad login) already name the server and what to do.
      if (McpClientError.isInstance(error)) throw error;
      if (error instanceof OAuthError) throw authFailed(this.server, error);
      if (error instanceof UnauthorizedError)
        throw this.auth
          ? this.auth.provider.loginRequired()
          : new McpClientError(
              "mcp_auth_required",
              `MCP server '${this.server}' refused ${what} (401 Unauthorized).`,
              {
                server: this.server,
              },
            );
      if (isOwnTimeout(error, timeoutMs, started))
        throw new McpClientError(
          "mcp_timeout",
          `MCP server '${this.server}' did not answer ${what} within ${timeoutMs} ms; the request was cancelled (notifications/cancelled) and was not retried.`,
          { server: this.server, cause: error },
        );
      if (!this.alive) throw this.closedError(what, error);
      if (error instanceof McpError)
        throw new McpClientError(
          "mcp_rpc_error",
          `MCP server '${this.server}' answered ${what} with error ${error.code}: ${error.message.replace(/^MCP error -?\d+: /, "")}`,
          { server: this.server, rpcCode: error.code, cause: error },
        );
      if (error instanceof Error && error.name === "ZodError")
        throw new McpClientError(
          "mcp_rpc_error",
          `MCP server '${this.server}' sent a malformed reply to ${what}.`,
          {
            server: this.server,
            cause: error,
          },
        );
      // Anything else is the connection itself failing (an HTTP POST that cannot be sent, a
      // closed pipe): drop this session so the next call reconnects.
      await this.close();
      throw this.closedError(what, error);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private abortedError(what: string): McpClientError {
    return new McpClientError(
      "mcp_aborted",
      `The call to MCP server '${this.server}' (${what}) was aborted.`,
      {
        server: this.server,
      },
    );
  }

  private closedError(what: string, cause?: unknown): McpClientError {
    const reason = this.transport.exitReason?.();
    const detail =
      reason ??
      (cause instanceof Error && !(cause instanceof McpError)
        ? `could not be reached: ${cause.message}`
        : "closed the connection");
    return new McpClientError(
      "mcp_closed",
      `MCP server '${this.server}' ${detail} while ${what} was pending; the call was not retried (the next call reconnects).`,
      { server: this.server, cause },
    );
  }

  /** Close the connection (for stdio: the whole process group). Idempotent. */
  async close(): Promise<void> {
    this.alive = false;
    try {
      await this.client.close();
    } catch {
      // Closing is best effort; the transport kills what is left.
    }
    await this.transport.close().catch(() => {});
    this.markClosed();
  }
}
