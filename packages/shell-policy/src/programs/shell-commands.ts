import { type GetoptResult, getopt, type ParsedOption } from "../parse/shell-getopt.js";
import { globMayBeOption, wordMayBe } from "../parse/shell-glob.js";
import { literalWord, type ShellWord, type StdinSource } from "../parse/shell-words.js";
import { isDescriptorPath } from "./descriptor-path.js";
import { GIT_GLOBAL_VALUE } from "./git-programs.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";
import { builtinContinuations } from "./shell-indirection.js";
import { interpreterContinuations, isInterpreterName } from "./shell-interpreters.js";
import {
  peelBwrap,
  peelFirejail,
  peelIp,
  peelJobs,
  peelLldb,
  peelMpirun,
  peelRr,
  peelTcl,
  peelTsp,
} from "./shell-launchers.js";
import { programOptionContinuations } from "./shell-program-options.js";
import { packageFallback } from "./shell-readable.js";
import { SHELLS, WRAPPER_ALIASES, WRAPPERS, type WrapperSpec } from "./shell-wrappers.js";

/** `/usr/bin/Xdg-Open.exe` → `xdg-open`. */
export function commandName(value: string): string {
  const base = value.slice(value.replace(/[/\\]+$/, "").lastIndexOf("/") + 1).replace(/[/\\]+$/, "");
  const win = base.slice(base.lastIndexOf("\\") + 1);
  return win.toLowerCase().replace(/\.(exe|com|bat|cmd)$/, "");
}

/** env and sudo accept any NAME=value, even names a shell would not (`BASH_FUNC_x%%=…`). */
const ENV_ASSIGNMENT = /^([^=]+)=/;

export function unresolvableWord(word: ShellWord, what: string): Continuation {
  return {
    kind: "unresolvable",
    reason: `${what} \`${word.raw}\` is only known at run time (${word.dynamic ?? "glob or brace expansion"})`,
  };
}

