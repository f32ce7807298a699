import type { Node } from "web-tree-sitter";
import type { Unresolvable } from "./shell-words.js";

/**
 * Code that bash runs from arithmetic. Wherever bash evaluates text as arithmetic —
 * `((…))`, `$((…))`, `$[…]`, `for ((…))`, `[[ a -eq b ]]`, array subscripts (`${a[i]}`,
 * `a[i]=…`, `unset 'a[i]'`), `${x:offset:length}`, assignments to `declare -i` names — a
 * variable's value is itself evaluated as an expression, and an array subscript inside it
 * (`a[$(cmd)]`) runs the command substitution, even when the text came from single quotes
 * or from data read at run time: `(( 'a[$(git push)]' ))`, `x=$(cat f); echo $((x))` and
 * `echo ${a['$(cmd)']}` each run a command that no command word on the line shows.
 *
 * Checked on the whole parse tree of every script (nested ones too), by construction rather
 * than by listing forms:
 * 1. No literal text anywhere may hold an array subscript with a substitution in it
 *    (`[…$(…`, `` […` ``, `[…${…`): wherever it flows, arithmetic would run it.
 * 2. In an arithmetic place, a command substitution is refused (its output is evaluated),
 *    and so is a variable the line gives a value only known at run time (`read`, `mapfile`,
 *    `readarray`, `getopts`, `printf -v`, a command substitution, a loop over such words),
 *    a positional parameter, or a variable whose literal value holds `[`, `$(`, `${` or a
 *    backtick — following names inside values (`x=y; y=$(…); ((x))`) a few levels deep.
 *    A variable the line never assigns comes from the environment the operator set: allowed.
 */

