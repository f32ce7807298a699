import { isStdioServer, type McpServerConfig } from "../config.js";
import { McpClientError } from "../errors.js";
import { describeAuth, type McpAuthStatus } from "../oauth/auth-status.js";
import type { McpAuthStore } from "../oauth/auth-store.js";
import { McpPool } from "../pool.js";
import { startLoopbackRedirect } from "./loopback-redirect.js";

export interface McpLoginOptions {
  store: McpAuthStore;
  /** Shows the authorization URL to the person; called once per authorization (never opens a browser). */
  onAuthorizationUrl(url: URL, server: string): void | Promise<void>;
  /** Wait this long for the redirect (default 5 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  clientInfo?: { name: string; version: string };
}

export interface McpLoginResult {
  server: string;
  /** Tools the server listed with the new login (proves the token works). */
  tools: number;
  status: McpAuthStatus;
}

function previousPort(uris: unknown): number | undefined {
  if (!Array.isArray(uris) || typeof uris[0] !== "string") return undefined;
  try {
    const url = new URL(uris[0]);
    return url.hostname === "127.0.0.1" && url.port ? Number(url.port) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Log in to one `url` server with OAuth: discovery, dynamic registration (unless a clientId
 * is configured), PKCE authorization code with a redirect to a listener on 127.0.0.1, then
 * a tools/list with the new token. Stored tokens of the server are dropped first (a login
 * is asked for); its client registration is kept and reused when its redirect URI still fits.
 */
export async function loginMcpServer(
  server: string,
  config: McpServerConfig,
  options: McpLoginOptions,
): Promise<McpLoginResult> {
  if (isStdioServer(config) || !config.oauth)
    throw new McpClientError(
      "invalid_config",
      `MCP server '${server}' has no "oauth" in its entry; add "oauth": {} to mcpServers.${server} (a url server) to log in with OAuth.`,
      { server, property: `mcpServers.${server}.oauth` },
    );
  const stored = await options.store.load(server);
  if (stored && stored.serverUrl === config.url) {
    const { tokens: _dropped, tokensSavedAt: _at, ...rest } = stored;
    await options.store.save(server, rest);
  }
  const wanted =
    config.oauth.redirectPort ??
    (config.oauth.clientId === undefined && stored?.serverUrl === config.url
      ? previousPort((stored.clientInformation as { redirect_uris?: unknown } | undefined)?.redirect_uris)
      : undefined);
  const loopbackOptions = {
    onAuthorizationUrl: options.onAuthorizationUrl,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  };
  let loopback: Awaited<ReturnType<typeof startLoopbackRedirect>>;
  try {
    loopback = await startLoopbackRedirect({ ...loopbackOptions, ...(wanted ? { port: wanted } : {}) });
  } catch (error) {
    // The port of an earlier dynamic registration is only a preference: register anew elsewhere.
    if (config.oauth.redirectPort !== undefined || wanted === undefined) throw error;
    loopback = await startLoopbackRedirect(loopbackOptions);
  }
  const pool = new McpPool(
    { [server]: config },
    {
      authStore: options.store,
      interactiveAuth: loopback,
      ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}),
    },
  );
  // Cancelling the login closes the pool, which also stops the wait for the redirect.
  const onAbort = () => void pool.close();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (options.signal?.aborted)
      throw new McpClientError("mcp_aborted", `The login to MCP server '${server}' was cancelled.`, {
        server,
      });
    const tools = await pool.listTools(server, options.signal ? { signal: options.signal } : {});
    return { server, tools: tools.length, status: describeAuth(config, await options.store.load(server)) };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await pool.close();
    await loopback.close();
  }
}

/** Forget a server's login (tokens and client registration). True when something was stored. */
export async function logoutMcpServer(server: string, store: McpAuthStore): Promise<boolean> {
  const had = (await store.load(server)) !== undefined;
  await store.delete(server);
  return had;
}