/** A shell (or interpreter) reading its program from standard input: check it if it is literal. */
export function stdinScript(name: string, stdin: StdinSource, asShell = true): Continuation[] {
  if (stdin.kind === "text") {
    return asShell ? [{ kind: "script", script: stdin.text, via: `${name} reading a here-document` }] : [];
  }
  if (stdin.kind === "file" && stdin.path === "/dev/null") return [];
  const from =
    stdin.kind === "pipe"
      ? "a pipe"
      : stdin.kind === "file"
        ? `the file ${stdin.path === undefined ? "named at run time" : `\`${stdin.path}\``}`
        : stdin.kind === "dynamic"
          ? "a here-document with expansions"
          : "whatever standard input is at run time";
  return [
    {
      kind: "unresolvable",
      reason: `${name} would read its commands from standard input (${from}), which cannot be checked; pass them literally (${asShell ? `${name} -c '…'` : "as a literal here-document"})`,
    },
  ];
}

/** Bash's options: `-c` string, `-s`/`-i` stdin, `-o`/`-O` take a value; long options exactly. */
const SHELL_LONG = new Set([
  "--login",
  "--noprofile",
  "--norc",
  "--posix",
  "--restricted",
  "--verbose",
  "--noediting",
  "--debugger",
  "--dump-strings",
  "--dump-po-strings",
  "--protected",
  "--help",
  "--version",
  "--pretty-print",
  "--no-rcs",
  "--interactive",
  "--command",
]);

/**
 * Startup files named on the command line are code the policy cannot see: bash's
 * `--rcfile`/`--init-file` (bash also reads them with one dash, `-rcfile`, before its
 * short options), yash's `--rcfile=`/`--profile=`, fish's `--init-command`/`-C`. Denied in
 * any spelling, with `=` or a separate value, whether or not the shell is interactive.
 */
const SHELL_STARTUP_NAMES = ["rcfile", "init-file", "profile", "init-command"];
function isStartupOption(value: string): boolean {
  const m = /^(--?)([a-z-]+)(=|$)/.exec(value);
  if (!m) return false;
  // One dash: bash's exact long names; two: also any prefix (yash and fish abbreviate).
  return SHELL_STARTUP_NAMES.some((n) => n === m[2] || (m[1] === "--" && n.startsWith(m[2]!)));
}

/**
 * Shells whose grammar is not bash's (zsh `=cmd` and glob qualifiers, fish, csh…): their code
 * strings cannot be read with a bash parser, so they are denied (script files still run).
 */
const FOREIGN_SHELLS = new Set(["zsh", "fish", "tcsh", "csh", "elvish", "nu", "xonsh", "ion", "rc", "es"]);

/** Shells that read startup files on every start, interactive or not (zsh's .zshenv, fish's config.fish, csh's .cshrc). */
const ALWAYS_STARTUP = new Set(["zsh", "fish", "xonsh", "elvish", "nu", "tcsh", "csh"]);
/** `sh -c '…'`, `bash -lc '…'`, `bash <<EOF`, `bash script.sh`, `bash //dev/stdin`. */
export function peelShell(
  name: string,
  words: readonly ShellWord[],
  stdin: StdinSource,
  openArgs = false,
  startupRedirect = false,
): Continuation[] {
  let dashC = false;
  let readsStdin = false;
  // Interactive (`-i`) and login (`-l`, `--login`, ksh's `-E`) shells read startup files.
  let readsStartup = ALWAYS_STARTUP.has(name);
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    const value = word.value;
    if (value === undefined || globMayBeOption(word)) {
      return [unresolvableWord(word, `an argument where ${name} reads its options`)];
    }
    if (value === "--" || value === "-") {
      if (value === "-") readsStdin = true;
      i++;
      break;
    }
    if (!(value.startsWith("-") || value.startsWith("+")) || value.length < 2) break;
    if (isStartupOption(value)) {
      return [
        {
          kind: "unresolvable",
          reason: `${name} ${value.replace(/=.*$/s, "")} names a startup file (or startup code) that ${name} runs before the command, which cannot be checked`,
        },
      ];
    }
    if (value.startsWith("--")) {
      if (value === "--help" || value === "--version") return [];
      if (value === "--command") dashC = true;
      else if (value === "--login" || value === "--interactive") readsStartup = true;
      else if (!SHELL_LONG.has(value)) {
        return [{ kind: "unresolvable", reason: `${name}: unknown option \`${value}\`` }];
      }
      continue;
    }
    const letters = value.slice(1);
    // fish: `-C CMD` (--init-command) runs CMD before anything else.
    if (name === "fish" && letters.includes("C")) {
      return [{ kind: "unresolvable", reason: "fish -C runs startup code that cannot be checked" }];
    }
    if (letters.includes("c")) dashC = true;
    if (letters.includes("s") || letters.includes("i")) readsStdin = true;
    if (/[il]/.test(letters) || (/^(ksh|ksh93|mksh|pdksh|oksh|lksh)$/.test(name) && letters.includes("E")))
      readsStartup = true;
    // `-o pipefail`, `-eo pipefail`, `-O extglob`: each o/O takes the next word.
    i += (letters.match(/[oO]/g) ?? []).length;
  }
  if (startupRedirect && readsStartup) {
    return [
      {
        kind: "unresolvable",
        reason: `${name} reads startup files from \`$HOME\` (or \`$ZDOTDIR\`/\`$XDG_CONFIG_HOME\`), which this command line points elsewhere: code the policy cannot see`,
      },
    ];
  }
  const operand = words[i];
  if (
    FOREIGN_SHELLS.has(name) &&
    (dashC || !operand || readsStdin || (operand.value !== undefined && isDescriptorPath(operand.value)))
  ) {
    return [
      {
        kind: "unresolvable",
        reason: `${name} code is not bash: its grammar (e.g. zsh's \`=cmd\` and glob qualifiers) cannot be checked by capgate's bash parser; use bash -c '…'`,
      },
    ];
  }
  if (dashC) {
    if (!operand) {
      return openArgs
        ? [{ kind: "unresolvable", reason: `the ${name} -c string would come from data read at run time` }]
        : [{ kind: "unresolvable", reason: `${name} -c has no command string` }];
    }
    if (operand.value === undefined) return [unresolvableWord(operand, `the command string of ${name} -c`)];
    return [{ kind: "script", script: operand.value, via: `${name} -c` }];
  }
  if (operand && !readsStdin) {
    if (operand.value === undefined) return [unresolvableWord(operand, `the script run by ${name}`)];
    if (isDescriptorPath(operand.value)) return stdinScript(name, stdin);
    return []; // a script file: its contents are not checked (docs/shell-policy.md)
  }
  if (openArgs) {
    return [
      { kind: "unresolvable", reason: `the script ${name} runs would come from data read at run time` },
    ];
  }
  return stdinScript(name, stdin);
}

const FIND_EXEC = ["-exec", "-execdir", "-ok", "-okdir"];

/** `find … -exec cmd {} \;` (also -execdir, -ok, -okdir): `{}` is a file name found at run time. */
function peelFind(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  const { words } = cmd;
  for (let i = 1; i < words.length; i++) {
    const v = words[i]!.value;
    const glob = words[i]!.glob ? FIND_EXEC.find((p) => wordMayBe(words[i]!, p)) : undefined;
    if (glob) {
      return [
        {
          kind: "unresolvable",
          reason: `\`${words[i]!.raw}\` is a glob that a file named \`${glob}\` would turn into find's ${glob}, which runs a command`,
        },
      ];
    }
    if (v === "-exec" || v === "-execdir" || v === "-ok" || v === "-okdir") {
      let end = i + 1;
      while (end < words.length && words[end]!.value !== ";" && words[end]!.value !== "+") end++;
      out.push({ kind: "command", words: markData(words.slice(i + 1, end), "{}", "a file name find finds") });
      i = end;
    }
  }
  return out;
}

