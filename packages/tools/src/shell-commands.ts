import type { ShellWord, StdinSource } from "./shell-words.js";
import { SHELLS, WRAPPERS, type WrapperSpec } from "./shell-wrappers.js";

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
}

/** What else a command runs: a peeled inner command, a string run as shell code, or something uncheckable. */
export type Continuation =
  | { kind: "command"; words: ShellWord[]; stdin?: StdinSource }
  | { kind: "script"; script: string; via: string }
  | { kind: "unresolvable"; reason: string };

/** `/usr/bin/Xdg-Open.exe` → `xdg-open`. */
export function commandName(value: string): string {
  const base = value.slice(value.replace(/[/\\]+$/, "").lastIndexOf("/") + 1).replace(/[/\\]+$/, "");
  const win = base.slice(base.lastIndexOf("\\") + 1);
  return win.toLowerCase().replace(/\.exe$/, "");
}

/** Shell options that take a separate argument (`-o pipefail`, `--rcfile f`). */
const SHELL_VALUE_OPTIONS = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function isOption(value: string): boolean {
  return value.length > 1 && value.startsWith("-");
}

type OptionScan =
  | { kind: "stop" }
  | { kind: "script"; attached: string | undefined }
  | { kind: "flag"; takesNext: boolean };

/**
 * Read one option word against a wrapper's spec: long options (`--opt`, `--opt=value`) by
 * name; short ones as a cluster (`-qc 'cmd'`, `-oL`, `-n10`), letter by letter, the way
 * getopt does: a letter that takes a value takes the rest of the word or the next word.
 */
function scanOption(value: string, spec: WrapperSpec): OptionScan {
  if (value.startsWith("--")) {
    const eq = value.indexOf("=");
    const name = eq === -1 ? value : value.slice(0, eq);
    if (spec.stop?.includes(name)) return { kind: "stop" };
    if (spec.script?.includes(name))
      return { kind: "script", attached: eq === -1 ? undefined : value.slice(eq + 1) };
    return { kind: "flag", takesNext: eq === -1 && (spec.value?.includes(name) ?? false) };
  }
  for (let j = 1; j < value.length; j++) {
    const letter = `-${value[j]}`;
    const rest = value.slice(j + 1);
    if (spec.stop?.includes(letter)) return { kind: "stop" };
    if (spec.script?.includes(letter)) return { kind: "script", attached: rest === "" ? undefined : rest };
    if (spec.value?.includes(letter)) return { kind: "flag", takesNext: rest === "" };
  }
  return { kind: "flag", takesNext: false };
}

function unresolvableWord(word: ShellWord, what: string): Continuation {
  return {
    kind: "unresolvable",
    reason: `${what} \`${word.raw}\` is only known at run time (${word.dynamic ?? "glob or brace expansion"})`,
  };
}

/**
 * Peel one wrapper. Returns the inner command (or shell string), `[]` when the wrapper runs
 * nothing (`command -v x`, a bare `env`), or undefined when `cmd` is not a wrapper.
 */
