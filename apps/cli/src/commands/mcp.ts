import type { McpTarget } from "@capgate/host";
import { CapgateError } from "@capgate/schema";
import {
  type GlobalOptions,
  intOption,
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

/** A configured server by name (through the harness, as a run reaches it), or one named by `--url`/`--command`. */
async function openTarget(
  server: string | undefined,
  options: McpTargetOptions,
  global: GlobalOptions,
): Promise<McpTarget> {
  const { adHocMcpTarget, configuredMcpTarget } = await import("@capgate/host");
  if (server !== undefined) {
    if (options.url || options.command)
      throw new CliError(
        `give a configured server's name or --url/--command, not both (got '${server}' too)`,
        2,
      );
    return configuredMcpTarget(await openHarness(global, {}), server);
  }
  if (Boolean(options.url) === Boolean(options.command)) {
    throw new CliError(
      'give a configured server\'s name, or exactly one of --url URL or --command "CMD ARGS"',
      2,
    );
  }
  const timeoutMs = intOption(options.timeout, "--timeout", 30_000, { unit: "ms" });
  return adHocMcpTarget(
    options.url ? { url: options.url } : { command: options.command as string },
    timeoutMs,
  ).catch((error: unknown) => {
    throw isCode(error, "usage") ? new CliError(`--command: ${error.message}`, 2) : error;
  });
}

export async function mcpToolsCommand(
  server: string | undefined,
  options: McpTargetOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const target = await openTarget(server, options, global);
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
  const target = await openTarget(undefined, options, {});
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
 * `capgate mcp serve`: the gate as an MCP server on stdio (@capgate/host's serveGateOnStdio).
 * Logs go to stderr. The workspace and config come from flags or the environment, since
 * desktop clients start it from a directory of their choosing.
 */
export async function mcpServeCommand(
  options: McpServeOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const configPath = options.config ?? global.config;
  const preload = options.preload
    ?.split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const approval = parseApproval(options.approval);
  const { serveGateOnStdio } = await import("@capgate/host");
  const gate = await serveGateOnStdio({
    ...(configPath ? { configPath } : {}),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(preload ? { preload } : {}),
    ...(approval ? { approval } : {}),
    ...(global.capability?.length ? { capabilityPlugins: global.capability } : {}),
    version: VERSION,
    log: (line) => io.err(line),
    // stderr only: stdout is the MCP channel.
    onHarness: (harness) => reportCapabilityProblems(harness, global, io),
    // SIGTERM/SIGINT close the gate, SIGHUP reloads the config.
    signals: true,
  }).catch((error: unknown) => {
    throw isCode(error, "implicit_workspace")
      ? new CliError(
          error.message,
          2,
          'pass --workspace /path/to/project (or set CAPGATE_WORKSPACE, or "workspace" in capgate.config.json)',
        )
      : error;
  });
  await gate.closed;
  return 0;
}

const isCode = (error: unknown, code: string): error is CapgateError =>
  CapgateError.isInstance(error) && error.code === code;
