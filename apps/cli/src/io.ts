// The CLI's terminal: @capgate/host's terminal pieces (output, colour, prompts).
export type { Paint, TerminalIO as CliIO } from "@capgate/host/terminal";
export { outputClosed, paint, processIO } from "@capgate/host/terminal";
