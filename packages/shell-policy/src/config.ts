/**
 * A configured prefix rule: `{ "prefix": ["git", "push"] }`. The same shape as
 * `ShellPrefixRule` of @capgate/tools (its `policy.shell` section), declared here too so this
 * package depends on nothing of capgate's.
 */
export interface ShellPrefixRule {
  /** Words the segment must start with, e.g. ["git", "push"] or ["rm", "-rf"]. */
  prefix: string[];
  /** Shown to the model (deny) or the approver (ask). */
  reason?: string;
  /** Command lines this rule must match; checked when the policy loads (a mismatch is an error). */
  mustMatch?: string[];
  /** Command lines this rule must not match; checked when the policy loads. */
  mustNotMatch?: string[];
}

/**
 * The extra rules a policy applies on top of the built-in ones. Other properties (a
 * capgate config's `sandbox`, `network`, `bwrap`) are ignored, so `ctx.policy.shell` or a
 * config file's `shell` section can be passed as is.
 */
export interface ShellRules {
  deny?: ShellPrefixRule[];
  ask?: ShellPrefixRule[];
  /**
   * Commands the operator accepts although capgate cannot read everything they run
   * (interpreter code, programs that run their arguments or input): with deny or ask rules
   * configured such commands are asked about unless an allow rule matches them at command
   * position. An allow rule never overrides a deny or ask rule, nor a built-in denial.
   */
  allow?: ShellPrefixRule[];
}