function peelWrapper(cmd: ResolvedCommand, spec: WrapperSpec): Continuation[] | undefined {
  const { words } = cmd;
  let i = 1;
  if (spec.subcommands) {
    const sub = words[1]?.value;
    if (sub === undefined || !spec.subcommands.includes(sub)) {
      // Options may come first (`pnpm -C dir exec`); find the subcommand after them.
      let j = 1;
      while (j < words.length && isOption(words[j]?.value ?? "")) {
        const scan = scanOption(words[j]!.value!, spec);
        j += scan.kind === "flag" && scan.takesNext ? 2 : 1;
      }
      const later = words[j]?.value;
      if (later === undefined || !spec.subcommands.includes(later)) return undefined;
      i = j + 1;
    } else i = 2;
  }
  let operands = spec.operands ?? 0;
  while (i < words.length) {
    const word = words[i]!;
    const value = word.value;
    if (value === undefined) {
      if (word.splits || operands === 0) return [unresolvableWord(word, `an argument of ${cmd.name}`)];
      operands--;
      i++;
      continue;
    }
    if (value === "--") {
      i++;
      break;
    }
    if (cmd.name === "env" && value === "-") {
      i++;
      continue;
    }
    if (isOption(value)) {
      const scan = scanOption(value, spec);
      if (scan.kind === "stop") return [];
      if (scan.kind === "script") {
        const text = scan.attached === undefined ? words[i + 1] : { ...word, value: scan.attached };
        if (!text) return [{ kind: "unresolvable", reason: `${cmd.name} ${value} has no command string` }];
        if (text.value === undefined) return [unresolvableWord(text, `the ${value} string of ${cmd.name}`)];
        return [{ kind: "script", script: text.value, via: `${cmd.name} ${value}` }];
      }
      if (scan.takesNext) {
        const optionValue = words[i + 1];
        if (optionValue?.splits) return [unresolvableWord(optionValue, `the ${value} value of ${cmd.name}`)];
        i += 2;
      } else i++;
      continue;
    }
    if (spec.assignments && ASSIGNMENT.test(value)) {
      i++;
      continue;
    }
    if (operands > 0) {
      operands--;
      i++;
      continue;
    }
    break;
  }
  if (cmd.name === "coproc") return peelCoproc(words.slice(1));
  const rest = words.slice(i);
  return rest.length === 0 ? [] : [{ kind: "command", words: rest }];
}

function peelCoproc(rest: ShellWord[]): Continuation[] {
  const first = rest[0]?.value;
  if (first === "{" || first === "(" || rest[1]?.value === "{" || rest[1]?.value === "(") {
    return [{ kind: "unresolvable", reason: "coproc with a compound command cannot be checked" }];
  }
  return rest.length === 0 ? [] : [{ kind: "command", words: rest }];
}

/** `sh -c '…'`, `bash -lc '…'`, `bash <<EOF`, `bash script.sh`. */
function peelShell(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let dashC = false;
  let readsStdin = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    const value = word.value;
    if (value === undefined) {
      if (word.splits) return [unresolvableWord(word, `an argument of ${cmd.name}`)];
      break;
    }
    if (value === "--" || value === "-") {
      if (value === "-") readsStdin = true;
      i++;
      break;
    }
    if (!(value.startsWith("-") || value.startsWith("+")) || value.length < 2) break;
    if (SHELL_VALUE_OPTIONS.has(value) || (!value.startsWith("--") && /[oO]/.test(value.slice(1)))) {
      if (!value.startsWith("--") && value.slice(1).includes("c")) dashC = true;
      i++; // the option's value (`-o pipefail`, `-eo pipefail`, `--rcfile f`)
      continue;
    }
    if (!value.startsWith("--")) {
      if (value.slice(1).includes("c")) dashC = true;
      if (value.slice(1).includes("s")) readsStdin = true;
    } else if (value === "--command") dashC = true;
  }
  const operand = words[i];
  if (dashC) {
    if (!operand) return [{ kind: "unresolvable", reason: `${cmd.name} -c has no command string` }];
    if (operand.value === undefined)
      return [unresolvableWord(operand, `the command string of ${cmd.name} -c`)];
    return [{ kind: "script", script: operand.value, via: `${cmd.name} -c` }];
  }
  if (operand && !readsStdin) {
    if (operand.value === undefined) return [unresolvableWord(operand, `the script run by ${cmd.name}`)];
    if (/^\/(dev\/(stdin|fd\/)|proc\/self\/fd\/)/.test(operand.value)) return stdinScript(cmd);
    return []; // a script file: its contents are not checked (see docs/security.md)
  }
  return stdinScript(cmd);
}

