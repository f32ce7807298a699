import { McpClientError } from "../errors.js";
import type { McpIdentityProviderConfig } from "./oauth-config.js";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * Enterprise-managed authorization (SEP-990), step one: ask the enterprise IdP to exchange
 * the person's ID token for an identity assertion grant (ID-JAG) for this authorization
 * server (`audience`) and MCP server (`resource`), by RFC 8693 token exchange. The SDK
 * (1.32.2) has no helper for this step; step two (the RFC 7523 JWT bearer grant) goes
 * through the SDK's own token request. Nothing of either token is put in an error.
 */
export async function requestIdentityAssertion(
  server: string,
  idp: McpIdentityProviderConfig,
  audience: string,
  resource: string,
  fetchFn: typeof fetch = fetch,
): Promise<string> {
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    requested_token_type: ID_JAG,
    audience,
    resource,
    subject_token: idp.idToken,
    subject_token_type: ID_TOKEN,
    client_id: idp.clientId,
  });
  let response: Response;
  try {
    response = await fetchFn(idp.tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
    });
  } catch (error) {
    throw new McpClientError(
      "mcp_auth_failed",
      `The identity provider of MCP server '${server}' (${idp.tokenEndpoint}) could not be reached: ${error instanceof Error ? error.message : String(error)}.`,
      { server, cause: error },
    );
  }
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof answer.access_token !== "string") {
    const reason = typeof answer.error === "string" ? answer.error : `HTTP ${response.status}`;
    throw new McpClientError(
      "mcp_auth_failed",
      `The identity provider of MCP server '${server}' refused the token exchange (${reason}); the ID token may have expired — sign in to the IdP again.`,
      { server, property: `mcpServers.${server}.oauth.identityProvider` },
    );
  }
  return answer.access_token;
}
