// The shell policy on its own: is this bash command line allowed, denied or to be asked?
// No capgate package is needed to use it; the tools runner takes `checkShellCommand` as its check.

export type { ShellPrefixRule, ShellRules } from "./config.js";
export { ShellRulesError } from "./errors.js";
export { shellQuote } from "./parse/shell-quote.js";
export type { ShellWord, StdinSource } from "./parse/shell-words.js";
export type { SplitResult } from "./parse/split-command.js";
export { splitCommandLine } from "./parse/split-command.js";
export type { ShellDecision, ShellPolicy } from "./policy/shell-policy.js";
export { checkShellCommand, createShellPolicy, MAX_SHELL_COMMAND_CHARS } from "./policy/shell-policy.js";
export type { ShellRule, ShellRuleDecision } from "./policy/shell-rules.js";
export { BROWSER_PANEL_HINT, BUILTIN_SHELL_RULES } from "./policy/shell-rules.js";
export type { ResolvedCommand } from "./programs/resolved-command.js";
