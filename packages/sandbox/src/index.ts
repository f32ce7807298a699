// The OS sandbox: every command the model causes runs under bubblewrap (or, where a host
// turned the sandbox off, contained in a pid namespace), its network through the egress
// proxy, its output capped; background processes end with their run. Shell strings pass an
// injected policy first (`check`: @capgate/shell-policy's checkShellCommand). Node-only.

export type {
  BackgroundOutput,
  BackgroundProcessesOptions,
  BackgroundProcessInfo,
  StartProcessOptions,
  StartShellOptions,
} from "./background-processes.js";
export {
  BACKGROUND_PROCESSES_KEY,
  BackgroundProcesses,
  backgroundProcesses,
} from "./background-processes.js";
export { HeadTailCapture } from "./output-capture.js";
export type { ContainedCommand, Containment } from "./process-containment.js";
export { containCommand } from "./process-containment.js";
export type { ProcessOwner } from "./process-owner.js";
export { currentOwner, ownerGone, parseOwner } from "./process-owner.js";
export type { ProcessResult, RunProcessOptions } from "./process-runner.js";
export { describeExit, runProcess } from "./process-runner.js";
export type { RunCommandLineSandboxedOptions } from "./run-command-line.js";
export { runCommandLineSandboxed } from "./run-command-line.js";
export type { RunShellOptions } from "./run-shell.js";
export { runShell } from "./run-shell.js";
export type { SandboxedCommand, SandboxOptions } from "./sandbox.js";
export { bashArgv, SCRUBBED_ENV, sandboxCommand, scrubEnv } from "./sandbox.js";
export { findSystemBinary, probeBwrap, systemBash } from "./sandbox-host.js";
export { policyFilesOfRunningSandboxes, recoverInterruptedSandboxes } from "./sandbox-journal.js";
export { closeEgressProxies } from "./sandbox-proxy.js";
export type { RunSandboxedOptions, SandboxTarget } from "./sandbox-run.js";
export { runSandboxed, sandboxTarget } from "./sandbox-run.js";
export type { OnAsk, ShellCheck, ShellGateOptions, ShellVerdict } from "./shell-check.js";
export { assertShellAllowed, shellCommandPolicy, shellPolicyCheck } from "./shell-check.js";
export {
  assertStateDirPlacement,
  STATE_DIR_ENTRIES,
  stateDirFor,
  stateDirPlacementProblem,
} from "./state-dir.js";
