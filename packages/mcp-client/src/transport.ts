import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpStdioServerConfig } from "./config.js";

/** The SDK Transport plus what the pool reports when a server goes away. */
export interface ManagedTransport extends Transport {
  /** Process id of a stdio server (its process group id too), once started. */
  readonly pid?: number | undefined;
  /** One line on how the server went away ("exited with code 1; stderr: …"), once it has. */
  exitReason?(): string | undefined;
}

/** Callbacks a transport uses to report what is not a protocol message. */
export interface TransportHooks {
  /** A chunk of the server's stderr (it is always drained, never inherited). */
  onStderr?(text: string): void;
  /** A stdout line that is not JSON-RPC; it is dropped and the session goes on. */
  onGarbage?(line: string): void;
}

/**
 * Builds the transport of a `command` server. The root entry stays runtime-neutral, so the
 * Node implementation lives in `@capgate/mcp-client/stdio` and is passed in by the host.
 */
export type StdioTransportFactory = (
  server: string,
  config: McpStdioServerConfig,
  hooks: TransportHooks,
) => ManagedTransport;
