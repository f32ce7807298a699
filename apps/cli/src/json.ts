import type { CliIO } from "./io.js";

/**
 * The --json convention (docs/cli.md): a command that answers once prints ONE JSON
 * document (this); an event stream (run, demo, trace, chat) prints one JSON object per
 * line (printJsonLine). Errors go to stderr as one JSON line (report.ts).
 */
export function printJson(io: CliIO, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/** One event of a stream, one line. */
export function printJsonLine(io: CliIO, value: unknown): void {
  io.out(JSON.stringify(value));
}
