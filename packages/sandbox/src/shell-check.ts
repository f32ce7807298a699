import type { PolicyCheck, PolicyVerdict, ShellPolicyConfig, ToolContext } from "@capgate/tools";
import { PolicyDeniedError } from "@capgate/tools";

/** A shell policy's answer for one command line (the shape `checkShellCommand` of @capgate/shell-policy returns). */
export interface ShellVerdict {
  decision: "allow" | "deny" | "ask";
  /** Why, written for the model (deny) or the approver (ask). */
  reason?: string;
  /** Id of the deciding rule. */
  rule?: string;
}

/**
 * The shell policy, injected: pass `checkShellCommand` from @capgate/shell-policy. This
 * package runs shell strings but does not carry their parser (tree-sitter-bash); whoever
 * runs a command line hands over the check, and without one nothing runs.
 */
export type ShellCheck = (command: string, rules?: ShellPolicyConfig) => Promise<ShellVerdict>;

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
  /** The shell policy: `checkShellCommand` from @capgate/shell-policy. Required — without it nothing runs. */
  check: ShellCheck;
  /**
   * Extra deny/ask rules and the sandbox settings (`sandbox`, `network`, `bwrap`) — pass
   * `ctx.policy.shell`. The built-in GUI-opener rules always apply.
   */
  policy?: ShellPolicyConfig;
  onAsk?: OnAsk;
}

/** Ask `check` about `command`; a missing check refuses (fail closed), it never lets the command through. */
async function verdictOf(
  check: ShellCheck | undefined,
  command: string,
  rules: ShellPolicyConfig | undefined,
  property: string,
): Promise<ShellVerdict> {
  if (typeof check !== "function") {
    throw new PolicyDeniedError(
      "no shell policy check was given, so the command was not run (pass `check: checkShellCommand` from @capgate/shell-policy)",
      { property },
    );
  }
  return check(command, rules);
}

/**
 * Check `command` against the shell policy and throw unless it may run. There is no way to
 * run a shell string in this package without passing through here.
 * @throws PolicyDeniedError (property `command`) on deny, on ask without approval, or when no check was given.
 */
export async function assertShellAllowed(options: ShellGateOptions): Promise<void> {
  const decision = await verdictOf(options.check, options.command, options.policy, "command");
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
 * The shell policy as a capability policy step: throws PolicyDeniedError on deny (with
 * `property`, default "command") and returns `{ ask }` for an ask rule, so the executor asks
 * the operator before the handler runs. Uses `ctx.policy.shell`.
 */
export async function shellPolicyCheck(
  command: string,
  ctx: Pick<ToolContext, "policy">,
  options: { check: ShellCheck; property?: string },
): Promise<PolicyVerdict | undefined> {
  const property = options?.property ?? "command";
  const decision = await verdictOf(options?.check, command, ctx.policy.shell, property);
  if (decision.decision === "deny") {
    throw new PolicyDeniedError(decision.reason ?? "denied by the shell policy", { property });
  }
  if (decision.decision === "ask") return { ask: decision.reason ?? "the shell policy asks for approval" };
  return undefined;
}

/**
 * A ready-made `policies` entry for a tool whose argument `property` is a shell command:
 * `policies: { run: shellCommandPolicy(checkShellCommand, "command") }`.
 */
export function shellCommandPolicy(check: ShellCheck, property = "command"): PolicyCheck {
  return (args, ctx) => {
    const command = args[property];
    if (typeof command !== "string") {
      throw new PolicyDeniedError(`${property} must be a shell command string`, { property });
    }
    return shellPolicyCheck(command, ctx, { check, property });
  };
}
