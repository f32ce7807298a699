import { basename } from "node:path";
import { parseMcpServersConfig } from "../config.js";
import type { McpCallOptions } from "../pool.js";
import type { McpPoolEvent } from "../pool-types.js";
import type { ToolResult } from "../render.js";
import type { McpToolInfo } from "../tool-list.js";
import { createNodeMcpPool } from "./node-pool.js";
import type { StdioTransportOptions } from "./transport-factory.js";

export interface AdHocServerOptions {
  /** The program to run — no shell: split a command line into command + args first. */
  command: string;
  args?: string[];
  /** Added to the minimal inherited environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** Per-call (and connect) timeout, default 30 000 ms. */
  timeoutMs?: number;
  /** Name used in messages and qualified tool names (default: derived from the command). */
  name?: string;
  outputBytes?: number;
  onEvent?: (event: McpPoolEvent) => void;
  stdioOptions?: StdioTransportOptions;
}

/** One directly spawned server, for `capgate mcp tools --command …` and `mcp.call(command, …)`. */
export interface AdHocSession {
  readonly server: string;
  readonly pid: number | undefined;
  listTools(options?: McpCallOptions): Promise<McpToolInfo[]>;
  callTool(tool: string, args?: Record<string, unknown>, options?: McpCallOptions): Promise<ToolResult>;
  /** Why capgate refuses a tool by this name although the server may have it (see McpPool.refusalOf). */
  refusalOf(tool: string, options?: McpCallOptions): Promise<string | undefined>;
  /** Ends the server and its whole process group. */
  close(): Promise<void>;
}

function nameFor(command: string): string {
  const base = basename(command)
    .replace(/\.(c|m)?js$/, "")
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64);
  return base || "adhoc";
}

/**
 * Spawn one stdio server (no shell), initialize it, and return a session with listTools,
 * callTool and close. The caller is responsible for policy: run the shell policy on the
 * command line before calling this — this function spawns what it is given.
 */
export async function connectAdHoc(options: AdHocServerOptions): Promise<AdHocSession> {
  const server = options.name ?? nameFor(options.command);
  const servers = parseMcpServersConfig(
    {
      [server]: {
        command: options.command,
        ...(options.args ? { args: options.args } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      },
    },
    { path: "server" },
  );
  const pool = createNodeMcpPool(servers, {
    ...(options.outputBytes !== undefined ? { outputBytes: options.outputBytes } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.stdioOptions ? { stdioOptions: options.stdioOptions } : {}),
  });
  let pid: number | undefined;
  try {
    pid = (await pool.connect(server)).pid;
  } catch (error) {
    await pool.close();
    throw error;
  }
  return {
    server,
    pid,
    listTools: (o) => pool.listTools(server, o),
    callTool: (tool, args = {}, o) => pool.callTool(server, tool, args, o),
    refusalOf: (tool, o) => pool.refusalOf(server, tool, o),
    close: () => pool.close(),
  };
}