function stdinScript(cmd: ResolvedCommand): Continuation[] {
  const { stdin } = cmd;
  if (stdin.kind === "text")
    return [{ kind: "script", script: stdin.text, via: `${cmd.name} reading a here-document` }];
  if (stdin.kind === "file" && stdin.path !== undefined && !/^\/(dev|proc)\//.test(stdin.path)) return [];
  return [
    {
      kind: "unresolvable",
      reason: `${cmd.name} would read commands from standard input (${stdin.kind === "pipe" ? "a pipe" : "not a literal here-document"}), which cannot be checked; use ${cmd.name} -c '…' instead`,
    },
  ];
}

/** `find … -exec cmd {} \;` (also -execdir, -ok, -okdir). */
function peelFind(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  const { words } = cmd;
  for (let i = 1; i < words.length; i++) {
    const v = words[i]!.value;
    if (v === "-exec" || v === "-execdir" || v === "-ok" || v === "-okdir") {
      let end = i + 1;
      while (end < words.length && words[end]!.value !== ";" && words[end]!.value !== "+") end++;
      out.push({ kind: "command", words: words.slice(i + 1, end) });
      i = end;
    }
  }
  return out;
}

function joinedScript(cmd: ResolvedCommand, from: number, via: string): Continuation[] {
  const parts = cmd.words.slice(from);
  if (parts.length === 0) return [];
  const dynamic = parts.find((w) => w.value === undefined);
  if (dynamic) return [unresolvableWord(dynamic, `an argument of ${via}`)];
  return [{ kind: "script", script: parts.map((w) => w.value).join(" "), via }];
}

/** `watch [options] command…` runs its arguments through `sh -c` (unless -x). */
function peelWatch(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let i = 1;
  let exec = false;
  for (; i < words.length; i++) {
    const v = words[i]!.value;
    if (v === undefined || !isOption(v)) break;
    if (v === "-x" || v === "--exec") exec = true;
    if (v === "-n" || v === "--interval" || v === "-q" || v === "--equexit") i++;
  }
  return exec ? [{ kind: "command", words: words.slice(i) }] : joinedScript(cmd, i, "watch");
}

/** `trap 'cmd' SIGNAL…` — the handler is shell code. */
function peelTrap(cmd: ResolvedCommand): Continuation[] {
  let i = 1;
  while (cmd.argv[i] === "--" || cmd.argv[i] === "-p" || cmd.argv[i] === "-l") i++;
  const handler = cmd.words[i];
  if (!handler || cmd.words.length - i < 2) return [];
  if (handler.value === undefined) return [unresolvableWord(handler, "the trap handler")];
  if (handler.value === "-" || handler.value === "") return [];
  return [{ kind: "script", script: handler.value, via: "trap" }];
}

/** `alias name='cmd'` — the value is shell code once the alias is used. */
function peelAlias(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  for (const word of cmd.words.slice(1)) {
    if (word.value === undefined) {
      out.push(unresolvableWord(word, "an alias definition"));
      continue;
    }
    const eq = word.value.indexOf("=");
    if (eq > 0) out.push({ kind: "script", script: word.value.slice(eq + 1), via: "alias" });
  }
  return out;
}

/** `source file` / `. file`: a file is not checked, code fed from a pipe or substitution cannot be. */
function peelSource(cmd: ResolvedCommand): Continuation[] {
  const file = cmd.words[1];
  if (!file) return [];
  if (file.value === undefined) return [unresolvableWord(file, `the file read by ${cmd.name}`)];
  if (/^\/(dev\/(stdin|fd\/)|proc\/self\/fd\/)/.test(file.value)) return stdinScript(cmd);
  return [];
}

/** Everything `cmd` itself makes run besides its own program. */
export function continuations(cmd: ResolvedCommand): Continuation[] {
  const { name } = cmd;
  if (SHELLS.has(name)) return peelShell(cmd);
  switch (name) {
    case "eval":
      return joinedScript(cmd, 1, "eval");
    case "find":
      return peelFind(cmd);
    case "watch":
      return peelWatch(cmd);
    case "trap":
      return peelTrap(cmd);
    case "alias":
      return peelAlias(cmd);
    case "source":
    case ".":
      return peelSource(cmd);
    case "coproc":
      return peelCoproc(cmd.words.slice(1));
  }
  const spec = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  return spec ? (peelWrapper(cmd, spec) ?? []) : [];
}

/** The names the policy peels, for documentation and tests. */
export function peeledCommandNames(): string[] {
  return [
    ...Object.keys(WRAPPERS),
    ...SHELLS,
    "eval",
    "find",
    "watch",
    "trap",
    "alias",
    "source",
    ".",
    "coproc",
  ];
}
