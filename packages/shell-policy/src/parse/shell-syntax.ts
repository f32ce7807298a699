import type { Node, Parser } from "web-tree-sitter";
import { compileBashWasm, instantiateWasm, type Wasm } from "./grammar-wasm.js";
import { arithmeticCode } from "./shell-arithmetic.js";
import { expandBraces } from "./shell-braces.js";
import type {
  Assignment,
  ParsedScript,
  ShellParser,
  ShellWord,
  SimpleCommand,
  StdinSource,
  Unresolvable,
} from "./shell-words.js";

/** Backtick substitutions and here-documents re-parse their text; this bounds the nesting. */
const MAX_NESTING = 16;

let ready: Promise<ShellParser> | undefined;

let raw: Promise<Parser> | undefined;

/**
 * The tree-sitter-bash grammar on web-tree-sitter (WebAssembly — no native build), loaded
 * once and kept warm for the life of the process. Shared by the shell policy and by
 * splitCommandLine, so both read a command line the same way.
 */
export function loadTreeSitterBash(): Promise<Parser> {
  raw ??= (async () => {
    const [{ Parser: TsParser, Language }, wasm] = await Promise.all([
      import("web-tree-sitter"),
      compileBashWasm(),
    ]);
    // The runtime is instantiated from the module compiled above, not fetched and compiled
    // again by web-tree-sitter; an instantiation failure rejects (emscripten would wait forever).
    let failed: (error: unknown) => void = () => {};
    const failure = new Promise<never>((_, reject) => {
      failed = reject;
    });
    await Promise.race([
      TsParser.init({
        instantiateWasm: (imports: Wasm.Imports, done: (i: Wasm.Instance, m: Wasm.Module) => void) => {
          instantiateWasm(wasm.runtime, imports).then((instance) => done(instance, wasm.runtime), failed);
          return {};
        },
      }),
      failure,
    ]);
    const language = Language.loadSync(wasm.grammar);
    const parser = new TsParser();
    parser.setLanguage(language);
    return parser;
  })().catch((error: unknown) => {
    raw = undefined;
    throw error;
  });
  return raw;
}

/**
 * The bash parser as the shell policy sees it: later calls parse synchronously in well
 * under a millisecond for a typical command line.
 */
export function loadBashParser(): Promise<ShellParser> {
  ready ??= loadTreeSitterBash().then((parser) => new TreeSitterBash(parser));
  ready.catch(() => {
    ready = undefined;
  });
  return ready;
}

class TreeSitterBash implements ShellParser {
  readonly name = "tree-sitter-bash";
  readonly #parser: Parser;

  constructor(parser: Parser) {
    this.#parser = parser;
  }

  parse(source: string): ParsedScript {
    return this.#parse(source, 0);
  }

  #parse(source: string, depth: number): ParsedScript {
    if (depth > MAX_NESTING) return { ok: false, error: `nested more than ${MAX_NESTING} levels deep` };
    const tree = this.#parser.parse(source);
    if (!tree) return { ok: false, error: "the parser returned no tree" };
    try {
      const root = tree.rootNode;
      if (root.hasError) return { ok: false, error: describeSyntaxError(root, source) };
      const extractor = new Extractor(source, (text) => this.#parse(text, depth + 1));
      extractor.visit(root);
      if (extractor.nestedError) return { ok: false, error: extractor.nestedError };
      // Code bash would run from arithmetic (array subscripts), found on the whole tree.
      const arithmetic = arithmeticCode(root, (node) => wordOf(node).value);
      return { ok: true, commands: extractor.commands, unresolvable: extractor.unresolvable, arithmetic };
    } finally {
      tree.delete();
    }
  }
}

function describeSyntaxError(root: Node, source: string): string {
  let found: Node | undefined;
  const visit = (n: Node): void => {
    if (found) return;
    if (n.isMissing || n.isError) {
      found = n;
      return;
    }
    for (const c of n.children) if (c?.hasError || c?.isMissing) visit(c);
  };
  visit(root);
  if (!found) return "syntax error";
  const { row, column } = found.startPosition;
  const where = `line ${row + 1}, column ${column + 1}`;
  if (found.isMissing) return `syntax error: missing '${found.type}' at ${where}`;
  const near = source.slice(found.startIndex, Math.min(found.endIndex, found.startIndex + 40));
  return `syntax error near '${near}' at ${where}`;
}