/** Words containing `mark` become data: their value is only known at run time. */
function markData(words: readonly ShellWord[], mark: string, what: string): ShellWord[] {
  return words.map((w) =>
    w.value?.includes(mark) ? { ...w, value: undefined, dynamic: `${what} replaces \`${mark}\`` } : w,
  );
}

function joinedScript(words: readonly ShellWord[], via: string): Continuation[] {
  if (words.length === 0) return [];
  const dynamic = words.find((w) => w.value === undefined);
  if (dynamic) return [unresolvableWord(dynamic, `an argument of ${via}`)];
  return [{ kind: "script", script: words.map((w) => w.value).join(" "), via }];
}

/** `trap 'cmd' SIGNAL…` — the handler is shell code. */
function peelTrap(cmd: ResolvedCommand): Continuation[] {
  let i = 1;
  while (cmd.argv[i] === "--" || cmd.argv[i] === "-p" || cmd.argv[i] === "-l" || cmd.argv[i] === "-P") i++;
  const handler = cmd.words[i];
  if (!handler) return [];
  if (handler.value === undefined) return [unresolvableWord(handler, "the trap handler")];
  if (cmd.words.length - i < 2) {
    // `trap 'code'` alone: bash takes a single argument as a signal name unless it is a
    // number or a known name, so a lone handler-looking word is checked as code anyway.
    return handler.value === "-" ? [] : [{ kind: "script", script: handler.value, via: "trap" }];
  }
  if (handler.value === "-" || handler.value === "") return [];
  return [{ kind: "script", script: handler.value, via: "trap" }];
}

/** `source file` / `. file`: a file is not checked, code fed from a pipe, stdin or fd cannot be. */
function peelSource(cmd: ResolvedCommand): Continuation[] {
  let i = 1;
  if (cmd.words[i]?.value === "--") i++;
  const file = cmd.words[i];
  if (!file) return [];
  if (file.value === undefined) return [unresolvableWord(file, `the file read by ${cmd.name}`)];
  if (isDescriptorPath(file.value)) return stdinScript(cmd.name, cmd.stdin);
  return [];
}

function peelCoproc(rest: ShellWord[]): Continuation[] {
  const first = rest[0]?.value;
  if (first === "{" || first === "(" || rest[1]?.value === "{" || rest[1]?.value === "(") {
    return [{ kind: "unresolvable", reason: "coproc with a compound command cannot be checked" }];
  }
  return rest.length === 0 ? [] : [{ kind: "command", words: rest }];
}

/** `sg group [-c] 'shell string' [$0 …]`; `newgrp [-] [group]` starts a shell on stdin. */
function peelSg(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  if (cmd.name === "newgrp") return stdinScript("newgrp", cmd.stdin);
  if (words.length < 2) return [];
  let i = 2;
  if (words[i]?.value === "-c") i++;
  const script = words[i];
  if (!script) return stdinScript("sg", cmd.stdin);
  if (script.value === undefined) return [unresolvableWord(script, "the shell string of sg")];
  return [{ kind: "script", script: script.value, via: "sg" }];
}

/** Split `env -S` text the way coreutils does: quotes, `\_` `\t` `\n` …, `${VAR}` is run time. */
export function splitEnvString(text: string): string[] | { error: string } {
  const out: string[] = [];
  let cur: string | undefined;
  let quote: "'" | '"' | undefined;
  const push = (c: string) => {
    cur = (cur ?? "") + c;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else if (c === "\\" && (text[i + 1] === "\\" || text[i + 1] === "'")) push(text[++i]!);
      else push(c);
      continue;
    }
    if (c === "$" && text[i + 1] === "{")
      return { error: "`$\u007b…}` in an env -S string is expanded at run time" };
    if (c === "$") return { error: "`$` in an env -S string" };
    if (c === "\\") {
      const n = text[++i];
      if (n === undefined) return { error: "a trailing backslash in an env -S string" };
      const map: Record<string, string> = {
        _: quote ? " " : "",
        t: "\t",
        n: "\n",
        r: "\r",
        f: "\f",
        v: "\v",
        "\\": "\\",
        '"': '"',
        "'": "'",
        $: "$",
        "#": "#",
      };
      if (n === "c") break;
      if (n === "_" && !quote) {
        if (cur !== undefined) out.push(cur);
        cur = undefined;
        continue;
      }
      const m = map[n];
      if (m === undefined) return { error: `the escape \`\\${n}\` in an env -S string` };
      push(m);
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else push(c);
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur ??= "";
      continue;
    }
    if (c === "#" && cur === undefined) break;
    if (/\s/.test(c)) {
      if (cur !== undefined) out.push(cur);
      cur = undefined;
      continue;
    }
    push(c);
  }
  if (quote) return { error: "an unterminated quote in an env -S string" };
  if (cur !== undefined) out.push(cur);
  return out;
}

function isPosixlyCorrect(cmd: ResolvedCommand): boolean {
  return cmd.argv.some((a) => a?.startsWith("POSIXLY_CORRECT="));
}

/**
 * Peel one wrapper through its option table. Returns the inner command (or shell string),
 * `[]` when the wrapper runs nothing (`command -v x`, a bare `env`), or undefined when
 * `cmd` is not used as a wrapper here (`pnpm install`).
 */
