import type { Readable, Writable } from "node:stream";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

export interface StdioServing {
  /** Resolves when the client went away (stdin ended) or close() was called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve an MCP server (e.g. `createGateServer(…)`) over this process's stdin/stdout — what
 * `capgate mcp serve` runs. Ends when stdin ends. Nothing else may write to stdout meanwhile:
 * log to stderr.
 */
export async function serveGateOverStdio(
  server: Server,
  streams: { stdin?: Readable; stdout?: Writable } = {},
): Promise<StdioServing> {
  const stdin = streams.stdin ?? process.stdin;
  const stdout = streams.stdout ?? process.stdout;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    resolveClosed();
  };
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const transport = new StdioServerTransport(stdin, stdout);
  await server.connect(transport);
  const close = async () => {
    stdin.off("end", close);
    await server.close();
  };
  stdin.once("end", close);
  return { closed, close };
}
