import { resolveProfiles } from "@capgate/profiles";
import { CapgateError } from "@capgate/schema";
import type { ShellPrefixRule } from "@capgate/shell-policy";
import { type ConfigProblem, InvalidConfigError, type ResolvedConfig } from "./config.js";

/**
 * The checks of a config that need the whole harness: every shell rule's own
 * `mustMatch`/`mustNotMatch` examples (which need the shell parser), and every profile's
 * preload naming a capability that exists (built-ins, extra capabilities, `mcp:<server>`
 * for configured servers). What passes here cannot fail the same way at first use.
 * @throws InvalidConfigError naming each bad property (`shell.deny[0].mustMatch[1]`, `profiles.Coder.preload[2]`).
 */
export async function checkConfigAgainstHarness(
  resolved: ResolvedConfig,
  capabilityNames: readonly string[],
  source: string,
): Promise<void> {
  const problems: ConfigProblem[] = [
    ...(await shellRuleProblems(resolved.config.shell)),
    ...preloadProblems(resolved, capabilityNames),
  ];
  if (problems.length > 0) throw new InvalidConfigError(source, problems);
}

async function shellRuleProblems(shell: ResolvedConfig["config"]["shell"]): Promise<ConfigProblem[]> {
  // The shell parser loads only for a config that has shell rules to check.
  if (!shell || !(shell.deny?.length || shell.ask?.length || shell.allow?.length)) return [];
  const { createShellPolicy } = await import("@capgate/shell-policy");
  const problems: ConfigProblem[] = [];
  for (const kind of ["deny", "ask", "allow"] as const) {
    for (const [index, rule] of (shell[kind] ?? []).entries()) {
      const at = `shell.${kind}[${index}]`;
      const bare: ShellPrefixRule = { prefix: rule.prefix, ...(rule.reason ? { reason: rule.reason } : {}) };
      let policy: Awaited<ReturnType<typeof createShellPolicy>>;
      try {
        // The rule alone, without its examples: then each example is judged on its own.
        policy = await createShellPolicy({ [kind]: [bare] }, "shell");
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        problems.push({ property: `${at}.prefix`, message });
        continue;
      }
      const id = `${kind}[0]`;
      for (const [i, example] of (rule.mustMatch ?? []).entries()) {
        if (!policy.matches(example).includes(id)) {
          problems.push({
            property: `${at}.mustMatch[${i}]`,
            message: `the rule's own example ${JSON.stringify(example)} must match its prefix ${JSON.stringify(rule.prefix)} but does not; fix the example or the prefix`,
          });
        }
      }
      for (const [i, example] of (rule.mustNotMatch ?? []).entries()) {
        if (policy.matches(example).includes(id)) {
          problems.push({
            property: `${at}.mustNotMatch[${i}]`,
            message: `the rule's own example ${JSON.stringify(example)} must not match its prefix ${JSON.stringify(rule.prefix)} but does; fix the example or the prefix`,
          });
        }
      }
    }
  }
  return problems;
}

function preloadProblems(resolved: ResolvedConfig, capabilityNames: readonly string[]): ConfigProblem[] {
  const overrides = resolved.config.profiles;
  if (!overrides || Object.keys(overrides).length === 0) return [];
  const known = [...capabilityNames, ...Object.keys(resolved.mcpServers).map((s) => `mcp:${s}`)];
  try {
    resolveProfiles(overrides, { capabilities: known });
    return [];
  } catch (error) {
    const list = (error as { problems?: Array<{ property: string; message: string }> }).problems;
    if (Array.isArray(list)) return list.map((p) => ({ property: p.property, message: p.message }));
    if (CapgateError.isInstance(error))
      return [{ property: error.property ?? "profiles", message: error.message }];
    throw error;
  }
}
