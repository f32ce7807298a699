import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";

/**
 * `capgate sandbox-exec --workspace DIR [--config FILE] -- COMMAND`: run one bash command
 * line inside capgate's OS sandbox — the same bubblewrap sandbox as `shell.run`
 * (`sandboxCommand` of @capgate/tools): DIR writable and everything else read-only, secrets
 * and $CAPGATE_HOME hidden, the network only through capgate's proxy (per the config's
 * `shell.network` and `web.allowHosts`), no display or session bus. Output and exit status
 * are the command's own; the sandbox's after-command notices go to stderr.
 *
 * It is what `capgate hook claude-code` rewrites an allowed Bash call to when the config
 * says `"hook": { "sandbox": true }`, so it runs before every such call: it loads only
 * @capgate/tools, and the config file as JSON (the hook validated the command already).
 */
export const SANDBOX_EXEC_USAGE =
  "usage: capgate sandbox-exec --workspace DIR [--config FILE] -- COMMAND   (runs COMMAND with bash inside capgate's sandbox)";

interface Parsed {
  workspace: string;
  config?: string;
  command: string;
}

function parse(argv: readonly string[]): Parsed | string {
  let workspace: string | undefined;
  let config: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      const rest = argv.slice(i + 1);
      if (rest.length !== 1) return "give the command line as one argument after --";
      if (!workspace) return "--workspace DIR is required";
      return { workspace, command: rest[0]!, ...(config ? { config } : {}) };
    }
    const value = argv[i + 1];
    if ((arg === "--workspace" || arg === "--config") && value !== undefined) {
      if (arg === "--workspace") workspace = value;
      else config = value;
      i++;
      continue;
    }
    return `unknown argument '${arg}'`;
  }
  return "the command line is missing (after --)";
}

/** The parts of capgate.config.json the sandbox reads: shell (network, bwrap), web.allowHosts, env. */
interface SandboxConfig {
  stateDir?: string;
  shell?: { network?: "none" | "guarded" | "full"; bwrap?: string };
  web?: { allowHosts?: string[] };
  env?: { inherit?: string[]; set?: Record<string, string> };
}

function readConfig(path: string | undefined): SandboxConfig {
  if (path === undefined) return {};
  if (!existsSync(path)) throw new Error(`the config file ${path} does not exist`);
  const value = JSON.parse(readFileSync(path, "utf8")) as unknown;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error(`${path} must hold a JSON object`);
  return value as SandboxConfig;
}

export async function runSandboxExec(argv: readonly string[]): Promise<number> {
  if (argv[0] === "--help" || argv[0] === "-h") {
    process.stdout.write(`${SANDBOX_EXEC_USAGE}\n`);
    return 0;
  }
  const parsed = parse(argv);
  if (typeof parsed === "string") {
    process.stderr.write(`error: ${parsed}\nhint: ${SANDBOX_EXEC_USAGE}\n`);
    return 2;
  }
  const cwd = process.cwd();
  let wrapped: Awaited<ReturnType<typeof import("@capgate/sandbox").sandboxCommand>>;
  try {
    const configPath =
      parsed.config && (isAbsolute(parsed.config) ? parsed.config : resolve(cwd, parsed.config));
    const config = readConfig(configPath);
    const [{ bashArgv, sandboxCommand, stateDirFor }, { minimalEnv }] = await Promise.all([
      import("@capgate/sandbox"),
      import("@capgate/tools"),
    ]);
    // The environment shell.run gives a command (the minimal set, plus what the config names),
    // not Claude Code's whole environment: API keys and tokens stay outside.
    const env = { ...minimalEnv(process.env, config.env?.inherit ?? []), ...(config.env?.set ?? {}) };
    // The state directory the harness uses for this config (its stateDir, else $CAPGATE_HOME …): hidden from the command.
    const stateDir = stateDirFor(
      typeof config.stateDir === "string" ? config.stateDir : undefined,
      configPath ? dirname(configPath) : cwd,
    );
    wrapped = await sandboxCommand(bashArgv(parsed.command), {
      workspace: parsed.workspace,
      cwd,
      env,
      stateDir,
      // The hook's opt-in asks for the sandbox: a `"sandbox": "off"` elsewhere in the config does not turn it off here.
      shell: { ...(config.shell ?? {}), sandbox: "on" },
      ...(config.web ? { web: config.web } : {}),
    });
  } catch (error) {
    process.stderr.write(
      `capgate sandbox-exec: the command was not run: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 125;
  }
  const code = await new Promise<number>((done) => {
    const child = spawn(wrapped.file, wrapped.args, { cwd, env: wrapped.env, stdio: "inherit" });
    child.on("error", (error) => {
      process.stderr.write(`capgate sandbox-exec: ${error.message}\n`);
      done(125);
    });
    child.on("close", (status, signal) =>
      done(status ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)),
    );
  });
  for (const notice of wrapped.release()) process.stderr.write(`[capgate] ${notice}\n`);
  return code;
}
