import { resolve } from "node:path";
import { type GlobalOptions, intOption, reportCapabilityProblems } from "../context.js";
import { type CliIO, paint } from "../io.js";

export interface ServeOptions {
  host?: string;
  port?: string;
  workspace?: string;
  token?: string;
  database?: string;
}

/** `capgate serve`: the HTTP server (the one place the CLI imports an app). Runs until SIGTERM/SIGINT. */
export async function serveCommand(options: ServeOptions, global: GlobalOptions, io: CliIO): Promise<number> {
  const port = intOption(options.port, "--port", 7777, { min: 0, max: 65535 });
  const { closeOnSignals, startServer } = await import("@capgate/server");
  const { describeReload } = await import("@capgate/harness");
  const server = await startServer({
    host: options.host ?? "127.0.0.1",
    port,
    ...(options.workspace ? { workspace: options.workspace } : {}),
    // Without --config, the workspace's own capgate.config.json, as `capgate mcp serve` reads it.
    ...(options.workspace && !global.config ? { cwd: resolve(options.workspace) } : {}),
    ...(options.token ? { token: options.token } : {}),
    ...(options.database ? { database: options.database } : {}),
    ...(global.config ? { configPath: global.config } : {}),
    // --capability, as for run/call/capabilities: paths from the current directory.
    ...(global.capability?.length ? { capabilityPlugins: global.capability } : {}),
    // An edited config file (or SIGHUP) is put in force while serving.
    watchConfig: true,
    onConfigReload: (outcome) => io.err(`capgate serve · ${describeReload(outcome)}`),
    onConfigWatchError: (path, error) =>
      io.err(`capgate serve · cannot watch ${path} (${error.message}); SIGHUP still reloads it`),
  });
  for (const notice of server.harness.notices) io.err(notice);
  reportCapabilityProblems(server.harness, global, io);
  const p = paint(io);
  io.out(
    `${p.bold("capgate serve")} listening on ${server.url} ${p.dim(`(workspace ${server.harness.workspace})`)}`,
  );
  const servers = Object.keys(server.harness.config.mcpServers ?? {});
  io.out(
    p.dim(
      `config ${server.harness.configPath ?? "(none)"} · MCP servers ${servers.length ? servers.join(", ") : "(none)"}`,
    ),
  );
  io.out(`viewer: ${p.cyan(server.viewerUrl)}`);
  if (server.runs === "queue") io.out(p.dim("runs are queued in PostgreSQL for `capgate worker` nodes"));
  io.out(p.dim("the token is in the link's fragment: it never reaches the server's logs"));
  // Shuts down gracefully (runs aborted, MCP sessions and the browser closed) and exits.
  closeOnSignals(server);
  process.on("SIGHUP", () => void server.reloadConfig());
  await new Promise<never>(() => undefined);
  return 0;
}