function peelWrapper(cmd: ResolvedCommand, spec: WrapperSpec, tool: string): Continuation[] | undefined {
  const words = cmd.words;
  let start = 1;
  if (spec.subcommands) {
    const head = getopt(words, 1, { ...spec.options, permute: false }, tool);
    const at = head.ok ? head.stop : -1;
    const sub = at > 0 ? words[at]?.value : undefined;
    if (sub === undefined || !spec.subcommands.includes(sub)) {
      if (!head.ok && words.some((w) => w.value !== undefined && spec.subcommands!.includes(w.value))) {
        return [{ kind: "unresolvable", reason: head.reason }];
      }
      return undefined;
    }
    start = at + 1;
  }
  if (spec.leadingOperand && tool === cmd.name && spec.leadingOperand.test(words[start]?.value ?? "-"))
    start++;
  const parsed: GetoptResult = getopt(words, start, spec.options, tool, isPosixlyCorrect(cmd));
  if (!parsed.ok)
    return [
      {
        kind: "unresolvable",
        reason: `${parsed.reason}; denied because the command it runs cannot be told for certain`,
      },
    ];
  const out: Continuation[] = [];
  let viaShell = false;
  let replace: string | undefined;
  let hasScript = false;
  const programs: ParsedOption[] = [];
  for (const p of parsed.options) {
    switch (p.spec.role) {
      case "stop":
        return out;
      case "deny":
        return [
          {
            kind: "unresolvable",
            reason: `${tool} ${p.written} cannot be checked${p.spec.note ? `: ${p.spec.note}` : ""}`,
          },
        ];
      case "script":
        hasScript = true;
        if (!p.value) return [{ kind: "unresolvable", reason: `${tool} ${p.written} has no command string` }];
        if (p.value.value === undefined)
          return [unresolvableWord(p.value, `the ${p.written} string of ${tool}`)];
        out.push({ kind: "script", script: p.value.value, via: `${tool} ${p.written}` });
        break;
      case "split": {
        if (!p.value) return [{ kind: "unresolvable", reason: `${tool} ${p.written} has no string` }];
        if (p.value.value === undefined)
          return [unresolvableWord(p.value, `the ${p.written} string of ${tool}`)];
        const split = splitEnvString(p.value.value);
        if (!Array.isArray(split))
          return [{ kind: "unresolvable", reason: `${split.error} cannot be checked` }];
        // The split words take the option's place and env reads its argv again.
        const after = words.slice(p.value === words[p.index + 1] ? p.index + 2 : p.index + 1);
        const again = [words[0]!, ...split.map(literalWord), ...after];
        return peelWrapper({ ...cmd, words: again, argv: again.map((w) => w.value) }, spec, tool) ?? [];
      }
      case "program":
        programs.push(p);
        break;
      case "output-pipe": {
        const v = p.value?.value;
        if (v === undefined)
          return [unresolvableWord(p.value ?? words[p.index]!, `the ${p.written} file of ${tool}`)];
        if (/^[|!]/.test(v)) out.push({ kind: "script", script: v.slice(1), via: `${tool} ${p.written} |` });
        break;
      }
      case "shell":
        viaShell = true;
        break;
      case "replace":
        replace = p.value?.value ?? p.spec.note;
        if (p.value && p.value.value === undefined)
          return [unresolvableWord(p.value, `the ${p.written} value of ${tool}`)];
        break;
    }
  }
  let operands = parsed.operands.map((i) => words[i]!);
  if (spec.dashIsOption) while (operands[0]?.value === "-") operands = operands.slice(1);
  if (spec.assignments) {
    while (operands.length > 0) {
      const w = operands[0]!;
      const v = w.value;
      if (v === undefined) {
        // `NAME="$x"`: the name is literal, the value is not.
        const named = w.splits ? null : /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.raw);
        if (!named) break;
        out.push({ kind: "assignment", name: named[1]!, value: w });
        operands = operands.slice(1);
        continue;
      }
      const m = ENV_ASSIGNMENT.exec(v);
      if (!m || v.startsWith("-")) break;
      out.push({ kind: "assignment", name: m[1]!, value: literalWord(v!.slice(m[0].length)) });
      operands = operands.slice(1);
    }
    if (operands[0]?.value === undefined && operands[0]?.splits) {
      return [unresolvableWord(operands[0], `an argument of ${tool}`)];
    }
  }
  let n = spec.operands ?? 0;
  if (spec.optionalOperand) n = spec.optionalOperand.test(operands[0]?.value ?? "") ? 1 : 0;
  const dataFed = cmd.openArgs === true;
  if (dataFed && (spec.options.permute || operands.length <= n)) {
    return [
      {
        kind: "unresolvable",
        reason: `the command ${tool} runs would come from data read at run time (xargs/find fill in the rest)`,
      },
    ];
  }
  const rest = operands.slice(Math.min(n, operands.length));
  for (const p of programs) {
    if (!p.value) continue;
    if (p.value.value === undefined)
      return [unresolvableWord(p.value, `the program named by ${tool} ${p.written}`)];
    // `su -s /bin/bash … -c x`: a shell program runs the -c string and shell arguments
    // (checked below); any other program is run with them as its arguments.
    if (spec.runs === "shell-args" && SHELLS.has(commandName(p.value.value))) continue;
    out.push({ kind: "command", words: [p.value, ...(spec.runs === "shell-args" ? rest : [])] });
  }
  if (
    spec.postOperandScript &&
    operands.length >= n &&
    spec.postOperandScript.includes(rest[0]?.value ?? "")
  ) {
    const script = rest[1];
    if (!script) return [{ kind: "unresolvable", reason: `${tool} ${rest[0]!.value} has no command string` }];
    if (script.value === undefined) return [unresolvableWord(script, `the command string of ${tool}`)];
    out.push({ kind: "script", script: script.value, via: `${tool} ${rest[0]!.value}` });
    return out;
  }
  if (tool === "runuser" && parsed.options.some((p) => p.spec.names.includes("-u"))) {
    if (operands.length > 0) out.push({ kind: "command", words: operands });
    return out;
  }
  if (parsed.options.some((p) => p.spec.role === "shell-follows")) {
    // `entr -s 'make test'`: the first operand is a shell string ($SHELL -c), the rest its arguments.
    const script = rest[0];
    if (!script) return [...out, { kind: "unresolvable", reason: `${tool} -s has no command string` }];
    if (script.value === undefined) return [unresolvableWord(script, `the shell string of ${tool}`)];
    out.push({ kind: "script", script: script.value, via: `${tool} -s` });
    return out;
  }
  const runs = parsed.options.some((p) => p.spec.role === "command-follows")
    ? "command"
    : (spec.runs ?? "command");
  if (runs === "shell-args") {
    const shell = programs.at(-1)?.value?.value;
    if (shell !== undefined && !SHELLS.has(commandName(shell))) return out;
    if (hasScript && rest.length === 0) return out;
    out.push(...peelShell(tool, [literalWord(shell ?? "sh"), ...rest], cmd.stdin));
    return out;
  }
  if (rest.length === 0) {
    if (hasScript) return out;
    if (spec.appendsData) {
      out.push({
        kind: "unresolvable",
        reason: `${tool} without a command runs echo on its input; name the command (\`${tool} echo\`) so it is fixed`,
      });
    } else if (viaShell || spec.noCommand === "shell") {
      out.push(...stdinScript(tool, cmd.stdin));
    }
    return out;
  }
  if (runs === "shell-joined") {
    out.push(...joinedScript(rest, tool));
    return out;
  }
  let marked = spec.dataMark ? markData(rest, spec.dataMark, `a file name ${tool} fills in`) : rest;
  // `exec -l bash …`, `exec -a -bash bash …`: an argv[0] starting with `-` makes a login shell.
  if (
    tool === "exec" &&
    marked[0]?.value !== undefined &&
    SHELLS.has(commandName(marked[0].value)) &&
    parsed.options.some(
      (p) => p.written === "-l" || (p.written === "-a" && p.value?.value?.startsWith("-") !== false),
    )
  )
    marked = [marked[0], literalWord("-l"), ...marked.slice(1)];
  const inner = replace !== undefined ? markData(marked, replace, `data read by ${tool}`) : marked;
  out.push({
    kind: "command",
    words: inner,
    openArgs: spec.appendsData ? replace === undefined : cmd.openArgs,
  });
  return out;
}

