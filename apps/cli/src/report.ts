import {
  describeError as describeTerminalError,
  type ErrorReport as TerminalErrorReport,
} from "@capgate/host/terminal";
import { ExitCode, exitCodeForErrorCode } from "./errors.js";
import { type CliIO, paint } from "./io.js";

/** What the CLI says about one error: the terminal's one line and hint, and the exit code. */
export interface ErrorReport extends TerminalErrorReport {
  exitCode: number;
}

/** Hints by error code, for errors whose message says what but not what to do. */
const HINTS: Record<string, string> = {
  no_model: "`capgate demo` runs offline with a bundled scripted model",
  capability_not_found: "pass a manifest .json, a module, a package directory or a package name",
  no_manifest_export: "a capability package exports its manifest as `manifest`",
};
const MISSING_CONFIG_HINT =
  "give --config an existing file, or leave it out to use ./capgate.config.json when there is one";

/**
 * Turn anything thrown into an ErrorReport (@capgate/host/terminal's describeError), with
 * the CLI's hints and its exit code (SPEC §11): the error's own, else by its code.
 */
export function describeError(error: unknown): ErrorReport {
  const report = describeTerminalError(error);
  if (report.code === "internal")
    return { ...report, hint: "run with --debug for details", exitCode: ExitCode.failure };
  const own = (error as { exitCode?: unknown } | null)?.exitCode;
  const exitCode = typeof own === "number" ? own : exitCodeForErrorCode(report.code);
  if (report.hint !== undefined) return { ...report, exitCode };
  let { message } = report;
  let hint: string | undefined =
    report.code === "invalid_config" && /^The config file .* does not exist\.$/.test(message)
      ? MISSING_CONFIG_HINT
      : HINTS[report.code];
  // The executor writes for the model; a human at a terminal searches with the CLI.
  if (message.includes("Use capability_search")) {
    message = message.replace(/\s*Use capability_search[^.]*\./, "");
    hint = "`capgate search <words>` finds the right tool";
  }
  return { ...report, message, ...(hint ? { hint } : {}), exitCode };
}

/**
 * Print an error the one way every command does: under --json one JSON line
 * `{"error":{code,message,property?,hint?}}` on stderr; otherwise `error: …` on one line
 * plus an optional `hint: …` line. Stack traces only with --debug. Returns the exit code.
 */
export function reportError(
  io: CliIO,
  error: unknown,
  options: { json?: boolean; debug?: boolean } = {},
): number {
  const report = describeError(error);
  if (options.json) {
    const { exitCode: _exit, ...body } = report;
    io.err(JSON.stringify({ error: body }));
  } else {
    const p = paint(io);
    const where =
      report.property && !report.message.includes(report.property) ? p.dim(` (at ${report.property})`) : "";
    io.err(`${p.red("error:")} ${report.message}${where}`);
    if (report.hint) io.err(p.dim(`hint: ${report.hint}`));
  }
  if (options.debug && error instanceof Error && error.stack) io.err(error.stack);
  return report.exitCode;
}