/** A subscript with a substitution in it, in literal text (also judged in assignments: shell-indirection.ts). */
export const SUBSCRIPT_CODE = /\[[^\]]*(\$\(|`|\$\{)/;
/** What makes a literal value unsafe to evaluate as arithmetic. */
const UNSAFE_VALUE = /[[`]|\$\(|\$\{/;
const ARITHMETIC_TEST = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const DYNAMIC_TARGETS = new Set(["read", "mapfile", "readarray", "getopts"]);
const DECLARATIONS = new Set(["declare", "typeset", "local", "export", "readonly"]);
const MAX_NAME_DEPTH = 8;

interface Source {
  dynamic: boolean;
  values: string[];
}

export function arithmeticCode(root: Node, literalValue: (node: Node) => string | undefined): Unresolvable[] {
  const out: Unresolvable[] = [];
  const sources = new Map<string, Source>();
  const integers = new Set<string>();
  const contexts: Node[] = [];

  const note = (name: string | undefined, value: string | undefined): void => {
    if (name === undefined) return;
    const source = sources.get(name) ?? { dynamic: false, values: [] };
    if (value === undefined) source.dynamic = true;
    else source.values.push(value);
    sources.set(name, source);
  };
  const deny = (node: Node, reason: string): void => {
    out.push({ text: node.text, reason });
  };

  const visit = (node: Node): void => {
    switch (node.type) {
      case "raw_string":
      case "string":
      case "ansi_c_string":
      case "word":
      case "concatenation": {
        const value = literalValue(node);
        if (value !== undefined && SUBSCRIPT_CODE.test(value)) {
          deny(
            node,
            `\`${clip(value)}\` holds an array subscript with a command substitution: bash runs it wherever the text is evaluated as arithmetic`,
          );
          return;
        }
        break;
      }
      case "variable_assignment": {
        const nameNode = node.childForFieldName("name");
        const valueNode = node.childForFieldName("value");
        const name =
          nameNode?.type === "subscript" ? nameNode.childForFieldName("name")?.text : nameNode?.text;
        if (!valueNode) note(name, "");
        // `$((…))` always gives a number.
        else if (valueNode.type === "arithmetic_expansion") note(name, "0");
        else if (valueNode.type === "array") {
          for (const element of valueNode.namedChildren) if (element) note(name, literalValue(element));
        } else note(name, literalValue(valueNode));
        break;
      }
      case "for_statement": {
        const variable = node.childForFieldName("variable")?.text;
        const values = node.childrenForFieldName("value");
        // `for x; do` loops over the positional parameters.
        if (values.length === 0) note(variable, undefined);
        for (const v of values) if (v) note(variable, literalValue(v));
        break;
      }
      case "declaration_command": {
        const words = node.namedChildren.filter((c): c is Node => c !== null);
        const command = node.children[0]?.text ?? "";
        if (
          DECLARATIONS.has(command) &&
          words.some((w) => w.type === "word" && /^-[A-Za-z]*i/.test(w.text))
        ) {
          for (const w of words) {
            if (w.type === "variable_name") integers.add(w.text);
            if (w.type === "variable_assignment") {
              const n = w.childForFieldName("name")?.text;
              if (n) integers.add(n);
            }
          }
        }
        break;
      }
      case "command":
        noteCommandTargets(node, note);
        break;
      case "compound_statement":
        if (node.text.startsWith("((")) contexts.push(node);
        break;
      case "arithmetic_expansion":
        contexts.push(node);
        break;
      case "c_style_for_statement":
        // The three clauses, not the loop's body.
        for (const field of ["initializer", "condition", "update"]) {
          for (const clause of node.childrenForFieldName(field)) if (clause) contexts.push(clause);
        }
        break;
      case "subscript": {
        const index = node.childForFieldName("index");
        if (index) contexts.push(index);
        break;
      }
      case "unset_command":
        // `unset 'a[i]'` evaluates the subscript; a plain name is only a name.
        for (const arg of node.namedChildren) if (arg?.text.includes("[")) contexts.push(arg);
        break;
      case "binary_expression": {
        // Only `[[ … ]]` evaluates its -eq operands as arithmetic; `[`/`test` wants plain integers.
        const op = node.childForFieldName("operator");
        if (op?.type === "test_operator" && ARITHMETIC_TEST.has(op.text) && insideDoubleBracket(node)) {
          contexts.push(node);
        }
        break;
      }
      case "expansion":
        // `${x:offset:length}`: the offset and length are arithmetic.
        if (/^\$\{[#!]?[A-Za-z_0-9@*]+(\[[^\]]*\])?:[^-=?+]/.test(node.text)) {
          for (const part of node.namedChildren.slice(1)) if (part) contexts.push(part);
        }
        break;
    }
    for (const child of node.children) if (child) visit(child);
  };
  visit(root);

  // Integer variables evaluate every value assigned to them.
  for (const name of integers) {
    const source = sources.get(name);
    if (source?.dynamic || source?.values.some((v) => UNSAFE_VALUE.test(v))) {
      out.push({
        text: name,
        reason: `\`${name}\` is an integer variable (declare -i), so bash evaluates what is assigned to it as arithmetic, and its value comes from data only known at run time`,
      });
    }
  }

  const unsafeName = (name: string, depth: number, seen: Set<string>): string | undefined => {
    if (/^[0-9@*]$|^[1-9][0-9]*$/.test(name)) return `the positional parameter \`$${name}\``;
    if (seen.has(name)) return undefined;
    seen.add(name);
    const source = sources.get(name);
    if (!source) return undefined;
    if (source.dynamic) return `\`${name}\`, whose value is only known at run time`;
    for (const value of source.values) {
      if (UNSAFE_VALUE.test(value))
        return `\`${name}\`, whose value \`${clip(value)}\` holds a subscript or substitution`;
      if (depth >= MAX_NAME_DEPTH) return `\`${name}\`, whose value names other variables too deep to follow`;
      for (const ident of identifiers(value)) {
        const why = unsafeName(ident, depth + 1, seen);
        if (why) return why;
      }
    }
    return undefined;
  };

  for (const context of contexts) {
    const reason = contextProblem(context, (name) => unsafeName(name, 0, new Set()), literalValue);
    if (reason) {
      out.push({
        text: context.text,
        reason: `bash evaluates \`${clip(context.text)}\` as arithmetic, and it uses ${reason}: a subscript in that value would run commands`,
      });
    }
  }
  return out;
}

/** What in an arithmetic place makes it unsafe, or undefined. */
function contextProblem(
  node: Node,
  unsafeName: (name: string) => string | undefined,
  literalValue: (node: Node) => string | undefined,
): string | undefined {
  switch (node.type) {
    case "raw_string":
    case "ansi_c_string":
    case "string": {
      // Quoted text in arithmetic is evaluated as an expression: a substitution in it runs.
      const value = literalValue(node);
      if (value === undefined) {
        // "$x" and "$(cmd)": judged by what they expand (the children below).
        if (node.type === "string") break;
        return `the quoted text \`${clip(node.text)}\``;
      }
      if (UNSAFE_VALUE.test(value)) return `the quoted text \`${clip(node.text)}\``;
      for (const ident of identifiers(value)) {
        const why = unsafeName(ident);
        if (why) return why;
      }
      return undefined;
    }
    case "command_substitution":
    case "process_substitution":
      return `the output of \`${clip(node.text)}\``;
    case "simple_expansion":
    case "expansion": {
      const name = expansionName(node);
      if (name !== undefined) {
        const why = unsafeName(name);
        if (why) return why;
      }
      break;
    }
    case "variable_name":
    case "word":
      for (const ident of identifiers(node.text)) {
        const why = unsafeName(ident);
        if (why) return why;
      }
      break;
  }
  for (const child of node.children) {
    if (!child) continue;
    const why = contextProblem(child, unsafeName, literalValue);
    if (why) return why;
  }
  return undefined;
}

function insideDoubleBracket(node: Node): boolean {
  for (let n: Node | null = node.parent; n; n = n.parent) {
    if (n.type === "test_command") return n.text.startsWith("[[");
  }
  return false;
}

function expansionName(node: Node): string | undefined {
  const named = node.namedChildren.find(
    (c) => c?.type === "variable_name" || c?.type === "special_variable_name",
  );
  if (named) return named.text;
  const m = /^\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])/.exec(node.text);
  return m?.[1];
}

/** Names in arithmetic text (`base#digits` and numbers such as 0x1f are not names). */
function identifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9_#]+/g)) {
    const token = m[0];
    if (/^[0-9]/.test(token) || token.includes("#")) continue;
    out.push(token);
  }
  return out;
}

/** Names a command assigns from data it reads: read/mapfile/readarray/getopts targets, printf -v. */
function noteCommandTargets(
  node: Node,
  note: (name: string | undefined, value: string | undefined) => void,
): void {
  const name = node.childForFieldName("name")?.text;
  if (name === undefined) return;
  const args = node.childrenForFieldName("argument").map((a) => a?.text ?? "");
  if (name === "printf") {
    const at = args.findIndex((a) => a === "-v" || a.startsWith("-v"));
    if (at !== -1) note(args[at] === "-v" ? args[at + 1] : args[at]!.slice(2), undefined);
    return;
  }
  if (!DYNAMIC_TARGETS.has(name)) return;
  const operands = args.filter((a) => !a.startsWith("-") && /^[A-Za-z_][A-Za-z0-9_]*$/.test(a));
  if (name === "read") {
    for (const n of operands) note(n, undefined);
    note("REPLY", undefined);
  } else if (name === "getopts") {
    note(operands[1], undefined);
    note("OPTARG", undefined);
  } else {
    note(operands.at(-1) ?? "MAPFILE", undefined);
  }
  // Options that take a name: read -a NAME, mapfile's array is the last operand.
  const array = args.indexOf("-a");
  if (array !== -1) note(args[array + 1], undefined);
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