const EXPANSIONS = new Set(["simple_expansion", "expansion"]);

class Extractor {
  readonly commands: SimpleCommand[] = [];
  readonly unresolvable: Unresolvable[] = [];
  nestedError: string | undefined;
  readonly #source: string;
  readonly #parseNested: (text: string) => ParsedScript;

  constructor(source: string, parseNested: (text: string) => ParsedScript) {
    this.#source = source;
    this.#parseNested = parseNested;
  }

  visit(node: Node): void {
    if (!KNOWN_NODES.has(node.type)) {
      this.unresolvable.push({
        text: node.text,
        reason: `the construct \`${node.type}\` is not one capgate models, so bash might read it differently`,
      });
      return;
    }
    if (node.childCount === 0 && LEAVES_TO_SCAN.has(node.type) && EXPANSION_IN_LEAF.test(node.text)) {
      this.unresolvable.push({
        text: node.text,
        reason: `\`${node.text.slice(0, 40)}\` holds expansion syntax the parser did not read as an expansion, so bash might run it`,
      });
      return;
    }
    switch (node.type) {
      case "command":
        this.#command(node);
        break;
      case "declaration_command":
      case "unset_command":
        this.#declaration(node);
        break;
      case "for_statement":
        this.#loopVariable(node);
        break;
      case "variable_assignment":
      case "variable_assignments":
        if (node.parent && STATEMENT_PARENTS.has(node.parent.type)) this.#bareAssignments(node);
        break;
      case "command_substitution":
        // tree-sitter-bash does not see `\`` nesting inside backticks; bash re-parses the
        // unescaped text, and so do we.
        if (node.child(0)?.type === "`") {
          this.#nested(unescapeBackticks(node.text.slice(1, -1)), node.text);
          return;
        }
        break;
      case "expansion":
        if (/@P\s*\}$/.test(node.text)) {
          this.unresolvable.push({
            text: node.text,
            reason: "prompt expansion (@P) runs substitutions found in a value",
          });
        }
        this.#expansionAssignment(node);
        break;
      case "heredoc_redirect": {
        const start = node.namedChildren.find((n) => n?.type === "heredoc_start")?.text ?? "";
        const body = node.namedChildren.find((n) => n?.type === "heredoc_body");
        if (/['"\\]/.test(start)) {
          // A quoted delimiter: the body is literal text, never expanded.
          for (const child of node.namedChildren)
            if (child && child.type !== "heredoc_body") this.visit(child);
          return;
        }
        if (body && body.namedChildCount === 0) this.#scanBackticks(body.text);
        break;
      }
      case "heredoc_content":
        // Backticks in an unquoted here-document body are command substitutions the grammar leaves as text.
        this.#scanBackticks(node.text);
        if (/(^|[^\\])(\\\\)*\$[({]/.test(node.text)) {
          this.unresolvable.push({
            text: node.text,
            reason: "a here-document holds `$(`/`${` the parser did not read as an expansion",
          });
        }
        break;
    }
    for (const child of node.namedChildren) if (child) this.visit(child);
  }

  #nested(text: string, shown: string): void {
    const parsed = this.#parseNested(text);
    if (!parsed.ok) {
      this.nestedError ??= `in ${shown.slice(0, 60)}: ${parsed.error}`;
      return;
    }
    this.commands.push(...parsed.commands);
    this.unresolvable.push(...parsed.unresolvable);
  }

  #scanBackticks(text: string): void {
    let open = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "\\") {
        i++;
        continue;
      }
      if (c !== "`") continue;
      if (open === -1) open = i;
      else {
        this.#nested(unescapeBackticks(text.slice(open + 1, i)), text.slice(open, i + 1));
        open = -1;
      }
    }
    if (open !== -1) this.nestedError ??= "unterminated backtick substitution in a here-document";
  }

  #command(node: Node): void {
    const parts: Node[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const field = node.fieldNameForChild(i);
      const child = node.child(i);
      if (!child) continue;
      if (field === "name") parts.push(child.namedChild(0) ?? child);
      else if (field === "argument" && !isDescriptorOfRedirect(child, node)) parts.push(child);
    }
    const words: ShellWord[] = [];
    const spans: { start: number; end: number }[] = [];
    let previous: Node | undefined;
    for (const part of parts) {
      const word = wordOf(part);
      const gap = previous ? this.#source.slice(previous.endIndex, part.startIndex) : " ";
      // Nodes with no blank between them are one shell word (`$"x"`, `xdg-\<newline>open`).
      if (previous && /^(\\\n)*$/.test(gap) && words.length > 0) {
        words[words.length - 1] = joinWords(words[words.length - 1]!, word, gap, previous);
        spans[spans.length - 1]!.end = part.endIndex;
      } else {
        words.push(word);
        spans.push({ start: part.startIndex, end: part.endIndex });
      }
      previous = part;
    }
    if (this.#expandBraces(node, spans)) return;
    const assignments: Assignment[] = [];
    for (const child of node.namedChildren) {
      if (child?.type === "variable_assignment") assignments.push(assignmentOf(child));
    }
    this.commands.push({ words, text: node.text, stdin: stdinOf(node), assignments });
  }

  /**
   * Bash brace-expands every word of a simple command before anything else (`git {push,}
   * origin` runs `git push origin`): when a word has a brace expansion, the command is read
   * again with the expanded words in place, so every rule judges the words bash passes. What
   * cannot be expanded with certainty (or expands too far) is unresolvable. True when the
   * command was handled here.
   */
  #expandBraces(node: Node, spans: readonly { start: number; end: number }[]): boolean {
    let text = "";
    let at = node.startIndex;
    let changed = false;
    for (const span of spans) {
      const source = this.#source.slice(span.start, span.end);
      if (!source.includes("{")) continue;
      const expanded = expandBraces(source);
      if (!expanded.ok) {
        this.unresolvable.push({
          text: source,
          reason: `the brace expansion in \`${source.slice(0, 40)}\` cannot be checked (${expanded.reason})`,
        });
        continue;
      }
      if (expanded.words.length === 1 && expanded.words[0] === source) continue;
      const isFirst = span === spans[0];
      // The expanded words are words to bash, never syntax: a leading `#` is not a comment
      // (`rm {-f,#} -r d` runs `rm -f '#' -r d`) and the command word is not an assignment.
      const words = expanded.words.map((w, k) =>
        w.startsWith("#") || (isFirst && k === 0 && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w))
          ? `\\${w}`
          : w,
      );
      changed = true;
      // A blank after them, so a last word of digits never joins a redirection (`{a,2}>x` is `a 2 >x`).
      text += `${this.#source.slice(at, span.start)}${words.join(" ")} `;
      at = span.end;
    }
    if (!changed) return false;
    text += this.#source.slice(at, node.endIndex);
    const parsed = this.#parseNested(text);
    const first = parsed.ok ? parsed.commands[0] : undefined;
    if (!parsed.ok || !first) {
      this.unresolvable.push({
        text: node.text,
        reason: `after brace expansion the command reads differently (${parsed.ok ? "no command" : parsed.error})`,
      });
      return true;
    }
    // The words are the expanded ones; where stdin comes from is still this command's place.
    this.commands.push({ ...first, text: node.text, stdin: stdinOf(node) });
    this.unresolvable.push(...parsed.unresolvable);
    return true;
  }

  /** `export A=1 B`, `declare -n r=x`, `local a`, `unset -f f`: a command named by its keyword. */
  #declaration(node: Node): void {
    const words: ShellWord[] = [];
    const assignments: Assignment[] = [];
    for (const child of node.children) {
      if (!child) continue;
      if (!child.isNamed) {
        if (words.length === 0) words.push(literalWordOf(child.text));
        continue;
      }
      if (child.type === "variable_assignment") {
        assignments.push(assignmentOf(child));
      } else if (child.type === "variable_name") {
        words.push(literalWordOf(child.text));
      } else if (
        child.type !== "comment" &&
        child.type !== "file_redirect" &&
        child.type !== "heredoc_redirect" &&
        child.type !== "herestring_redirect"
      ) {
        words.push(wordOf(child));
      }
    }
    this.commands.push({ words, text: node.text, stdin: { kind: "inherited" }, assignments });
  }

  /**
   * `for NAME in WORDS` / `select NAME in WORDS` assigns NAME each word in turn (`for PS4 in
   * '$(cmd)'; do set -x; …` runs cmd): one assignment per word; without `in`, the positional
   * parameters, only known at run time.
   */
  #loopVariable(node: Node): void {
    const nameNode = node.childForFieldName("variable");
    if (!nameNode) return;
    const values: (ShellWord | undefined)[] = [];
    let sawIn = false;
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child?.type === "in") sawIn = true;
      if (child && node.fieldNameForChild(i) === "value") values.push(wordOf(child));
    }
    if (!sawIn)
      values.push({
        raw: '"$@"',
        value: undefined,
        splits: false,
        glob: false,
        dynamic: "the positional parameters",
      });
    this.commands.push({
      words: [],
      text: node.text.slice(0, 200),
      stdin: { kind: "inherited" },
      assignments: values.map((value) => ({
        name: nameNode.text,
        value,
        text: `${nameNode.text}=${value?.raw ?? ""}`,
      })),
    });
  }

  /**
   * `${NAME:=word}` and `${NAME=word}` assign NAME when it is unset (or empty), as a side
   * effect of expanding the word they are in: `: ${PS4:='$(cmd)'}` sets PS4 as surely as
   * `PS4='$(cmd)'` does. The assignment is recorded as a bare one, so every check of a
   * variable's value applies (code variables, programs run from variables, startup files).
   * `${!ref:=word}` assigns the variable ref names: a name only run time knows.
   */
  #expansionAssignment(node: Node): void {
    let operator = -1;
    for (let i = 0; i < node.childCount; i++) {
      const type = node.child(i)?.type;
      if (type === ":=" || type === "=") {
        operator = i;
        break;
      }
    }
    if (operator === -1) return;
    let name: string | undefined;
    let indirect = false;
    for (let i = 0; i < operator; i++) {
      const child = node.child(i);
      if (child?.type === "!") indirect = true;
      else if (child?.type === "variable_name") name = child.text;
      else if (child?.type === "subscript") name = child.childForFieldName("name")?.text;
    }
    const parts: Node[] = [];
    for (let i = operator + 1; i < node.childCount; i++) {
      const child = node.child(i);
      if (child && child.type !== "}") parts.push(child);
    }
    const value: ShellWord =
      parts.length === 0
        ? literalWordOf("")
        : parts.length === 1 && parts[0]!.isNamed
          ? wordOf(parts[0]!)
          : {
              raw: parts.map((p) => p.text).join(""),
              value: undefined,
              splits: false,
              glob: false,
              dynamic: `the default value in ${clip(node.text)}`,
            };
    this.commands.push({
      words: [],
      text: node.text,
      stdin: { kind: "inherited" },
      assignments: [{ name: indirect ? undefined : name, value, text: node.text }],
    });
  }

  #bareAssignments(node: Node): void {
    const list =
      node.type === "variable_assignments"
        ? node.namedChildren.filter((n): n is Node => n?.type === "variable_assignment")
        : [node];
    this.commands.push({
      words: [],
      text: node.text,
      stdin: { kind: "inherited" },
      assignments: list.map(assignmentOf),
    });
  }
}

