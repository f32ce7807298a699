import { PolicyDeniedError } from "./errors.js";
import { type ProcessResult, type RunProcessOptions, runProcess } from "./process-runner.js";
import { checkShellCommand } from "./shell-policy.js";
import type { ShellPolicyConfig } from "./types.js";

/**
 * What to do when the policy answers "ask": `"deny"` (default) refuses; `"allow"` runs it
 * because the caller already obtained approval (the capability's `policies` entry is
 * `shellCommandPolicy`, so the executor asked the operator before the handler ran); a
 * function asks now.
 */
export type OnAsk = "deny" | "allow" | ((reason: string) => Promise<boolean>);

export interface ShellGateOptions {
  /** The command line, run by `/bin/sh -c`. */
  command: string;
  /** Extra deny/ask rules (pass `ctx.policy.shell`). The built-in GUI-opener rules always apply. */
  policy?: ShellPolicyConfig;
  onAsk?: OnAsk;
}

export interface RunShellOptions extends Omit<RunProcessOptions, "file" | "args">, ShellGateOptions {
  /** The shell binary (default /bin/sh). */
  shell?: string;
}

/**
 * Check `command` against the shell policy and throw unless it may run. There is no way to
 * run a shell string in this package without passing through here.
 * @throws PolicyDeniedError (property `command`) on deny, or on ask without approval.
 */
export async function assertShellAllowed(options: ShellGateOptions): Promise<void> {
  const decision = await checkShellCommand(options.command, options.policy);
  if (decision.decision === "allow") return;
  const reason = decision.reason ?? "denied by the shell policy";
  if (decision.decision === "deny") throw new PolicyDeniedError(reason, { property: "command" });
  const onAsk = options.onAsk ?? "deny";
  if (onAsk === "allow") return;
  if (typeof onAsk === "function" && (await onAsk(reason))) return;
  throw new PolicyDeniedError(`${reason} — this needs approval, which was not given; it was not run.`, {
    property: "command",
  });
}

/**
 * Run a shell command line (`/bin/sh -c command`) — only after the shell policy allowed it.
 * Otherwise exactly like `runProcess`: own process group killed on timeout/abort/exit,
 * streamed output capped head+tail.
 * @throws PolicyDeniedError before anything runs when the policy denies it.
 */
export async function runShell(options: RunShellOptions): Promise<ProcessResult> {
  await assertShellAllowed(options);
  const { command, policy: _policy, onAsk: _onAsk, shell, ...rest } = options;
  return runProcess({ ...rest, file: shell ?? "/bin/sh", args: ["-c", command] });
}