/** `gdb [options] [program]`: -ex strings are gdb commands (`shell …`, `python …`), the program may be run. */
function peelGdb(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  const { words } = cmd;
  const takesValue =
    /^--?(ex|eval-command|iex|init-eval-command|x|command|ix|init-command|p|pid|c|core|s|symbols|e|exec|se|d|directory|cd|tty|D|data-directory|b|l|i|interpreter)$/;
  let i = 1;
  let program: ShellWord | undefined;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (v === undefined) return [unresolvableWord(w, "an argument of gdb")];
    if (v === "--args") {
      const rest = words.slice(i + 1);
      if (rest.length > 0) out.push({ kind: "command", words: rest });
      return out;
    }
    if (!v.startsWith("-")) {
      program ??= w;
      continue;
    }
    const eq = v.indexOf("=");
    const name = eq === -1 ? v : v.slice(0, eq);
    if (!takesValue.test(name)) continue;
    const value = eq === -1 ? words[++i] : literalWord(v.slice(eq + 1));
    if (!value) break;
    if (/^--?(ex|eval-command|iex|init-eval-command)$/.test(name)) {
      if (value.value === undefined) return [unresolvableWord(value, `the ${name} command of gdb`)];
      out.push(...gdbCommand(value.value));
    } else if (/^--?(e|exec|se)$/.test(name)) {
      out.push({ kind: "command", words: [value] });
    }
  }
  if (program) out.push({ kind: "command", words: [program] });
  return out;
}

