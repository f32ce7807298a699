import { PolicyDeniedError } from "./errors.js";
import type { ProcessResult, RunProcessOptions } from "./process-runner.js";
import { bashArgv } from "./sandbox.js";
import { runSandboxed, type SandboxTarget } from "./sandbox-run.js";
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
  /** The command line, run by `bash --noprofile --norc -c` (the grammar the policy parses). */
  command: string;
  /**
   * Extra deny/ask rules and the sandbox settings (`sandbox`, `network`, `bwrap`) — pass
   * `ctx.policy.shell`. The built-in GUI-opener rules always apply.
   */
  policy?: ShellPolicyConfig;
  onAsk?: OnAsk;
}

export interface RunShellOptions extends Omit<RunProcessOptions, "file" | "args">, ShellGateOptions {
  /**
   * Where the OS sandbox puts the command (pass `sandboxTarget(ctx)`): the workspace it may
   * write (default: `cwd`), the state dir it may not read, the web rules of its network.
   */
  sandbox?: SandboxTarget;
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
 * Run a shell command line (`bash --noprofile --norc -c command`, BASH_ENV/ENV unset) —
 * only after the shell policy allowed it, and inside the OS sandbox (bubblewrap: see
 * docs/security.md) unless `policy.sandbox` is "off". Otherwise exactly like `runProcess`:
 * own process group killed on timeout/abort/exit, streamed output capped head+tail.
 * @throws PolicyDeniedError before anything runs when the policy denies it.
 * @throws CapgateError `sandbox_unavailable` before anything runs when the sandbox cannot start.
 */
export async function runShell(options: RunShellOptions): Promise<ProcessResult> {
  await assertShellAllowed(options);
  const { command, policy, onAsk: _onAsk, sandbox, ...rest } = options;
  const [file, ...args] = bashArgv(command) as [string, ...string[]];
  return runSandboxed({
    ...rest,
    file,
    args,
    ...(policy ? { shellPolicy: policy } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
}
