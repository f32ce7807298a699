/** An error the CLI reports as one line (plus a hint) with a given exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}
