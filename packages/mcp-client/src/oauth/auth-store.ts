import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

/**
 * What is kept per server between processes. `serverUrl` is the MCP server the tokens were
 * issued for: a record whose URL differs from the server's current config entry is never
 * used (tokens go only to the server they were issued for). `issuer` stamps inside
 * `clientInformation` and `tokens` are the SDK's own binding to the authorization server.
 */
export interface StoredMcpAuth {
  version: 1;
  server: string;
  serverUrl: string;
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** Epoch ms when `tokens` were saved (with `expires_in`, when they expire). */
  tokensSavedAt?: number;
  discovery?: OAuthDiscoveryState;
}

/**
 * Where OAuth state lives. `fileAuthStore` (from `@capgate/mcp-client/stdio`) keeps it under
 * `$CAPGATE_HOME/mcp-auth/<server>.json` (0600, directory 0700, atomic writes);
 * `memoryAuthStore()` is for tests and short-lived hosts.
 */
export interface McpAuthStore {
  load(server: string): Promise<StoredMcpAuth | undefined>;
  save(server: string, data: StoredMcpAuth): Promise<void>;
  delete(server: string): Promise<void>;
}

/** An McpAuthStore in memory (copies in and out, so callers cannot alias stored objects). */
export function memoryAuthStore(): McpAuthStore {
  const map = new Map<string, string>();
  return {
    async load(server) {
      const text = map.get(server);
      return text === undefined ? undefined : (JSON.parse(text) as StoredMcpAuth);
    },
    async save(server, data) {
      map.set(server, JSON.stringify(data));
    },
    async delete(server) {
      map.delete(server);
    },
  };
}
