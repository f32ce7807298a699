import { isStdioServer, type McpServerConfig } from "../config.js";
import type { StoredMcpAuth } from "./auth-store.js";
import type { McpOAuthGrant } from "./oauth-config.js";

/** What `capgate mcp status` shows about one server's login. Never carries a token value. */
export interface McpAuthStatus {
  /** `none`: the entry has no `oauth`; `logged_in`; `logged_out`; `expired` (a refresh may still work). */
  state: "none" | "logged_in" | "logged_out" | "expired";
  grant?: McpOAuthGrant;
  /** Granted scopes, as the token endpoint reported them. */
  scopes?: string[];
  /** ISO time the access token expires, when the server said. */
  expiresAt?: string;
  /** A refresh token is stored (an expired access token renews without a login). */
  refreshable?: boolean;
  /** Registered by dynamic client registration (vs a clientId from config). */
  dynamicClient?: boolean;
  /** The authorization server the tokens came from. */
  issuer?: string;
}

/** Summarise a stored login for display; a record made for another URL counts as logged out. */
export function describeAuth(
  config: McpServerConfig,
  record: StoredMcpAuth | undefined,
  now: number = Date.now(),
): McpAuthStatus {
  if (isStdioServer(config) || !config.oauth) return { state: "none" };
  const grant = config.oauth.grant ?? "authorization_code";
  const usable = record && record.serverUrl === config.url ? record : undefined;
  const tokens = usable?.tokens;
  if (!tokens) return { state: "logged_out", grant };
  const expiresAt =
    typeof tokens.expires_in === "number" && usable?.tokensSavedAt !== undefined
      ? usable.tokensSavedAt + tokens.expires_in * 1000
      : undefined;
  const status: McpAuthStatus = {
    state: expiresAt !== undefined && expiresAt <= now ? "expired" : "logged_in",
    grant,
    scopes: (tokens.scope ?? "").split(" ").filter(Boolean),
    refreshable: typeof tokens.refresh_token === "string",
    dynamicClient: config.oauth.clientId === undefined,
  };
  if (expiresAt !== undefined) status.expiresAt = new Date(expiresAt).toISOString();
  if (typeof tokens.issuer === "string") status.issuer = tokens.issuer;
  return status;
}
