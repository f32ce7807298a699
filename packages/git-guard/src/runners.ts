import { CapgateError } from "@capgate/schema";
import { type ProcessResult, runProcess, runSandboxed, type ShellPolicyConfig } from "@capgate/tools";
import type { GitRunner } from "./gitlinks.js";
import { configArgs, GIT_GLOBAL_ARGS, gitEnv } from "./hardening.js";
import { gitFailure, type ProcessRun, type TreeGitCall } from "./tree-git.js";

export interface SandboxedRunnerOptions {
  /** The only directory git may write (the checkout), as a real path. */
  workspace: string;
  /** capgate's state directory: hidden from git as from every command. */
  stateDir?: string;
  /** The operator's shell policy: `sandbox` (on unless "off") and `bwrap`; the network is always none. */
  shell?: ShellPolicyConfig;
}

/**
 * A `ProcessRun` that starts each git inside the OS sandbox the shell tools use
 * (bubblewrap: the workspace the only writable place, secrets and the state directory
 * hidden, the protected `.git` entries read-only, a private /tmp) with **no network**. A
 * program git were somehow made to run could then read no secret and write nothing outside
 * the checkout. With `"sandbox": "off"` in the operator's policy git runs on the host,
 * still under every other guard of this package.
 */
export function sandboxedRunner(options: SandboxedRunnerOptions): ProcessRun {
  const shellPolicy: ShellPolicyConfig = { ...options.shell, network: "none" };
  const sandbox = {
    workspace: options.workspace,
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
  };
  return (process) => runSandboxed({ ...process, shellPolicy, sandbox });
}

export interface TrustedRepoGitOptions {
  /** A directory of the repository; git finds the repository from there. */
  cwd: string;
  env: Record<string, string | undefined>;
  /** Per git process. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Default `runProcess`. */
  run?: ProcessRun;
}

export interface TrustedRepoCall extends TreeGitCall {
  /** `-c` settings for this call only (e.g. `protocol.file.allow=always` to clone or fetch a local path). */
  settings?: readonly string[];
}

export interface TrustedRepoGit extends GitRunner {
  run(args: readonly string[], call?: TrustedRepoCall): Promise<ProcessResult>;
  /** Like `run`, but a non-zero exit throws `git_failed` with git's own message. */
  ok(args: readonly string[], call?: TrustedRepoCall): Promise<ProcessResult>;
}

/**
 * git on the operator's own repository — the one a worker clones from and publishes into,
 * which the model never writes: the same hardened options and environment as `treeGit`
 * (no hooks, fsmonitor, drivers, pager, system or global config, no transport unless a
 * call allows one), without `treeGit`'s repository checks, because its include files,
 * alternates and worktrees are the operator's to use.
 */
export function trustedRepoGit(options: TrustedRepoGitOptions): TrustedRepoGit {
  const run = options.run ?? runProcess;
  const env = gitEnv(options.env, undefined);
  const self: TrustedRepoGit = {
    async run(args, call = {}) {
      const result = await run({
        file: "git",
        args: [...GIT_GLOBAL_ARGS, ...configArgs(call.settings ?? []), ...args],
        cwd: options.cwd,
        env,
        timeoutMs: options.timeoutMs,
        maxOutputBytes: call.maxOutputBytes ?? 1024 * 1024,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(call.input === undefined ? {} : { input: call.input }),
      });
      if (result.timedOut) {
        throw new CapgateError(
          "timeout",
          `git ${args[0]} timed out after ${options.timeoutMs} ms and was stopped.`,
        );
      }
      if (result.aborted) throw new CapgateError("aborted", `git ${args[0]} was aborted.`);
      return result;
    },
    async ok(args, call = {}) {
      const result = await self.run(args, call);
      if (result.exitCode !== 0) throw gitFailure(args, result);
      return result;
    },
  };
  return self;
}