/**
 * gdb commands that neither run a program nor evaluate an expression in the debuggee (an
 * expression can call `system()`), nor run further commands: `-ex` strings are judged
 * against this allow-list, anything else is unresolvable.
 */
const GDB_SAFE_COMMANDS = new Set([
  "bt",
  "backtrace",
  "where",
  "info",
  "i",
  "list",
  "l",
  "frame",
  "f",
  "up",
  "down",
  "disassemble",
  "x",
  "quit",
  "q",
  "kill",
  "k",
  "detach",
  "break",
  "b",
  "tbreak",
  "delete",
  "d",
  "watch",
  "rwatch",
  "awatch",
  "continue",
  "c",
  "next",
  "n",
  "step",
  "s",
  "stepi",
  "si",
  "nexti",
  "ni",
  "finish",
  "fin",
  "until",
  "u",
  "advance",
  "core-file",
  "core",
  "file",
  "symbol-file",
  "exec-file",
  "directory",
  "dir",
  "show",
  "help",
  "h",
  "apropos",
  "info-frame",
  "thread",
  "bt-full",
  "generate-core-file",
  "gcore",
  "attach",
  "run",
  "r",
  "start",
  "starti",
]);
/** `set` subjects that only change how gdb behaves. */
const GDB_SAFE_SETTINGS =
  /^(pagination|confirm|print\s|logging\s|width|height|listsize|disassembly-flavor|verbose|style\s|startup-with-shell|breakpoint\s+pending|auto-load\s+safe-path|debuginfod)/;

function gdbCommand(text: string): Continuation[] {
  const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(text);
  if (!m) return [];
  const [, verb, rest] = m as unknown as [string, string, string];
  if (verb.startsWith("!")) return [{ kind: "script", script: `${verb.slice(1)} ${rest}`, via: "gdb !" }];
  if (/^(she|shel|shell)$/.test(verb)) return [{ kind: "script", script: rest, via: "gdb shell" }];
  // `run ARGS` starts the program through a shell (startup-with-shell): the arguments are shell text.
  if (/^(r|run|start|starti)$/.test(verb))
    return rest.trim() ? [{ kind: "script", script: `: ${rest}`, via: `gdb ${verb}` }] : [];
  if (verb === "set" && GDB_SAFE_SETTINGS.test(rest)) return [];
  if (verb === "thread" && /^apply\b/.test(rest.trim())) {
    // `thread apply all bt`: the command given is judged like any other.
    const applied = /^apply\s+(?:all|[\d.\s-]+?)\s+((?:-[a-z]+\s+)*)(\S[\s\S]*)$/.exec(rest.trim());
    if (applied) return gdbCommand(applied[2]!);
    return [
      {
        kind: "unresolvable",
        reason: "the gdb command `thread apply` runs further commands that cannot be checked",
      },
    ];
  }
  if (GDB_SAFE_COMMANDS.has(verb)) return [];
  return [
    {
      kind: "unresolvable",
      reason: `the gdb command \`${verb}\` is not one capgate knows to be harmless (it may evaluate code in the program or run commands)`,
    },
  ];
}

/** `valgrind [--opt=value…] program args`: options never take a separate word. */
function peelValgrind(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.value === undefined) return [unresolvableWord(w, "an argument of valgrind")];
    if (w.value === "--") return words.length > i + 1 ? [{ kind: "command", words: words.slice(i + 1) }] : [];
    if (/^--(db-command|vgdb-prefix)/.test(w.value)) {
      return [{ kind: "unresolvable", reason: `valgrind ${w.value} runs a command that cannot be checked` }];
    }
    if (!w.value.startsWith("-")) return [{ kind: "command", words: words.slice(i) }];
  }
  return [];
}

/** start-stop-daemon: the program is the value of --exec/--startas; its arguments follow `--`. */
const START_STOP_VALUE =
  /^(-[pnugsRcrdNPIkO]|--(pidfile|name|user|group|signal|retry|chuid|chroot|chdir|nicelevel|procsched|iosched|umask|output|notify-timeout|ppid|pid))$/;
function peelStartStop(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const out: Continuation[] = [];
  const programs: ShellWord[] = [];
  let args: ShellWord[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (v === undefined) return [unresolvableWord(w, "an argument of start-stop-daemon")];
    if (v === "--") {
      args = words.slice(i + 1);
      break;
    }
    const eq = v.indexOf("=");
    const name = eq === -1 ? v : v.slice(0, eq);
    const program =
      /^(-x|-a|--ex|--exe|--exec|--st|--sta|--star|--start[a-z]+)$/.test(name) && name !== "--start";
    if (program || START_STOP_VALUE.test(name) || (/^-[xapnugsRcrdNPIkO]./.test(v) && !v.startsWith("--"))) {
      const value =
        eq !== -1
          ? literalWord(v.slice(eq + 1))
          : /^-[a-zA-Z]./.test(v)
            ? literalWord(v.slice(2))
            : words[++i];
      if (program && value) programs.push(value);
      if (/^-[xa]$/.test(name) && !value) break;
    }
  }
  for (const p of programs) {
    if (p.value === undefined) return [unresolvableWord(p, "the program of start-stop-daemon")];
    out.push({ kind: "command", words: [p, ...args] });
  }
  return out;
}

