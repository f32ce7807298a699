import { CliError } from "./errors.js";
import { type CliIO, paint, processIO } from "./io.js";
import { buildProgram, CommanderError } from "./program.js";

export type { CliIO } from "./io.js";
export { VERSION } from "./version.js";

/**
 * Run the CLI with `argv` (without node and the script) and return the exit code.
 * Errors are one clear line on stderr (plus a hint), never a stack trace unless --debug.
 */
export async function runCli(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; usage errors are rejections.
      return error.exitCode === 0 ? 0 : 2;
    }
    const p = paint(io);
    const debug = argv.includes("--debug");
    if (error instanceof CliError) {
      io.err(`${p.red("error:")} ${error.message}`);
      if (error.hint) io.err(p.dim(`hint: ${error.hint}`));
      if (debug && error.stack) io.err(error.stack);
      return error.exitCode;
    }
    // Loaded only on this path: the protocol package brings ajv, which --version does not need.
    const { CapgateError } = await import("@capgate/schema");
    if (CapgateError.isInstance(error)) {
      const where = error.property ? p.dim(` (at ${error.property})`) : "";
      io.err(`${p.red("error:")} ${error.message}${where}`);
      if (debug && error.stack) io.err(error.stack);
      return 1;
    }
    io.err(`${p.red("error:")} ${error instanceof Error ? error.message : String(error)}`);
    if (debug && error instanceof Error && error.stack) io.err(error.stack);
    else io.err(p.dim("hint: run with --debug for details"));
    return 1;
  }
}
