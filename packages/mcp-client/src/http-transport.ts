import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpHttpServerConfig } from "./config.js";
import type { McpOAuthProvider } from "./oauth/oauth-provider.js";
import type { ManagedTransport } from "./transport.js";

/** An HTTP transport that can finish an OAuth authorization (both SDK transports can). */
export interface AuthorizingTransport extends ManagedTransport {
  finishAuth(authorizationCode: string): Promise<void>;
}

export type HttpTransportKind = "streamable-http" | "sse";

function httpStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}

/**
 * Connect a `url` server: Streamable HTTP first; when that endpoint answers the POST with a
 * 4xx other than 401/403 (an old server has no POST route there), fall back to the legacy
 * HTTP+SSE transport, as the MCP spec's backwards-compatibility section describes.
 * `type: "sse"` goes straight to SSE; `type: "http"` never falls back.
 */
export async function connectHttp(
  config: McpHttpServerConfig,
  makeClient: () => Client,
  timeoutMs: number,
  signal?: AbortSignal,
  provider?: McpOAuthProvider,
): Promise<{ client: Client; transport: AuthorizingTransport; kind: HttpTransportKind }> {
  if (!provider) return connectHttpOnce(config, makeClient, timeoutMs, signal);
  try {
    return await connectHttpOnce(config, makeClient, timeoutMs, signal, provider);
  } catch (error) {
    // A login in progress: the SDK handed the authorization URL to the host and gave up on
    // this connect. Wait for the redirect, exchange the code, then connect again with the tokens.
    if (!(error instanceof UnauthorizedError) || !provider.authorizationPending) throw error;
    const url = new URL(config.url);
    const finisher =
      config.type === "sse"
        ? new SSEClientTransport(url, { authProvider: provider, fetch: provider.observingFetch() })
        : new StreamableHTTPClientTransport(url, {
            authProvider: provider,
            fetch: provider.observingFetch(),
          });
    await provider.completeAuthorization((code) => finisher.finishAuth(code), signal);
    return connectHttpOnce(config, makeClient, timeoutMs, signal, provider);
  }
}

async function connectHttpOnce(
  config: McpHttpServerConfig,
  makeClient: () => Client,
  timeoutMs: number,
  signal?: AbortSignal,
  provider?: McpOAuthProvider,
): Promise<{ client: Client; transport: AuthorizingTransport; kind: HttpTransportKind }> {
  const url = new URL(config.url);
  const requestInit: RequestInit | undefined = config.headers
    ? { headers: { ...config.headers } }
    : undefined;
  const options = {
    ...(requestInit ? { requestInit } : {}),
    // The SDK attaches the bearer token to requests for this server's URL only (never in
    // the URL itself) and runs discovery/refresh/step-up through the provider.
    ...(provider ? { authProvider: provider, fetch: provider.observingFetch() } : {}),
  };
  const sse = async () => {
    const client = makeClient();
    const transport = new SSEClientTransport(url, options);
    await client.connect(transport, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    return { client, transport, kind: "sse" as const };
  };
  if (config.type === "sse") return sse();
  const client = makeClient();
  const transport = new TerminatingHttpTransport(url, options);
  try {
    await client.connect(transport, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    return { client, transport, kind: "streamable-http" };
  } catch (first) {
    await client.close().catch(() => {});
    const status = httpStatus(first);
    const fallBack =
      config.type === undefined &&
      status !== undefined &&
      status >= 400 &&
      status < 500 &&
      status !== 401 &&
      status !== 403;
    if (!fallBack) throw first;
    try {
      return await sse();
    } catch (second) {
      const a = first instanceof Error ? first.message : String(first);
      const b = second instanceof Error ? second.message : String(second);
      throw new Error(`Streamable HTTP failed (${a}) and the legacy SSE fallback failed too (${b})`, {
        cause: second,
      });
    }
  }
}

/** Streamable HTTP that ends its session politely on close (DELETE with the session id), bounded in time. */
class TerminatingHttpTransport extends StreamableHTTPClientTransport {
  override async close(): Promise<void> {
    if (this.sessionId !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.terminateSession().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 1_000);
        }),
      ]);
      clearTimeout(timer);
    }
    await super.close();
  }
}
