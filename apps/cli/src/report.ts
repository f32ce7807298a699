import { CliError, ExitCode, exitCodeForErrorCode } from "./errors.js";
import { type CliIO, paint } from "./io.js";

/** What the CLI says about one error: one line, an optional hint, the exit code. */
export interface ErrorReport {
  code: string;
  message: string;
  property?: string;
  hint?: string;
  /** Every problem, each at its own property (config errors). */
  problems?: Array<{ property: string; message: string }>;
  exitCode: number;
}

/** Hints by error code, for errors whose message says what but not what to do. */
const HINTS: Record<string, string> = {
  no_model: "`capgate demo` runs offline with a bundled scripted model",
};
const MISSING_CONFIG_HINT =
  "give --config an existing file, or leave it out to use ./capgate.config.json when there is one";

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  property?: unknown;
  problems?: unknown;
  exitCode?: unknown;
}

const flat = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();

/**
 * Turn anything thrown into an ErrorReport. A config error with several problems names
 * each at its own property (`modle: unexpected property…; approval: must be one of…`),
 * never one problem's message tagged with another's property.
 */
export function describeError(error: unknown): ErrorReport {
  if (error instanceof CliError) {
    return {
      code: error.code,
      message: flat(error.message),
      ...(error.property ? { property: error.property } : {}),
      ...(error.hint ? { hint: error.hint } : {}),
      exitCode: error.exitCode,
    };
  }
  const e = (typeof error === "object" && error !== null ? error : {}) as ErrorLike;
  if (typeof e.code === "string" && typeof e.message === "string" && /^[a-z][a-z0-9_]*$/.test(e.code)) {
    const problems = Array.isArray(e.problems)
      ? (e.problems as Array<{ property?: string; path?: string; message?: string }>)
      : [];
    if (e.code === "invalid_config" && problems.length > 0) {
      const source = /^(.*?) is invalid/.exec(e.message)?.[1] ?? "the config";
      const syntax =
        problems.length === 1 ? /^not valid JSON (.*)$/.exec(String(problems[0]?.message ?? "")) : null;
      if (syntax)
        return {
          code: e.code,
          message: `${source} is not valid JSON ${flat(syntax[1] ?? "")}`,
          hint: "JSON allows no trailing commas or comments; keys and strings take double quotes",
          exitCode: ExitCode.failure,
        };
      const list = problems
        .map((p) => `${p.property || p.path || "(root)"}: ${flat(String(p.message ?? ""))}`)
        .join("; ");
      return {
        code: e.code,
        message: `${source} is invalid — ${list}`,
        ...(problems.length === 1 && problems[0]?.property ? { property: problems[0].property } : {}),
        problems: problems.map((p) => ({
          property: p.property || p.path || "",
          message: flat(String(p.message ?? "")),
        })),
        hint: "the config's JSON Schema is @capgate/harness/config.schema.json (editors complete it via $schema)",
        exitCode: ExitCode.failure,
      };
    }
    const property = typeof e.property === "string" && e.property !== "" ? e.property : undefined;
    let message = flat(e.message);
    let hint: string | undefined =
      e.code === "invalid_config" && /^The config file .* does not exist\.$/.test(message)
        ? MISSING_CONFIG_HINT
        : HINTS[e.code];
    // The executor writes for the model; a human at a terminal searches with the CLI.
    if (message.includes("Use capability_search")) {
      message = message.replace(/\s*Use capability_search[^.]*\./, "");
      hint = "`capgate search <words>` finds the right tool";
    }
    return {
      code: e.code,
      message,
      ...(property ? { property } : {}),
      ...(hint ? { hint } : {}),
      exitCode: typeof e.exitCode === "number" ? e.exitCode : exitCodeForErrorCode(e.code),
    };
  }
  return {
    code: "internal",
    message: flat(error instanceof Error ? error.message : String(error)),
    hint: "run with --debug for details",
    exitCode: ExitCode.failure,
  };
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
