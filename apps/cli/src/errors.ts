/**
 * Exit codes of every `capgate` command (SPEC §11). One table, so a new command cannot
 * invent its own meaning for 2.
 */
export const ExitCode = {
  /** Done: the command did what was asked (also: the output pipe closed early). */
  ok: 0,
  /** A failure while doing it: a tool failed, an MCP server crashed or timed out, a run errored, a bad config. */
  failure: 1,
  /** Rejected before doing anything: usage error, unknown tool/profile/command, invalid arguments, policy. */
  rejected: 2,
  /** `run`: the model marked the goal impossible. */
  impossible: 3,
  /** `run`: the step limit was reached. */
  stepLimit: 4,
  /** Interrupted (Ctrl-C). */
  aborted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the CLI reports as one line (plus a hint) with a given exit code. */
export class CliError extends Error {
  readonly code: string;
  readonly property: string | undefined;
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failure,
    readonly hint?: string,
    options: { code?: string; property?: string } = {},
  ) {
    super(message);
    this.name = "CliError";
    this.code = options.code ?? (exitCode === ExitCode.rejected ? "usage" : "error");
    this.property = options.property;
  }
}

/**
 * Error codes (of CapgateError) that mean "rejected before anything ran" → exit 2.
 * Everything else a command throws — an MCP server that crashed or timed out, a network
 * error, a model error — is a failure → exit 1.
 */
const REJECTION_CODES = new Set([
  "unknown_tool",
  "unknown_profile",
  "invalid_profile",
  "invalid_arguments",
  "invalid_json",
  "policy_denied",
  "approval_denied",
  "invalid_workspace",
  "implicit_workspace",
  "unknown_mcp_server",
  "capability_not_found",
  "forbidden_host",
  "usage",
  // capgate eval: a bad suite or option, found before any run.
  "invalid_suite",
  "unknown_task",
  "invalid_mode",
  "code_mode_unavailable",
  "results_mismatch",
]);

export function exitCodeForErrorCode(code: string): number {
  return REJECTION_CODES.has(code) ? ExitCode.rejected : ExitCode.failure;
}
/** Exit codes of `capgate run`: 0 finished, 3 impossible, 4 step limit, 130 aborted, 1 error. */
export function exitCodeForOutcome(outcome: string): number {
  switch (outcome) {
    case "finished":
      return 0;
    case "impossible":
      return 3;
    case "step_limit":
      return 4;
    case "aborted":
      return 130;
    default:
      return 1;
  }
}
