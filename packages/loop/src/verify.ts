import { runShell, sandboxTarget } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import { approvalNeeded, requireApproval, type ToolContext } from "@capgate/tools";

export interface VerifyOutcome {
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  /** The end of stdout+stderr: the evidence. */
  outputTail: string;
  durationMs: number;
  /** Set when the shell policy or the approver refused the command; nothing ran. */
  denied?: string;
}

const TAIL_BYTES = 4000;

/**
 * Run a verify command through the shell policy in the workspace. Passes on exit 0.
 * Verify runs a command, so it asks for approval like any exec tool when the mode
 * says so.
 */
export async function runVerify(options: {
  command: string;
  timeoutMs: number;
  ctx: ToolContext;
}): Promise<VerifyOutcome> {
  const { command, timeoutMs, ctx } = options;
  const started = Date.now();
  const refused = (denied: string): VerifyOutcome => ({
    passed: false,
    exitCode: null,
    timedOut: false,
    outputTail: "",
    durationMs: Date.now() - started,
    denied,
  });
  const request = (description: string) => ({
    tool: "verify",
    capability: "verify",
    risk: "exec" as const,
    arguments: { command },
    description,
  });
  const mode = ctx.policy.approval ?? "never";
  try {
    if (approvalNeeded(mode, "exec"))
      await requireApproval(ctx, request(`verify: ${command}`), `approval mode '${mode}'`);
  } catch (error) {
    return refused((error as Error).message);
  }
  try {
    // The shell parser (tree-sitter and its grammar) loads with the first verify: a process
    // that never verifies (a direct tool call, a search) does not load it.
    const { checkShellCommand } = await import("@capgate/shell-policy");
    const r = await runShell({
      command,
      check: checkShellCommand,
      cwd: ctx.workspace,
      env: ctx.env,
      sandbox: sandboxTarget(ctx),
      timeoutMs,
      maxOutputBytes: ctx.limits.outputBytes,
      signal: ctx.signal,
      policy: ctx.policy.shell,
      // A configured "ask" rule asks the same approver a tool call would.
      onAsk: (reason) =>
        requireApproval(ctx, request(reason), reason).then(
          () => true,
          () => false,
        ),
    });
    const output = [r.stdout, r.stderr].filter((s) => s.length > 0).join("\n");
    const tail = output.length > TAIL_BYTES ? `…${output.slice(-TAIL_BYTES)}` : output;
    return {
      passed: r.exitCode === 0 && !r.timedOut && !r.aborted,
      exitCode: r.exitCode,
      timedOut: r.timedOut,
      outputTail: tail,
      durationMs: Date.now() - started,
    };
  } catch (error) {
    if (CapgateError.isInstance(error) && error.code === "policy_denied") return refused(error.message);
    throw error;
  }
}