/** Statements that hold a bare `A=1` (not a prefix of a command). */
const STATEMENT_PARENTS = new Set([
  "program",
  "list",
  "compound_statement",
  "subshell",
  "do_group",
  "if_statement",
  "elif_clause",
  "else_clause",
  "case_item",
  "pipeline",
  "negated_command",
  "redirected_statement",
  "command_substitution",
  "process_substitution",
  "function_definition",
]);

function literalWordOf(text: string): ShellWord {
  return { raw: text, value: text, splits: false, glob: false };
}

function assignmentOf(node: Node): Assignment {
  const nameNode = node.childForFieldName("name");
  const valueNode = node.childForFieldName("value");
  let name: string | undefined;
  if (nameNode?.type === "variable_name") name = nameNode.text;
  else if (nameNode?.type === "subscript") name = nameNode.childForFieldName("name")?.text;
  return { name, value: valueNode ? wordOf(valueNode) : undefined, text: node.text };
}

/** Every named node tree-sitter-bash 0.25 produces that the extractor understands. */
const KNOWN_NODES = new Set([
  "program",
  "arithmetic_expansion",
  "array",
  "binary_expression",
  "brace_expression",
  "c_style_for_statement",
  "case_item",
  "case_statement",
  "command",
  "command_name",
  "command_substitution",
  "compound_statement",
  "concatenation",
  "declaration_command",
  "do_group",
  "elif_clause",
  "else_clause",
  "expansion",
  "file_redirect",
  "for_statement",
  "function_definition",
  "heredoc_body",
  "heredoc_redirect",
  "herestring_redirect",
  "if_statement",
  "list",
  "negated_command",
  "number",
  "parenthesized_expression",
  "pipeline",
  "postfix_expression",
  "process_substitution",
  "redirected_statement",
  "simple_expansion",
  "string",
  "subscript",
  "subshell",
  "ternary_expression",
  "test_command",
  "translated_string",
  "unary_expression",
  "unset_command",
  "variable_assignment",
  "variable_assignments",
  "while_statement",
  "word",
  "ansi_c_string",
  "comment",
  "extglob_pattern",
  "file_descriptor",
  "heredoc_content",
  "heredoc_end",
  "heredoc_start",
  "raw_string",
  "regex",
  "special_variable_name",
  "string_content",
  "test_operator",
  "variable_name",
]);

