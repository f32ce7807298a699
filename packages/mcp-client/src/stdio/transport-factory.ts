import type { StdioTransportFactory } from "../transport.js";
import { serverEnv } from "./env.js";
import { StdioProcessTransport } from "./process-transport.js";

export interface StdioTransportOptions {
  /** Largest JSON-RPC message accepted from a server (default 16 MiB). */
  maxMessageBytes?: number;
  /** Wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL (default 500 ms each). */
  closeGraceMs?: number;
  /** Where the inherited variables come from (default `process.env`). */
  envSource?: Record<string, string | undefined>;
}

/** The Node stdio transport factory for McpPool's `stdio` option. */
export function createStdioTransport(options: StdioTransportOptions = {}): StdioTransportFactory {
  return (server, config, hooks) =>
    new StdioProcessTransport({
      command: config.command,
      ...(config.args ? { args: config.args } : {}),
      env: serverEnv(config.env, options.envSource),
      ...(config.cwd ? { cwd: config.cwd } : {}),
      server,
      hooks,
      ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
      ...(options.closeGraceMs !== undefined ? { closeGraceMs: options.closeGraceMs } : {}),
    });
}
