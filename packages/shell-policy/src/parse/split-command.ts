import type { Node } from "web-tree-sitter";
import { loadTreeSitterBash } from "./shell-syntax.js";

/** The words of an ad-hoc command line, or why it cannot be split without a shell. */
export type SplitResult = { ok: true; argv: string[] } | { ok: false; reason: string };

const NOT_A_WORD = "pass such arguments through `args`, one array item per argument";

/** Characters that, unquoted, make bash expand or glob a word (bash would not pass them as is). */
const UNQUOTED_SPECIAL = /[*?[\]{}$`~]/;

class Refused extends Error {}

/**
 * Split a command line into argv the way bash would — for the subset that means the same
 * with and without a shell: one simple command of plain, '…'-quoted, "…"-quoted and
 * backslash-escaped words. Anything a shell would do more (operators, pipes, redirects,
 * `VAR=x` prefixes, expansions, substitutions, globs, braces, `~`, comments, several
 * lines) is refused with the reason, never approximated.
 */
export async function splitCommandLine(line: string): Promise<SplitResult> {
  if (/[\n\r\0]/.test(line)) {
    return { ok: false, reason: "the command line has a line break or NUL byte; write it on one line" };
  }
  if (line.trim() === "") return { ok: false, reason: "the command line is empty" };
  const p = await loadTreeSitterBash();
  const tree = p.parse(line);
  if (!tree) return { ok: false, reason: "the command line could not be parsed" };
  try {
    const root = tree.rootNode;
    if (root.hasError) return { ok: false, reason: "the command line is not valid shell syntax" };
    // Terminators and background markers (`&`, `;`) are unnamed nodes beside the command.
    const operator = root.children.find((n) => n !== null && !n.isNamed);
    if (operator) {
      return {
        ok: false,
        reason: `it must be one plain command; found the shell operator '${operator.text}'`,
      };
    }
    const statements = root.namedChildren.filter((n): n is Node => n !== null);
    if (statements.length !== 1) {
      const extra = statements.find((n) => n.type !== "command") ?? statements[1];
      return {
        ok: false,
        reason: `it must be one command without a shell around it; found ${describeNode(extra)}`,
      };
    }
    const command = statements[0]!;
    if (command.type !== "command") {
      return {
        ok: false,
        reason: `it must be one plain command, without shell operators; found ${describeNode(command)}`,
      };
    }
    return { ok: true, argv: commandWords(command) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: error.message };
    throw error;
  } finally {
    tree.delete();
  }
}

function describeNode(node: Node | undefined): string {
  if (!node) return "nothing";
  const text = node.text.length > 40 ? `${node.text.slice(0, 37)}...` : node.text;
  const kind: Record<string, string> = {
    list: "a command list (&&, ||)",
    pipeline: "a pipe",
    redirected_statement: "a redirection",
    subshell: "a subshell",
    compound_statement: "a { } group",
    comment: "a comment",
    variable_assignment: "a variable assignment",
    negated_command: "a negation (!)",
  };
  return `${kind[node.type] ?? `a ${node.type.replace(/_/g, " ")}`} \`${text}\``;
}

function commandWords(command: Node): string[] {
  const argv: string[] = [];
  for (let i = 0; i < command.childCount; i++) {
    const child = command.child(i);
    if (!child) continue;
    const field = command.fieldNameForChild(i);
    if (field === "name") argv.push(wordValue(child.namedChild(0) ?? child));
    else if (field === "argument") argv.push(wordValue(child));
    else if (child.type === "variable_assignment") {
      throw new Refused(
        `\`${child.text}\` sets an environment variable, which needs a shell; configure the server in mcpServers with "env" instead`,
      );
    } else {
      throw new Refused(`it must be one plain command; found ${describeNode(child)}`);
    }
  }
  // Nodes without a blank between them are one word (`a"b"`): tree-sitter gives a
  // concatenation for those, so each name/argument node above is exactly one word.
  return argv;
}

/** Quote removal for the accepted word forms; anything else is refused. */
function wordValue(node: Node): string {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeUnquoted(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "string": {
      let value = "";
      for (const part of node.children) {
        if (!part || part.type === '"') continue;
        if (part.type !== "string_content") {
          throw new Refused(
            `\`${node.text}\` contains ${describeNode(part)}, which a shell would expand; ${NOT_A_WORD}`,
          );
        }
        value += unescapeDouble(part.text);
      }
      return value;
    }
    case "concatenation":
      return node.children.map((part) => (part ? wordValue(part) : "")).join("");
    default:
      throw new Refused(`${describeNode(node)} is expanded by a shell, not passed as is; ${NOT_A_WORD}`);
  }
}

/** Backslash removal outside quotes; unescaped expansion, glob, brace and tilde characters are refused. */
function unescapeUnquoted(text: string): string {
  let value = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      value += text[++i];
      continue;
    }
    if (UNQUOTED_SPECIAL.test(c)) {
      throw new Refused(
        `\`${text}\` has an unquoted '${c}', which a shell would expand; quote the word ('…') or ${NOT_A_WORD}`,
      );
    }
    value += c;
  }
  return value;
}

/** Inside "…": a backslash escapes only $ ` " \ (newlines are refused earlier). `$` and backticks never get here unescaped. */
function unescapeDouble(text: string): string {
  if (/(^|[^\\])(\\\\)*[$`]/.test(text)) {
    throw new Refused(
      `"${text}" has a '$' or '\`', which a shell would expand inside double quotes; ${NOT_A_WORD}`,
    );
  }
  return text.replace(/\\([$`"\\])/g, "$1");
}
