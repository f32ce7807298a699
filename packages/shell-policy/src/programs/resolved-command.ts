// The types every program module speaks: a command after its wrappers are peeled, and what
// else it runs. They sit in this leaf so the program modules and shell-commands.ts (which
// calls them) do not import each other.
import type { Assignment, ShellWord, StdinSource } from "../parse/shell-words.js";

/** One command as the policy rules see it, after any wrappers around it were peeled. */
export interface ResolvedCommand {
  /** The command word reduced to its basename, lower-cased, without `.exe`: `/usr/bin/Xdg-Open` → `xdg-open`. */
  name: string;
  /** Word values (undefined where only run time knows); argv[0] is the command word as written. */
  argv: readonly (string | undefined)[];
  words: readonly ShellWord[];
  stdin: StdinSource;
  /** Source text of the whole simple command the layer came from. */
  text: string;
  /**
   * More arguments, only known at run time, follow `argv` (xargs appends what it reads).
   * Rules that decide on arguments treat the missing ones as unknown.
   */
  openArgs?: boolean;
  /** Assignments made by this command itself (`A=1 cmd`, `export A=1`). */
  assignments?: readonly Assignment[];
  /**
   * The command line defines a git alias through the environment (`GIT_CONFIG_KEY_0=alias.p`,
   * `GIT_CONFIG_PARAMETERS`): any git subcommand may be that alias.
   */
  gitEnvAlias?: boolean;
  /**
   * The command line points the shells' startup files somewhere else (`HOME=.`, `ZDOTDIR=…`,
   * `XDG_CONFIG_HOME=…`, anywhere in the line): a shell that reads them runs code the policy cannot see.
   */
  startupRedirect?: boolean;
}

/** What else a command runs: a peeled inner command, a string run as shell code, or something uncheckable. */
export type Continuation =
  | { kind: "command"; words: ShellWord[]; stdin?: StdinSource; openArgs?: boolean }
  /** `soft`: text that may or may not be shell code (a string literal in interpreter code): only opener and configured rules count. */
  | { kind: "script"; script: string; via: string; stdin?: StdinSource; soft?: boolean }
  /** `NAME=value` handed to a program's environment (env, sudo): checked like an assignment. */
  | { kind: "assignment"; name: string; value: ShellWord }
  | { kind: "unresolvable"; reason: string };
