import { CliError, ExitCode } from "./errors.js";
import { type CliIO, outputClosed, processIO } from "./io.js";
import { buildProgram, CommanderError } from "./program.js";
import { reportError } from "./report.js";

export type { CliIO } from "./io.js";
export { VERSION } from "./version.js";

/** A commander usage error as one line plus a hint (its "(Did you mean …?)" becomes the hint). */
function usageError(error: CommanderError, argv: string[]): CliError {
  const lines = error.message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const message = (lines[0] ?? "usage error").replace(/^error:\s*/, "");
  const suggestion = lines.find((l) => /^\(Did you mean /.test(l));
  const guess = suggestion ? /^\(Did you mean (.+)\?\)$/.exec(suggestion)?.[1] : undefined;
  const command = argv.find((a) => !a.startsWith("-"));
  const help =
    command && !message.startsWith("unknown command") ? `capgate ${command} --help` : "capgate --help";
  return new CliError(
    message,
    ExitCode.rejected,
    guess ? `did you mean '${guess}'?` : `run \`${help}\` for usage`,
    {
      code: "usage",
    },
  );
}

/**
 * Run the CLI with `argv` (without node and the script) and return the exit code.
 * Errors are one clear line on stderr (plus a hint), never a stack trace unless --debug;
 * under --json they are one JSON line on stderr. A closed output pipe is not an error.
 */
export async function runCli(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code: number = ExitCode.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  const json = argv.includes("--json");
  const debug = argv.includes("--debug");
  try {
    await program.parseAsync(argv, { from: "user" });
    return outputClosed(io) ? ExitCode.ok : code;
  } catch (error) {
    if (outputClosed(io)) return ExitCode.ok;
    if (error instanceof CommanderError) {
      // --help and --version exit 0; usage errors are rejections.
      if (error.exitCode === 0) return ExitCode.ok;
      return reportError(io, usageError(error, argv), { json, debug });
    }
    return reportError(io, error, { json, debug });
  }
}