/** Leaves whose text bash may still expand; an expansion inside one means the grammar misread it. */
const LEAVES_TO_SCAN = new Set([
  "word",
  "regex",
  "extglob_pattern",
  "string_content",
  "number",
  "variable_name",
]);
const EXPANSION_IN_LEAF = /(^|[^\\])(\\\\)*(\$[({]|`)/;

function joinWords(a: ShellWord, b: ShellWord, gap: string, aNode: Node): ShellWord {
  // `$"text"` (locale translation): the `$` is not part of the value.
  const aValue = isTranslationDollar(aNode) ? "" : a.value;
  return {
    raw: a.raw + gap + b.raw,
    value: aValue === undefined || b.value === undefined ? undefined : aValue + b.value,
    dynamic: a.dynamic ?? b.dynamic,
    splits: a.splits || b.splits,
    glob: a.glob || b.glob,
  };
}

/**
 * Where the command reads stdin from: its own redirects, then those of every statement around
 * it (`{ node; } < f`, `while …; do node; done < f`), a pipe into it or into a group around it
 * (`cat f | { node; }`). A function body reads whatever each call gives it (`f < file`), so
 * there it is not the inherited input.
 */
function stdinOf(command: Node): StdinSource {
  for (const r of command.childrenForFieldName("redirect")) {
    const source = r ? redirectStdin(r) : undefined;
    if (source) return source;
  }
  let child: Node = command;
  for (let parent = command.parent; parent; child = parent, parent = parent.parent) {
    if (parent.type === "redirected_statement" && parent.childForFieldName("body")?.id === child.id) {
      for (const r of parent.childrenForFieldName("redirect")) {
        const source = r ? redirectStdin(r) : undefined;
        if (source) return source;
      }
    } else if (
      parent.type === "pipeline" &&
      // `cat <<EOF | node`: the grammar puts `| node` inside the here-document's node, as a
      // pipeline of its own whose first command is fed by cat.
      (parent.namedChild(0)?.id !== child.id || parent.parent?.type === "heredoc_redirect")
    )
      return { kind: "pipe" };
    else if (parent.type === "function_definition") return { kind: "dynamic" };
  }
  return { kind: "inherited" };
}

/**
 * tree-sitter-bash reads `0<file` as an argument `0` and a redirection `<file`; bash reads a
 * number written right before a redirection as its descriptor. Is `part` such a number?
 */
function isDescriptorOfRedirect(part: Node, command: Node): boolean {
  if (part.type !== "number" || !/^\d+$/.test(part.text)) return false;
  // The redirection may hang on the command or on a statement around it (`a | b 0<&0`).
  for (let n: Node | null = command; n; n = n.parent) {
    if (n.children.some((c) => c !== null && /redirect$/.test(c.type) && c.startIndex === part.endIndex))
      return true;
    if (n.type === "program") break;
  }
  return false;
}

function redirectStdin(r: Node): StdinSource | undefined {
  if (r.type === "herestring_redirect") {
    const target = r.namedChildren.find((n) => n !== null);
    const word = target ? wordOf(target) : undefined;
    return word?.value === undefined ? { kind: "dynamic" } : { kind: "text", text: `${word.value}\n` };
  }
  if (r.type === "heredoc_redirect") {
    const start = r.namedChildren.find((n) => n?.type === "heredoc_start")?.text ?? "";
    const body = r.namedChildren.find((n) => n?.type === "heredoc_body");
    const text = body?.text ?? "";
    if (/['"\\]/.test(start)) return { kind: "text", text };
    if (/[$`]/.test(text)) return { kind: "dynamic" };
    return { kind: "text", text: text.replace(/\\\n/g, "").replace(/\\([\\$`])/g, "$1") };
  }
  if (r.type === "file_redirect") {
    const descriptor = r.childForFieldName("descriptor")?.text;
    const op = r.children.find((n) => n !== null && !n.isNamed)?.text;
    if ((op === "<" || op === "<>") && (descriptor === undefined || descriptor === "0")) {
      const dest = r.childForFieldName("destination");
      return { kind: "file", path: dest ? wordOf(dest).value : undefined };
    }
    // `<&3`, `0<&-`: standard input duplicated from (or closed like) another descriptor.
    if (op === "<&" || op === "<&-") {
      if (descriptor === undefined || descriptor === "0") return { kind: "file", path: undefined };
    }
  }
  return undefined;
}

/** Quote removal for one word node, or why its value is unknown until run time. */
export function wordOf(node: Node): ShellWord {
  const acc: ShellWord = { raw: node.text, value: "", splits: false, glob: false };
  addPart(node, acc, false);
  // The grammar splits some words into pieces (`xdg-ope{n,}`): judge globs and braces on the whole text.
  if (!acc.glob && unquotedGlob(node.text)) acc.glob = true;
  return acc;
}

/** Unquoted glob characters or a brace expansion (`{a,b}`, `{1..3}`) anywhere in a word's source. */
export function unquotedGlob(text: string): boolean {
  let plain = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      i++;
      plain += "_";
      continue;
    }
    if (c === "'" || (c === "$" && text[i + 1] === "'")) {
      if (c === "$") i++;
      const end = text.indexOf("'", i + 1);
      if (end === -1) return false;
      plain += "_";
      i = end;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      plain += "_";
      i = j;
      continue;
    }
    if (c === "$" && (text[i + 1] === "{" || text[i + 1] === "(")) return false; // an expansion: its own flags apply
    plain += c;
  }
  return /[*?[]/.test(plain) || /\{[^{}]*(,|\.\.)[^{}]*\}/.test(plain);
}

function dynamicPart(acc: ShellWord, reason: string, splits: boolean): void {
  acc.value = undefined;
  acc.dynamic ??= reason;
  if (splits) acc.splits = true;
}

function append(acc: ShellWord, text: string): void {
  if (acc.value !== undefined) acc.value += text;
}

function addPart(node: Node, acc: ShellWord, quoted: boolean): void {
  switch (node.type) {
    case "word": {
      const r = unescapeUnquoted(node.text);
      append(acc, r.value);
      if (r.glob) acc.glob = true;
      return;
    }
    case "number":
      append(acc, node.text);
      return;
    case "raw_string":
      append(acc, node.text.slice(1, -1));
      return;
    case "ansi_c_string":
      append(acc, decodeAnsiC(node.text.slice(2, -1)));
      return;
    case "string":
      for (const child of node.children) {
        if (!child) continue;
        if (child.type === "string_content") append(acc, unescapeDouble(child.text));
        else if (!child.isNamed) append(acc, child.type === '"' ? "" : child.text);
        else addPart(child, acc, true);
      }
      return;
    case "translated_string":
    case "concatenation":
      for (const child of node.children) {
        if (!child || isTranslationDollar(child)) continue;
        if (child.isNamed) addPart(child, acc, quoted);
        else literalToken(child, acc, quoted);
      }
      return;
    case "command_substitution":
      dynamicPart(acc, `command substitution ${clip(node.text)}`, !quoted);
      return;
    case "arithmetic_expansion":
      dynamicPart(acc, `arithmetic expansion ${clip(node.text)}`, !quoted);
      return;
    case "process_substitution":
      dynamicPart(acc, `process substitution ${clip(node.text)}`, false);
      return;
    case "brace_expression":
      acc.glob = true;
      append(acc, node.text);
      return;
    default:
      if (EXPANSIONS.has(node.type)) {
        dynamicPart(acc, `parameter expansion ${clip(node.text)}`, !quoted);
        return;
      }
      if (!node.isNamed) {
        literalToken(node, acc, quoted);
        return;
      }
      dynamicPart(acc, `${node.type.replace(/_/g, " ")} ${clip(node.text)}`, !quoted);
  }
}

/**
 * An unnamed token inside a word. Only a lone `$` is known to stand for itself; any other
 * (the grammar's "``" for an empty or blank backtick substitution, `p``ush`, which bash
 * runs as `push`) makes the word unknown rather than copying the token's text into it:
 * the word the policy judges must be the word bash runs.
 */
function literalToken(node: Node, acc: ShellWord, quoted: boolean): void {
  if (node.type === "$") append(acc, "$");
  else
    dynamicPart(
      acc,
      `${node.type === "``" ? "command substitution" : "a token that cannot be read"} ${clip(node.text)}`,
      !quoted,
    );
}

/** The `$` of `$"text"` (locale translation) is not part of the word's value. */
function isTranslationDollar(node: Node): boolean {
  return (
    !node.isNamed &&
    node.type === "$" &&
    node.nextSibling?.type === "string" &&
    node.endIndex === node.nextSibling.startIndex
  );
}

function clip(text: string): string {
  return `\`${text.length > 40 ? `${text.slice(0, 37)}...` : text}\``;
}

/** Backslash removal outside quotes; notes unescaped glob and brace-expansion characters. */
export function unescapeUnquoted(text: string): { value: string; glob: boolean } {
  let value = "";
  let glob = false;
  let braceOpen = false;
  let braceSep = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[i + 1];
      i++;
      if (next === undefined) value += "\\";
      else if (next !== "\n") value += next;
      continue;
    }
    if (c === "*" || c === "?" || c === "[") glob = true;
    if (c === "{") braceOpen = true;
    if (braceOpen && (c === "," || (c === "." && text[i + 1] === "."))) braceSep = true;
    if (c === "}" && braceOpen && braceSep) glob = true;
    value += c;
  }
  return { value, glob };
}

/** Backslash removal inside double quotes: only before $ ` " \ and newline. */
export function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === "\n" ? "" : c));
}

