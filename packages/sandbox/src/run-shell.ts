import type { ProcessResult, RunProcessOptions } from "./process-runner.js";
import { bashArgv } from "./sandbox.js";
import { runSandboxed, type SandboxTarget } from "./sandbox-run.js";
import { assertShellAllowed, type ShellGateOptions } from "./shell-check.js";

export interface RunShellOptions extends Omit<RunProcessOptions, "file" | "args">, ShellGateOptions {
  /**
   * Where the OS sandbox puts the command (pass `sandboxTarget(ctx)`): the workspace it may
   * write (default: `cwd`), the state dir it may not read, the web rules of its network.
   */
  sandbox?: SandboxTarget;
}

/**
 * Run a shell command line (`bash --noprofile --norc -c command`, BASH_ENV/ENV unset) —
 * only after the shell policy (`options.check`) allowed it, and inside the OS sandbox (bubblewrap: see
 * docs/security.md) unless `policy.sandbox` is "off". Otherwise exactly like `runProcess`:
 * own process group killed on timeout/abort/exit, streamed output capped head+tail.
 * @throws PolicyDeniedError before anything runs when the policy denies it.
 * @throws CapgateError `sandbox_unavailable` before anything runs when the sandbox cannot start.
 */
export async function runShell(options: RunShellOptions): Promise<ProcessResult> {
  await assertShellAllowed(options);
  const { command, check: _check, policy, onAsk: _onAsk, sandbox, ...rest } = options;
  const [file, ...args] = bashArgv(command) as [string, ...string[]];
  return runSandboxed({
    ...rest,
    file,
    args,
    ...(policy ? { shellPolicy: policy } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
}