/** Commands that build their command lines from data, or run them somewhere the policy cannot follow. */
const DATA_RUNNERS: Readonly<Record<string, string>> = {
  parallel: "GNU parallel builds the commands it runs from its input and `:::` arguments at run time",
  rush: "rush builds the commands it runs from its input at run time",
  at: "at runs commands read from standard input or a file later, outside this command",
  batch: "batch runs commands read from standard input later, outside this command",
  tmux: "tmux runs commands in its server, outside this command's process tree",
  screen: "screen runs commands in its own session, outside this command's process tree",
  byobu: "byobu runs commands in a tmux/screen session, outside this command's process tree",
  zellij: "zellij runs commands in its own session, outside this command's process tree",
  dtach: "dtach runs commands in a detached session",
  abduco: "abduco runs commands in a detached session",
};

/** Everything `cmd` itself makes run besides its own program. */
export function continuations(cmd: ResolvedCommand): Continuation[] {
  const { name } = cmd;
  if (SHELLS.has(name)) return peelShell(name, cmd.words, cmd.stdin, cmd.openArgs, cmd.startupRedirect);
  const dataRunner = Object.hasOwn(DATA_RUNNERS, name) ? DATA_RUNNERS[name] : undefined;
  if (dataRunner) return [{ kind: "unresolvable", reason: dataRunner }];
  if (/^(tclsh|wish)\d[\d.]*$/.test(name)) return peelTcl(cmd);
  switch (name) {
    case "eval": {
      const rest = cmd.words.slice(cmd.words[1]?.value === "--" ? 2 : 1);
      if (cmd.openArgs) return [{ kind: "unresolvable", reason: "eval of data read at run time" }];
      return joinedScript(rest, "eval");
    }
    case "find":
      return peelFind(cmd);
    case "trap":
      return peelTrap(cmd);
    case "source":
    case ".":
      return peelSource(cmd);
    case "coproc":
      return peelCoproc(cmd.words.slice(1));
    case "sg":
    case "newgrp":
      return peelSg(cmd);
    case "gdb":
    case "gdb-multiarch":
      return peelGdb(cmd);
    case "valgrind":
      return peelValgrind(cmd);
    case "start-stop-daemon":
      return peelStartStop(cmd);
    case "capsh":
      return peelCapsh(cmd);
    case "cmake":
      return peelCmakeEnv(cmd);
    case "perf":
      return peelPerf(cmd);
    case "jobs":
      return peelJobs(cmd);
    case "firejail":
      return peelFirejail(cmd);
    case "bwrap":
      return peelBwrap(cmd);
    case "ip":
      return peelIp(cmd);
    case "expect":
    case "tclsh":
    case "wish":
      return peelTcl(cmd);
    case "mpirun":
    case "mpiexec":
    case "orterun":
    case "mpiexec.hydra":
      return peelMpirun(cmd);
    case "lldb":
      return peelLldb(cmd);
    case "rr":
      return peelRr(cmd);
    case "tsp":
      return peelTsp(cmd);
    case "envdir":
      return [
        {
          kind: "unresolvable",
          reason:
            "envdir sets environment variables (LD_PRELOAD, PATH …) from the files of a directory, which cannot be checked",
        },
      ];
  }
  const tool = Object.hasOwn(WRAPPER_ALIASES, name) ? WRAPPER_ALIASES[name]! : name;
  const spec = Object.hasOwn(WRAPPERS, tool) ? WRAPPERS[tool] : undefined;
  if (spec) return peelWrapper(cmd, spec, tool) ?? packageFallback(cmd);
  const glob = globInOptionArea(cmd);
  if (glob) return [glob];
  return [...builtinContinuations(cmd), ...interpreterContinuations(cmd), ...programOptionContinuations(cmd)];
}

/**
 * Interpreters and git read their options up to the first operand. A glob there is replaced
 * by file names at run time: with a file named `-c` in the directory, `python3 -[c] CODE`
 * is `python3 -c CODE`. So a glob that could start with `-` is unresolvable there, and so is
 * a glob standing as git's subcommand (`git pus[h]` with a file `push` is `git push`).
 */
function globInOptionArea(cmd: ResolvedCommand): Continuation | undefined {
  const git = cmd.name === "git";
  if (!git && !isInterpreterName(cmd.name)) return undefined;
  const { words } = cmd;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w.value === "--") return undefined;
    if (w.glob) {
      if (globMayBeOption(w))
        return {
          kind: "unresolvable",
          reason: `\`${w.raw}\` is a glob where ${cmd.name} reads its options: a file named like an option (\`-c\`) would make it one; write the names out, or start the glob with \`./\``,
        };
      if (git)
        return {
          kind: "unresolvable",
          reason: `\`${w.raw}\` is a glob where git reads its subcommand: a file of that name (\`push\`) would make it that subcommand`,
        };
      return undefined;
    }
    if (w.value === undefined || !w.value.startsWith("-")) return undefined;
    // git's global options that take the next word as their value.
    if (git && GIT_GLOBAL_VALUE.test(w.value)) i++;
  }
  return undefined;
}

