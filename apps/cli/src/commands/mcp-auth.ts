import type { McpServerConfig } from "@capgate/mcp-client";
import { type GlobalOptions, intOption, loadCliConfig, openHarness } from "../context.js";
import { ExitCode } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { VERSION } from "../version.js";

interface ConfiguredServers {
  servers: Record<string, McpServerConfig>;
  stateDir: string;
  /** The entry of the server `name`; an error naming the configured ones when there is none. */
  pick: (name: string) => McpServerConfig;
}

/** The configured servers and where logins live: the harness's state directory ($CAPGATE_HOME, or the config's stateDir). */
async function configured(global: GlobalOptions): Promise<ConfiguredServers> {
  const { stateDirFor } = await import("@capgate/sandbox");
  const { configuredMcpServer } = await import("@capgate/host");
  const { config, baseDir, mcpServers: servers } = await loadCliConfig(global);
  const stateDir = stateDirFor(config.stateDir, baseDir, process.env);
  return { servers, stateDir, pick: (name) => configuredMcpServer(servers, name) };
}

/**
 * `capgate mcp login <server>`: prints the authorization URL, waits for the redirect on
 * 127.0.0.1 and stores the tokens (0600) under $CAPGATE_HOME/mcp-auth/. It never opens a
 * browser: the person opens the URL, on this machine (the redirect goes to 127.0.0.1).
 */
export async function mcpLoginCommand(
  server: string,
  options: { timeout?: string },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const timeoutMs = intOption(options.timeout, "--timeout", 300_000, { unit: "ms" });
  const { pick, stateDir } = await configured(global);
  const entry = pick(server);
  const { fileAuthStore, loginMcpServer } = await import("@capgate/mcp-client/stdio");
  const { describeAuthStatus } = await import("@capgate/host");
  const p = paint(io);
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  try {
    const result = await loginMcpServer(server, entry, {
      store: fileAuthStore(stateDir),
      timeoutMs,
      signal: abort.signal,
      clientInfo: { name: "capgate", version: VERSION },
      onAuthorizationUrl: (url) => {
        io.out(`Open this URL in a browser on this machine to log in to ${p.bold(server)}:`);
        io.out(`  ${url.href}`);
        io.out(p.dim(`Waiting for the redirect to ${url.searchParams.get("redirect_uri") ?? "127.0.0.1"} …`));
      },
    });
    io.out(
      `${p.green("logged in")} to ${p.bold(server)} (${describeAuthStatus(result.status)}); it lists ${result.tools} tool(s).`,
    );
    return 0;
  } finally {
    process.removeListener("SIGINT", onSignal);
  }
}

/** `capgate mcp logout <server>`: forgets the server's tokens and client registration. */
export async function mcpLogoutCommand(
  server: string,
  _options: Record<string, never>,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const { pick, stateDir } = await configured(global);
  pick(server);
  const { fileAuthStore, logoutMcpServer } = await import("@capgate/mcp-client/stdio");
  const had = await logoutMcpServer(server, fileAuthStore(stateDir));
  io.out(had ? `logged out of ${server}` : `${server} had no stored login`);
  return 0;
}

/**
 * `capgate mcp status`: each configured server's connection (tries to connect within
 * `--timeout`, default 5 s; `--offline` does not) and login state. Never prints a token.
 */
export async function mcpStatusCommand(
  options: { json?: boolean; offline?: boolean; timeout?: string },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const budget = intOption(options.timeout, "--timeout", 5_000, { unit: "ms" });
  const { servers, stateDir } = await configured(global);
  const { describeMcpServerStatus, mcpServerStatus } = await import("@capgate/host");
  const offline = options.offline === true || Object.keys(servers).length === 0;
  // Servers start through the harness, as in a run: sandboxed where their entry says so.
  const harness = offline ? undefined : await openHarness(global, {});
  let rows: Awaited<ReturnType<typeof mcpServerStatus>>;
  try {
    rows = await mcpServerStatus(servers, {
      stateDir,
      timeoutMs: budget,
      offline,
      ...(harness?.mcp ? { pool: harness.mcp } : {}),
    });
  } finally {
    await harness?.close();
  }
  // A script (or CI) checking its servers learns from the exit code that one did not start.
  const code = rows.some((r) => r.connection.state === "failed") ? ExitCode.failure : ExitCode.ok;
  if (options.json) {
    io.out(JSON.stringify(rows, null, 2));
    return code;
  }
  const p = paint(io);
  if (rows.length === 0) io.out(p.dim("no MCP servers configured (mcpServers in capgate.config.json)"));
  for (const row of rows) io.out(describeMcpServerStatus(row, p));
  return code;
}
