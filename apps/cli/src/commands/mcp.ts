import type { ToolResult } from "@capgate/tools";
import {
  type GlobalOptions,
  openHarness,
  parseApproval,
  parseJsonArgument,
  reportCapabilityProblems,
} from "../context.js";
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

/**
 * A server from the config's mcpServers, started through the harness as a run starts it
 * (sandboxed where its entry says so, its stored login, the host PATH), listed live.
 */
async function configuredTarget(
  server: string,
  options: McpTargetOptions,
  global: GlobalOptions,
): Promise<Target> {
  if (options.url || options.command)
    throw new CliError(
      `give a configured server's name or --url/--command, not both (got '${server}' too)`,
      2,
    );
  const harness = await openHarness(global, {});
  const names = harness.mcp?.serverNames() ?? [];
  if (!harness.mcp || !names.includes(server)) {
    await harness.close();
    throw new CliError(
      `no MCP server named '${server}' in the config (configured: ${names.length ? names.join(", ") : "none"})`,
      2,
    );
  }
  const pool = harness.mcp;
  return {
    listTools: () => pool.listTools(server, { refresh: true }),
    callTool: (tool, args) => pool.callTool(server, tool, args),
    close: () => harness.close(),
  };
}

/** One MCP server named on the command line: `--url` (Streamable HTTP, SSE fallback) or `--command` (stdio, no shell). */
async function openTarget(options: McpTargetOptions): Promise<Target> {
  if (Boolean(options.url) === Boolean(options.command)) {
    throw new CliError(
      'give a configured server\'s name, or exactly one of --url URL or --command "CMD ARGS"',
      2,
    );
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
  const { splitCommandLine } = await import("@capgate/shell-policy");
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

export async function mcpToolsCommand(
  server: string | undefined,
  options: McpTargetOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const target =
    server === undefined ? await openTarget(options) : await configuredTarget(server, options, global);
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

export interface McpServeOptions {
  workspace?: string;
  config?: string;
  profile?: string;
  preload?: string;
  approval?: string;
}

/**
 * `capgate mcp serve`: the gate as an MCP server on stdio — four tools instead of hundreds.
 * Logs go to stderr. Desktop clients start it from a cwd of their choosing (`/` for Claude
 * Desktop), so the workspace and config come from flags or env, and an implicit workspace
 * of `/` or `$HOME` is refused instead of serving the whole disk.
 */
export async function mcpServeCommand(
  options: McpServeOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const env = process.env;
  const { realpathSync } = await import("node:fs");
  const { join, resolve } = await import("node:path");
  const { homedir } = await import("node:os");
  const configPath = options.config ?? global.config ?? nonEmpty(env.CAPGATE_CONFIG);
  const explicitWorkspace = options.workspace ?? nonEmpty(env.CAPGATE_WORKSPACE);
  const { CONFIG_FILE_NAME, createHarness, describeReload, loadConfig, watchConfig } = await import(
    "@capgate/harness"
  );
  // Without --config, the workspace's own capgate.config.json (the cwd of a desktop client means nothing).
  const config = loadConfig(
    configPath ? { path: configPath } : explicitWorkspace ? { cwd: resolve(explicitWorkspace) } : {},
  );
  if (!explicitWorkspace && !config.config.workspace) {
    const cwd = realOrSelf(realpathSync, process.cwd());
    const home = realOrSelf(realpathSync, env.HOME ?? homedir());
    if (cwd === "/" || cwd === home)
      throw new CliError(
        `refusing to serve ${cwd === "/" ? "/" : `your home directory (${cwd})`} as the workspace: it is only the current directory, which desktop MCP clients set as they like`,
        2,
        'pass --workspace /path/to/project (or set CAPGATE_WORKSPACE, or "workspace" in capgate.config.json)',
      );
  }
  const preload = options.preload
    ?.split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const { createGateServer, elicitingApprover } = await import("@capgate/mcp-client");
  // Approvals (--approval on-risk/always, or the config's) are asked of the client's user by elicitation.
  let server: Awaited<ReturnType<typeof createGateServer>> | undefined;
  const approval = parseApproval(options.approval);
  const harness = await createHarness({
    config,
    ...(explicitWorkspace ? { workspace: explicitWorkspace } : {}),
    ...(global.capability?.length ? { capabilityPlugins: global.capability } : {}),
    ...(approval ? { approval } : {}),
    approve: elicitingApprover(() => server),
  });
  // stderr only: stdout is the MCP channel.
  reportCapabilityProblems(harness, global, io);
  let session: ReturnType<typeof harness.createGateSession>;
  try {
    session = harness.createGateSession({
      ...(options.profile ? { profile: options.profile } : {}),
      ...(preload ? { preload } : {}),
    });
  } catch (error) {
    await harness.close();
    throw error;
  }
  const { serveGateOverStdio } = await import("@capgate/mcp-client/stdio");
  server = await createGateServer({
    name: "capgate",
    version: VERSION,
    handlers: session.handlers,
    ...(session.resources ? { resources: session.resources } : {}),
    ...(session.prompts ? { prompts: session.prompts } : {}),
  });
  const servers = Object.keys(config.mcpServers);
  io.err(
    `capgate mcp serve · workspace ${harness.workspace} · config ${config.path ?? "(none)"} · MCP servers ${servers.length ? servers.join(", ") : "(none)"} · trace ${harness.store.pathOf(session.runId)}`,
  );
  const serving = await serveGateOverStdio(server);
  // An edited config file (or SIGHUP) is put in force while serving; the file need not exist yet.
  const watched =
    config.path ?? join(explicitWorkspace ? resolve(explicitWorkspace) : process.cwd(), CONFIG_FILE_NAME);
  const watcher = watchConfig(harness, {
    path: watched,
    onReload: (outcome) => io.err(`capgate mcp serve · ${describeReload(outcome)}`),
    onWatchError: (error) =>
      io.err(`capgate mcp serve · cannot watch ${watched} (${error.message}); SIGHUP still reloads it`),
  });
  const reload = () => void watcher.reload();
  const stop = () => void serving.close();
  // `on`, not `once`: signal-exit (the exit hook that kills child processes) re-raises a
  // signal nobody else listens to, which would end the process before the close below.
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("SIGHUP", reload);
  try {
    await serving.closed;
  } finally {
    watcher.close();
    process.off("SIGHUP", reload);
    await session.close();
    await harness.close();
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
  return 0;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function realOrSelf(realpath: (p: string) => string, path: string): string {
  try {
    return realpath(path);
  } catch {
    return path;
  }
}
