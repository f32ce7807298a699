/**
 * `capgate sandbox-exec --workspace DIR [--config FILE] -- COMMAND`: run one bash command
 * line inside capgate's OS sandbox (`runCommandLineSandboxed` of @capgate/sandbox: DIR
 * writable and everything else read-only, secrets and the state directory hidden, the network
 * only through capgate's proxy, no display or session bus). Output and exit status are the
 * command's own; the sandbox's after-command notices go to stderr; 125 when it was not run.
 *
 * It is what `capgate hook claude-code` rewrites an allowed Bash call to when the config
 * says `"hook": { "sandbox": true }`, so it runs before every such call: bin.ts comes here
 * without commander, and this file loads @capgate/sandbox (and through it @capgate/tools) only
 * once the arguments are good.
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
  let sandbox: typeof import("@capgate/sandbox");
  try {
    sandbox = await import("@capgate/sandbox");
  } catch (error) {
    process.stderr.write(
      `capgate sandbox-exec: the command was not run: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 125;
  }
  return sandbox.runCommandLineSandboxed({
    workspace: parsed.workspace,
    command: parsed.command,
    ...(parsed.config ? { configPath: parsed.config } : {}),
    cwd: process.cwd(),
  });
}