/**
 * capsh: `--name[=value]` options, then `--` hands every later word to /bin/bash (`capsh --
 * -c 'cmd'` is `bash -c 'cmd'`), or to the program of `--shell=`; `==` runs capsh again.
 */
function peelCapsh(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let shell: ShellWord = literalWord("bash");
  for (let i = 1; i < words.length; i++) {
    const v = words[i]!.value;
    if (v === undefined) return [unresolvableWord(words[i]!, "an argument of capsh")];
    if (v === "--" || v === "==") {
      const rest = words.slice(i + 1);
      if (v === "==") return [{ kind: "command", words: [literalWord("capsh"), ...rest] }];
      return [{ kind: "command", words: [shell, ...rest], stdin: cmd.stdin }];
    }
    if (v.startsWith("--shell=")) shell = literalWord(v.slice(8));
    else if (!v.startsWith("--"))
      return [{ kind: "unresolvable", reason: `capsh: \`${v}\` is not an option capsh reads` }];
  }
  return [];
}

/** `cmake -E env [--unset=NAME] [--modify …] [NAME=VALUE]… cmd`, `cmake -E time cmd` and `cmake -E chdir dir cmd` run a command. */
function peelCmakeEnv(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  if (words[1]?.value !== "-E") return [];
  const sub = words[2]?.value;
  if (sub === "time") return [{ kind: "command", words: words.slice(3), stdin: cmd.stdin }];
  // `cmake -E chdir DIR CMD ARGS…` runs CMD in DIR.
  if (sub === "chdir") {
    if (words[3]?.value === undefined && words[3])
      return [unresolvableWord(words[3], "the directory of cmake -E chdir")];
    return words.length > 4 ? [{ kind: "command", words: words.slice(4), stdin: cmd.stdin }] : [];
  }
  if (sub !== "env") return [];
  const out: Continuation[] = [];
  for (let i = 3; i < words.length; i++) {
    const w = words[i]!;
    if (w.value === undefined) return [unresolvableWord(w, "an argument of cmake -E env")];
    if (w.value === "--") return [...out, { kind: "command", words: words.slice(i + 1), stdin: cmd.stdin }];
    if (w.value.startsWith("--unset=")) continue;
    if (w.value === "--modify") {
      i++;
      continue;
    }
    const m = ENV_ASSIGNMENT.exec(w.value);
    if (m) {
      out.push({ kind: "assignment", name: m[1]!, value: literalWord(w.value.slice(m[0].length)) });
      continue;
    }
    if (w.value.startsWith("-"))
      return [{ kind: "unresolvable", reason: `cmake -E env: unknown option \`${w.value}\`` }];
    return [...out, { kind: "command", words: words.slice(i), stdin: cmd.stdin }];
  }
  return out;
}

/**
 * `perf stat|record|trace|top|sched|kvm|…` run a workload command given after the options.
 * perf's option tables are large and differ per subcommand, so only the form with `--`
 * (`perf stat -e cycles -- make`) is read; a workload without `--` is unresolvable.
 */
function peelPerf(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const sub = words[1]?.value;
  if (
    sub === undefined ||
    /^(-h|--help|-v|--version|version|help|list|report|annotate|script|diff|archive|buildid-list|evlist)$/.test(
      sub,
    )
  )
    return [];
  const dash = words.findIndex((w, i) => i > 1 && w.value === "--");
  if (dash !== -1) return [{ kind: "command", words: words.slice(dash + 1), stdin: cmd.stdin }];
  const operand = words.slice(2).find((w) => w.value === undefined || !w.value.startsWith("-"));
  if (!operand) return [];
  return [
    {
      kind: "unresolvable",
      reason: `perf ${sub} runs a workload command whose start capgate cannot tell among perf's options; write \`perf ${sub} [options] -- command\``,
    },
  ];
}

/** The names the policy peels, for documentation and tests. */
export function peeledCommandNames(): string[] {
  return [
    ...Object.keys(WRAPPERS),
    ...Object.keys(WRAPPER_ALIASES),
    ...SHELLS,
    ...Object.keys(DATA_RUNNERS),
    "eval",
    "find",
    "trap",
    "source",
    ".",
    "coproc",
    "sg",
    "newgrp",
    "gdb",
    "valgrind",
    "start-stop-daemon",
    "capsh",
    "cmake",
    "perf",
    "jobs",
    "firejail",
    "bwrap",
    "ip",
    "expect",
    "tclsh",
    "wish",
    "mpirun",
    "mpiexec",
    "orterun",
    "mpiexec.hydra",
    "lldb",
    "rr",
    "tsp",
    "envdir",
  ];
}