/** What bash does to the text between backticks before parsing it: \$ \` \\ lose the backslash. */
export function unescapeBackticks(text: string): string {
  return text.replace(/\\([$`\\])/g, "$1");
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/**
 * Decode the body of `$'…'` the way bash does. An escape that makes a NUL (`\0`, `\x00`,
 * `\u0000`, `\c@` …) ends the string there: bash's strings are C strings, so
 * `$'xdg-open\0junk'` runs `xdg-open`, and the policy must read that word, not
 * `xdg-open\0junk`.
 */
export function decodeAnsiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    let decoded: string;
    const simple = SIMPLE_ESCAPES[n];
    if (simple !== undefined) {
      decoded = simple;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      decoded = String.fromCharCode(Number.parseInt(m, 8) & 0xff);
      i += m.length - 1;
    } else if (n === "x" || n === "u" || n === "U") {
      const max = n === "x" ? 2 : n === "u" ? 4 : 8;
      const m = new RegExp(`^[0-9a-fA-F]{1,${max}}`).exec(body.slice(i + 1));
      if (!m) {
        out += `\\${n}`;
        continue;
      }
      const code = Number.parseInt(m[0], 16);
      decoded = code <= 0x10ffff ? String.fromCodePoint(code) : "";
      i += m[0].length;
    } else if (n === "c" && i + 1 < body.length) {
      // `\c\\` is control-backslash and takes both backslashes (bash's ansicstr).
      if (body[i + 1] === "\\" && body[i + 2] === "\\") i++;
      decoded = String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else {
      decoded = `\\${n}`;
    }
    if (decoded === "\0") return out;
    out += decoded;
  }
  return out;
}
