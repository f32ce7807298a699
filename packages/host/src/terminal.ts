// The terminal pieces of a frontend (the capgate CLI is one): EPIPE-safe output, colour,
// a spinner, run events as lines, Ctrl-C, a chat REPL, approval and MCP elicitation prompts. Node only; no harness is loaded here.

export { shownArguments, terminalApprover } from "./terminal/approver.js";
export { CHAT_HELP, chatOnTerminal } from "./terminal/chat-repl.js";
export { terminalElicitation } from "./terminal/elicitation.js";
export type { ErrorReport } from "./terminal/error-report.js";
export { describeError } from "./terminal/error-report.js";
export type { Paint, TerminalIO } from "./terminal/io.js";
export { outputClosed, paint, processIO } from "./terminal/io.js";
export type { Output } from "./terminal/output.js";
export { createOutput } from "./terminal/output.js";
export type { RunEventPrinting } from "./terminal/run-output.js";
export { interruptible, printRunEvents } from "./terminal/run-output.js";
export type { Spinner } from "./terminal/spinner.js";
export { createSpinner } from "./terminal/spinner.js";
