import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunningServer } from "@capgate/server";
import { shellForTests } from "@capgate/test-system-parts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, "..", "..", "..");
/** The built CLI, as a checkout would run it. */
export const CLI_BIN = join(REPO, "apps", "cli", "dist", "bin.js");
const require = createRequire(import.meta.url);

/** The installed entry of a pinned npm MCP server (run with node; never downloaded at test time). */
export function serverEntry(
  pkg:
    | "server-everything"
    | "server-filesystem"
    | "server-memory"
    | "server-pdf"
    | "server-sequential-thinking",
): string {
  // server-pdf exports only its root (dist/server.js); its bin is dist/index.js beside it.
  if (pkg === "server-pdf")
    return join(dirname(require.resolve("@modelcontextprotocol/server-pdf")), "index.js");
  const dir = dirname(require.resolve(`@modelcontextprotocol/${pkg}/package.json`));
  return join(dir, "dist", "index.js");
}

export const everything = () => ({
  command: process.execPath,
  args: [serverEntry("server-everything"), "stdio"],
});

/** A workspace, a state dir and a config file in a fresh temp dir. */
export function sandbox(config: Record<string, unknown>, files: Record<string, string> = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-e2e-")));
  const workspace = join(root, "project");
  const home = join(root, "home");
  mkdirSync(workspace);
  mkdirSync(home);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(workspace, name)), { recursive: true });
    writeFileSync(join(workspace, name), text);
  }
  const configFile = join(root, "capgate.config.json");
  // Without a working bubblewrap (and not required), commands the gate starts run unsandboxed.
  const shell = { ...shellForTests(), ...(config.shell as object | undefined) };
  writeFileSync(
    configFile,
    JSON.stringify(Object.keys(shell).length ? { ...config, shell } : config, null, 2),
  );
  return { root, workspace, home, configFile };
}

export type Sandbox = ReturnType<typeof sandbox>;

/** `capgate serve`'s server in this process over a sandbox: port 0, its workspace, config and state dir. */
export async function serveSandbox(box: Sandbox, token: string): Promise<RunningServer> {
  // Imported here, so test files that never start a server do not load it.
  const { startServer } = await import("@capgate/server");
  return startServer({
    port: 0,
    token,
    workspace: box.workspace,
    configPath: box.configFile,
    stateDir: box.home,
  });
}

/** Environment for a spawned capgate: the machine's, with its own state dir and nothing of ours. */
export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("CAPGATE_")) env[k] = v;
  return { ...env, CAPGATE_HOME: home, ...extra };
}

/** An SDK client on the gate over stdio (`capgate mcp serve`). */
export async function stdioGate(args: string[], options: { cwd: string; env: Record<string, string> }) {
  const client = new Client({ name: "e2e", version: "0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, ...args],
    cwd: options.cwd,
    env: options.env,
    stderr: "pipe",
  });
  await client.connect(transport);
  return client;
}

/** An SDK client on `capgate mcp serve` over a sandbox's workspace and config (run from `cwd`, default the sandbox's root). */
export function stdioGateOn(box: Sandbox, cwd: string = box.root): Promise<Client> {
  return stdioGate(["mcp", "serve", "--workspace", box.workspace, "--config", box.configFile], {
    cwd,
    env: childEnv(box.home),
  });
}

/** The text blocks of a tool result, joined by newlines. */
export const resultText = (r: unknown): string =>
  ((r as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("\n");

/** `capability_call` of one gate tool, as a client of the gate makes it. */
export const capabilityCall = (client: Client, tool: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: "capability_call", arguments: { tool, arguments: args } });

/** An SDK client on the gate over Streamable HTTP (`/mcp`). */
export async function httpGate(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "e2e", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** An SDK client straight on an upstream stdio server (what the gate must reproduce). */
export async function direct(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "e2e-direct", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "pipe" }));
  return client;
}
