import { resolveProgram } from "./process-containment.js";
import { type ProcessResult, type RunProcessOptions, runProcess } from "./process-runner.js";
import { type SandboxOptions, sandboxCommand } from "./sandbox.js";
import type { ShellPolicyConfig, ToolContext, WebPolicyConfig } from "./types.js";

/** Where a sandboxed command lives: its writable workspace, the hidden state dir, the web rules of its network. */
export interface SandboxTarget {
  /** Read-write inside the sandbox (default: the command's cwd). */
  workspace?: string;
  /** Hidden inside the sandbox ($CAPGATE_HOME). */
  stateDir?: string;
  /** `allowHosts` for `shell.network: "guarded"`. */
  web?: WebPolicyConfig;
}

/** The sandbox target of a tool call: ctx.workspace read-write, ctx.stateDir hidden, ctx.policy.web for the network. */
export function sandboxTarget(ctx: Pick<ToolContext, "workspace" | "stateDir" | "policy">): SandboxTarget {
  return {
    workspace: ctx.workspace,
    stateDir: ctx.stateDir,
    ...(ctx.policy.web ? { web: ctx.policy.web } : {}),
  };
}

export interface RunSandboxedOptions extends RunProcessOptions {
  /** `sandbox`, `network`, `bwrap` (pass ctx.policy.shell). */
  shellPolicy?: ShellPolicyConfig;
  sandbox?: SandboxTarget;
}

/** The SandboxOptions for a process started in `cwd` with `env`. */
export function sandboxOptionsFor(
  cwd: string,
  env: Record<string, string | undefined>,
  shellPolicy: ShellPolicyConfig | undefined,
  target: SandboxTarget | undefined,
): SandboxOptions {
  return {
    workspace: target?.workspace ?? cwd,
    cwd,
    env,
    ...(target?.stateDir ? { stateDir: target.stateDir } : {}),
    ...(shellPolicy ? { shell: shellPolicy } : {}),
    ...(target?.web ? { web: target.web } : {}),
  };
}

/**
 * `runProcess` inside the OS sandbox (see `sandboxCommand`): same result shape, same
 * process-group handling (the group is bubblewrap's; the sandbox dies with it).
 * @throws CapgateError `sandbox_unavailable` before anything runs when the sandbox cannot start.
 */
export async function runSandboxed(options: RunSandboxedOptions): Promise<ProcessResult> {
  const { shellPolicy, sandbox, file, args, ...rest } = options;
  const wrapped = await sandboxCommand(
    [resolveProgram(file, options.env.PATH), ...(args ?? [])],
    sandboxOptionsFor(options.cwd, options.env, shellPolicy, sandbox),
  );
  let result: ProcessResult;
  try {
    result = await runProcess({
      ...rest,
      file: wrapped.file,
      args: wrapped.args,
      env: wrapped.env,
      ...(wrapped.mark ? { sandboxMark: wrapped.mark } : {}),
    });
  } catch (error) {
    wrapped.release();
    throw error;
  }
  const notices = wrapped.release();
  if (notices.length === 0) return result;
  // What the sandbox undid after the command is part of its output: the model and the user
  // read stderr, and a notice kept anywhere else would go unseen.
  const sep = result.stderr === "" || result.stderr.endsWith("\n") ? "" : "\n";
  const added = `${sep}${notices.map((n) => `[capgate] ${n}\n`).join("")}`;
  // Counted as written: callers decide from the byte counts whether there is output to show.
  return {
    ...result,
    stderr: `${result.stderr}${added}`,
    stderrBytes: result.stderrBytes + Buffer.byteLength(added),
  };
}
