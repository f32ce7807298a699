/**
 * Parser-independent view of a shell command line: what the policy checks. A parser
 * adapter (shell-syntax.ts for tree-sitter-bash) turns source text into SimpleCommands;
 * the policy never looks at parser nodes.
 */

/** One word of a simple command after quote removal, as far as it can be known statically. */
export interface ShellWord {
  /** The source text of the word. */
  raw: string;
  /**
   * The word's value after quote removal (`x''dg-open`, `"xdg-open"` and `\xdg-open` all
   * give `xdg-open`), or undefined when it depends on run time (an expansion or substitution).
   */
  value: string | undefined;
  /** Why `value` is unknown, for messages: "parameter expansion `$c`". */
  dynamic?: string;
  /** An unquoted expansion: at run time it may split into several words. */
  splits: boolean;
  /** Unquoted glob or brace-expansion characters: the word may expand to other words. */
  glob: boolean;
}

/** Where a command's standard input comes from, as far as the parser can tell. */
export type StdinSource =
  | { kind: "inherited" }
  | { kind: "pipe" }
  | { kind: "file"; path: string | undefined }
  /** A here-string or here-document whose text is known. */
  | { kind: "text"; text: string }
  /** A here-string or here-document with expansions in it. */
  | { kind: "dynamic" };

/** `NAME=value` before a command, alone, or in declare/export/local/readonly/typeset. */
export interface Assignment {
  /** The variable name (without a subscript), or undefined when only run time knows it. */
  name: string | undefined;
  /** The value, or undefined for `declare NAME` without one. */
  value: ShellWord | undefined;
  text: string;
}

/** A simple command found anywhere in a script (top level, substitutions, bodies…). */
export interface SimpleCommand {
  /** The command word and its arguments; empty for a bare assignment such as `a=1`. */
  words: ShellWord[];
  /** Assignments this command makes (prefix `A=1 cmd`, bare `A=1`, `export A=1`). */
  assignments?: Assignment[];
  /** Source text of the command, for messages. */
  text: string;
  stdin: StdinSource;
}

/** Something found while parsing that makes the script impossible to check statically. */
export interface Unresolvable {
  text: string;
  reason: string;
}

export type ParsedScript =
  | {
      ok: true;
      commands: SimpleCommand[];
      unresolvable: Unresolvable[];
      /** Code bash would run from arithmetic (shell-arithmetic.ts), judged after the commands. */
      arithmetic?: Unresolvable[];
    }
  | { ok: false; error: string };

/** Turns source text into simple commands; implemented per parser. */
export interface ShellParser {
  readonly name: string;
  parse(source: string): ParsedScript;
}

export function literalWord(value: string): ShellWord {
  return { raw: value, value, splits: false, glob: false };
}
