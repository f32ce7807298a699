// The shell policy on its own: is this bash command line allowed, denied or to be asked?
// No capgate package is needed to use it; the tools runner takes `checkShellCommand` as its check.

export type { ShellPrefixRule, ShellRules } from "./config.js";
export { ShellRulesError } from "./errors.js";
export type { ResolvedCommand } from "./resolved-command.js";
export type { ShellDecision, ShellPolicy } from "./shell-policy.js";
export { checkShellCommand, createShellPolicy, MAX_SHELL_COMMAND_CHARS } from "./shell-policy.js";
export { shellQuote } from "./shell-quote.js";
export type { ShellRule, ShellRuleDecision } from "./shell-rules.js";
export { BROWSER_PANEL_HINT, BUILTIN_SHELL_RULES } from "./shell-rules.js";
export type { ShellWord, StdinSource } from "./shell-words.js";
export type { SplitResult } from "./split-command.js";
export { splitCommandLine } from "./split-command.js";
