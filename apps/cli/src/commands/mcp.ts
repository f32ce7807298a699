import type { ToolResult } from "@capgate/tools";
import { type GlobalOptions, openHarness, parseJsonArgument } from "../context.js";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";
import { VERSION } from "../version.js";

export interface McpTargetOptions {
  url?: string;
  command?: string;
  timeout?: string;
  json?: boolean;
}

interface Target {
  listTools(): Promise<Array<{ name: string; description?: string; inputSchema?: unknown }>>;
  callTool(tool: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

/** One MCP server named on the command line: `--url` (Streamable HTTP, SSE fallback) or `--command` (stdio, no shell). */
async function openTarget(options: McpTargetOptions): Promise<Target> {
  if (Boolean(options.url) === Boolean(options.command)) {
    throw new CliError('give exactly one of --url URL or --command "CMD ARGS"', 2);
  }
  const timeoutMs = options.timeout === undefined ? 30_000 : Number(options.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new CliError(`--timeout must be a positive integer (ms), got '${options.timeout}'`, 2);
  const { connectAdHoc, createNodeMcpPool } = await import("@capgate/mcp-client/stdio");
  if (options.url) {
    const pool = createNodeMcpPool({ remote: { url: options.url, timeoutMs } });
    return {
      listTools: () => pool.listTools("remote"),
      callTool: (tool, args) => pool.callTool("remote", tool, args),
      close: () => pool.close(),
    };
  }
  const { splitCommandLine } = await import("@capgate/tools");
  const split = await splitCommandLine(options.command as string);
  if (!split.ok) throw new CliError(`--command cannot be run without a shell: ${split.reason}`, 2);
  const [command, ...args] = split.argv;
  const session = await connectAdHoc({ command: command as string, args, timeoutMs });
  return {
    listTools: () => session.listTools(),
    callTool: (tool, a) => session.callTool(tool, a),
    close: () => session.close(),
  };
}

export async function mcpToolsCommand(options: McpTargetOptions, io: CliIO): Promise<number> {
  const target = await openTarget(options);
  try {
    const tools = await target.listTools();
    if (options.json) {
      printJson(io, tools);
      return 0;
    }
    const p = paint(io);
    for (const t of tools)
      io.out(`${p.bold(t.name)}${t.description ? ` — ${t.description.split("\n")[0]}` : ""}`);
    io.out(p.dim(`${tools.length} tool(s)`));
    return 0;
  } finally {
    await target.close();
  }
}

export async function mcpCallCommand(
  tool: string,
  argsText: string | undefined,
  options: McpTargetOptions,
  io: CliIO,
): Promise<number> {
  const args = await parseJsonArgument(argsText, "the tool arguments");
  const target = await openTarget(options);
  try {
    const result = await target.callTool(tool, args);
    if (options.json) printJson(io, result);
    else if (result.success) io.out(result.summary);
    else io.err(`${paint(io).yellow("tool failed:")} ${result.summary}`);
    return result.success ? 0 : 1;
  } finally {
    await target.close();
  }
}

/** `capgate mcp serve`: the gate as an MCP server on stdio — four tools instead of hundreds. Logs go to stderr. */
export async function mcpServeCommand(
  options: { workspace?: string },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const harness = await openHarness(global, options.workspace ? { workspace: options.workspace } : {}, {
    io,
  });
  const { createGateServer } = await import("@capgate/mcp-client");
  const { serveGateOverStdio } = await import("@capgate/mcp-client/stdio");
  const session = harness.createGateSession();
  const server = createGateServer({ name: "capgate", version: VERSION, handlers: session.handlers });
  io.err(`capgate mcp serve · workspace ${harness.workspace} · trace ${harness.store.pathOf(session.runId)}`);
  const serving = await serveGateOverStdio(server);
  const stop = () => void serving.close();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    await serving.closed;
  } finally {
    session.close();
    await harness.close();
  }
  return 0;
}
