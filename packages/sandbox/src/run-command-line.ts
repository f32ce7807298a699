import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { minimalEnv } from "@capgate/tools";
import { bashArgv, type SandboxedCommand, sandboxCommand } from "./sandbox.js";
import { stateDirFor } from "./state-dir.js";

export interface RunCommandLineSandboxedOptions {
  /** The one directory the command may write (the project). */
  workspace: string;
  /** The bash command line, run as it is (check it with the shell policy first). */
  command: string;
  /** capgate.config.json whose sandbox-relevant parts apply (relative to `cwd`); none: the defaults. */
  configPath?: string;
  /** Working directory of the command (default `process.cwd()`). */
  cwd?: string;
  /** The environment the command's minimal one is taken from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Where messages go (default: process.stderr): why the command was not run, and the
   * sandbox's notices after it (`[capgate] …`, e.g. a link planted in `.git` removed).
   */
  stderr?: (text: string) => void;
}

/** The parts of capgate.config.json the sandbox reads: stateDir, shell (network, bwrap), web.allowHosts, env. */
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

/**
 * Run one bash command line inside capgate's OS sandbox — the same bubblewrap sandbox as
 * `shell.run`: the workspace writable and everything else read-only, secrets and the state
 * directory hidden, the network only through capgate's proxy (per the config's
 * `shell.network` and `web.allowHosts`), no display or session bus, the environment
 * `shell.run` gives a command. The sandbox is on whatever the config's `shell.sandbox` says:
 * whoever calls this asked for it. stdio is inherited; the result is the command's exit code
 * (128 + the signal when one ended it), or 125 when it could not be run (a missing or
 * unreadable config, no usable bubblewrap), with the reason on `stderr`.
 *
 * It is `capgate sandbox-exec`, which the Claude Code hook rewrites a Bash call to when its
 * config says `"hook": { "sandbox": true }`: it runs before every such call, so it reads the
 * config as plain JSON (the hook validated what it needs) and loads nothing of capgate but
 * this package and `@capgate/tools`.
 */
export async function runCommandLineSandboxed(options: RunCommandLineSandboxedOptions): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const source = options.env ?? process.env;
  const stderr = options.stderr ?? ((text: string) => void process.stderr.write(text));
  let wrapped: SandboxedCommand;
  try {
    const configPath =
      options.configPath &&
      (isAbsolute(options.configPath) ? options.configPath : resolve(cwd, options.configPath));
    const config = readConfig(configPath);
    // The environment shell.run gives a command (the minimal set, plus what the config names),
    // not the caller's whole environment: API keys and tokens stay outside.
    const env = { ...minimalEnv(source, config.env?.inherit ?? []), ...(config.env?.set ?? {}) };
    // The state directory the harness uses for this config (its stateDir, else $CAPGATE_HOME …): hidden from the command.
    const stateDir = stateDirFor(
      typeof config.stateDir === "string" ? config.stateDir : undefined,
      configPath ? dirname(configPath) : cwd,
      source,
    );
    wrapped = await sandboxCommand(bashArgv(options.command), {
      workspace: options.workspace,
      cwd,
      env,
      stateDir,
      // The caller asked for the sandbox: a `"sandbox": "off"` elsewhere in the config does not turn it off here.
      shell: { ...(config.shell ?? {}), sandbox: "on" },
      ...(config.web ? { web: config.web } : {}),
    });
  } catch (error) {
    stderr(
      `capgate sandbox-exec: the command was not run: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 125;
  }
  const code = await new Promise<number>((done) => {
    const child = spawn(wrapped.file, wrapped.args, { cwd, env: wrapped.env, stdio: "inherit" });
    child.on("error", (error) => {
      stderr(`capgate sandbox-exec: ${error.message}\n`);
      done(125);
    });
    child.on("close", (status, signal) =>
      done(status ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)),
    );
  });
  for (const notice of wrapped.release()) stderr(`[capgate] ${notice}\n`);
  return code;
}
