import type { McpServersMap } from "../config.js";
import { McpPool, type McpPoolOptions } from "../pool.js";
import { fileToolListCache } from "./disk-cache.js";
import { fileAuthStore } from "./file-auth-store.js";
import { createStdioTransport, type StdioTransportOptions } from "./transport-factory.js";

export interface NodeMcpPoolOptions extends McpPoolOptions {
  /**
   * Keep tool lists under `<stateDir>/mcp-tools/` (e.g. `$CAPGATE_HOME`), for search before
   * connecting, and OAuth logins under `<stateDir>/mcp-auth/` (unless `authStore` is given).
   */
  stateDir?: string;
  stdioOptions?: StdioTransportOptions;
}

/** An McpPool that can spawn `command` servers (Node only) and caches tool lists on disk. */
export function createNodeMcpPool(servers: McpServersMap, options: NodeMcpPoolOptions = {}): McpPool {
  const { stateDir, stdioOptions, ...rest } = options;
  return new McpPool(servers, {
    stdio: createStdioTransport(stdioOptions),
    ...(stateDir ? { toolCache: fileToolListCache(stateDir), authStore: fileAuthStore(stateDir) } : {}),
    ...rest,
  });
}
