/**
 * Interpreters given code on the command line (`python3 -c`, `node -e`, `perl -e`, `ruby -e`,
 * `awk '…'`), a module to run (`python3 -m`), or code on standard input. The rule, for every
 * language the same:
 *
 * 1. code or a module that names a URL opener (python webbrowser/antigravity, node open/opn,
 *    ruby launchy, perl Browser::Open, R browseURL) is an opener (denied with the hint);
 * 2. code that evaluates code or imports modules by a computed name (`exec`, `eval`,
 *    `__import__`, `importlib`, `Function`, `require(x)`) cannot be checked: denied;
 * 3. code that starts processes must name the program literally; the literal strings are
 *    then checked as command lines (`subprocess.run(["xdg-open", u])` is an opener);
 * 4. code read from a pipe or a file on stdin cannot be checked: denied; a literal
 *    here-document is code like `-c`.
 *
 * Script files are not read. This is a first line only: the OS sandbox under every command
 * is what holds for interpreter code (docs/shell-policy.md).
 */
import { isDescriptorPath } from "./descriptor-path.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";

interface Language {
  readonly opener: RegExp;
  /** The opener pattern names a module inside quotes (`require('open')`): test it on the code as written. */
  readonly openerQuoted?: boolean;
  readonly dynamic: RegExp;
  /** A call that starts a process; the text after it must begin with a literal. */
  readonly spawn: RegExp;
  /** Spawn calls are looked for only when the code mentions a process API at all. */
  readonly spawnGate?: RegExp;
}

const PY: Language = {
  opener: /\b(webbrowser|antigravity)\b/,
  dynamic:
    /__import__|\bimportlib\b|\b(exec|eval|compile|getattr|globals|vars|breakpoint)\s*\(|__builtins__|\bbuiltins\b|sys\.modules|\b(pickle|marshal|dill)\.loads?\b|\bctypes\b|\bcode\.(interact|InteractiveConsole)/,
  spawn:
    /\b(os\.(system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|subprocess\.[A-Za-z_]+|pty\.spawn|commands\.getoutput|Popen|check_output|check_call|getoutput|getstatusoutput|(?<=^|[;\s])(run|call|system|popen)(?=\s*\())\s*\(/g,
  spawnGate: /\b(subprocess|os|pty|commands|asyncio\.create_subprocess\w*)\b/,
};

const JS: Language = {
  openerQuoted: true,
  opener:
    /\brequire\s*\(\s*['"`](open|opn|opener|better-opn|open-cli)['"`]|\bfrom\s+['"`](open|opn|opener|better-opn)['"`]|\bimport\s*\(\s*['"`](open|opn|opener)['"`]/,
  dynamic:
    /\beval\s*\(|\bFunction\s*\(|\brequire\s*\(\s*[^'"`\s)]|\b(require|import)\s*\(\s*(['"`])[^'"`]*\2\s*[^)\s]|\brequire\s*\(\s*`[^`]*\$\{|\bimport\s*\(\s*[^'"`\s)]|\bvm\.|\bprocess\.binding|\bglobalThis\s*\[|\bmodule\.constructor|\bprocess\.dlopen|\bWorker\s*\(|\[\s*(['"`])[^'"`]*\3\s*\+/,
  spawn:
    /\b(exec|execSync|execFile|execFileSync|spawn|spawnSync|fork|Deno\.run|Deno\.Command|Bun\.spawn|Bun\.spawnSync|execa|execaSync|\$)\s*\(/g,
  spawnGate: /child_process|\bexeca\b|shelljs|\bzx\b|Bun\.spawn|Deno\.(run|Command)/,
};

const PERL: Language = {
  opener: /\b(Browser::Open|HTML::Display|open_browser)\b/,
  dynamic: /\beval\s*[^\s{]|\beval\s*\$|\brequire\s+\$|\bdo\s+\$|->can\s*\(|\bDynaLoader\b/,
  spawn: /(\b(system|exec|qx)\s*[({'"]?|`|\bopen\s*\([^,]*,\s*['"][|-]|\|\s*['"])/g,
};

const RUBY: Language = {
  // `require 'launchy'` names the gem in quotes.
  openerQuoted: true,
  opener: /\b(launchy|Launchy)\b/,
  dynamic:
    /\b(eval|instance_eval|class_eval|module_eval|instance_exec|send|public_send|__send__|const_get)\b|\brequire\s+[^'"\s]/,
  spawn: /(?:\b(system|exec|spawn|IO\.popen|Open3\.[a-z0-9_]+|Process\.spawn)|%x)\s*[({'"]?|`/g,
};

const R: Language = {
  opener: /\bbrowseURL\b|\butils::browseURL\b/,
  dynamic: /\b(eval|parse|source|do\.call|get)\s*\(/,
  spawn: /\b(system|system2|shell)\s*\(/g,
};

const AWK: Language = {
  opener: /(?!)/,
  dynamic: /(?!)/,
  spawn: /\bsystem\s*\(|\bprintf?\b[^;}|]*\|(?!\|)\s*|\|\s*getline\b/g,
};

const PHP: Language = {
  opener: /(?!)/,
  dynamic: /\b(eval|assert|create_function|call_user_func(_array)?)\s*\(|\$[A-Za-z_]+\s*\(/,
  spawn: /\b(system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(|`/g,
};

const LUA: Language = {
  opener: /(?!)/,
  dynamic: /\b(load|loadstring|dofile|loadfile|require)\s*\(\s*[^'"\s]/,
  spawn: /\b(os\.execute|io\.popen)\s*\(/g,
};

/** Python's own options: which take a value; -c and -m end the option list. */
const PY_VALUE = new Set(["W", "X"]);
const PY_FLAGS = new Set([..."bBdEhiIOPqsSuvVx?R3tU"]);
/** Standard-library and common runners whose arguments name another module or code to run. */
const PY_RUNNERS = new Set([
  "cprofile",
  "profile",
  "pdb",
  "trace",
  "timeit",
  "runpy",
  "code",
  "pyinstrument",
  "coverage",
  "scalene",
  "memray",
  "viztracer",
  "kernprof",
  "line_profiler",
  "py_spy",
  "ipython",
  "idlelib",
  "pip._internal",
]);
export const PYTHON = /^(python|pypy|py|ipython|python-dbg|pythonw)(\d+(\.\d+)*)?[wtmd]?$/;

export interface CodeSource {
  lang: Language;
  code?: string;
  module?: string;
  moduleArgs?: readonly (string | undefined)[];
  /** Where the code comes from when it is not in `code`. */
  from?: "stdin" | "open";
  /** `code` stands for a module or library loaded first (`node -r m`, `perl -Mm`, `ruby -rm`): its name as given. */
  preload?: string;
}

/** Is this code awk's (a language without `eval`, whose only ways to run programs are `system` and pipes)? */
export function isAwkSource(s: CodeSource): boolean {
  return s.lang === AWK;
}

function pythonSource(cmd: ResolvedCommand): CodeSource | { unknown: string } | undefined {
  const { argv } = cmd;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return { unknown: `an argument of ${cmd.name} is only known at run time` };
    if (a === "-") return { lang: PY, from: "stdin" };
    if (a === "--") {
      // The script follows (`python3 -- /dev/stdin`), or stdin is the program.
      if (i + 1 >= argv.length)
        return cmd.stdin.kind === "inherited" ? undefined : { lang: PY, from: "stdin" };
      const next = argv[i + 1];
      if (next === undefined) return { unknown: `the script of ${cmd.name} is only known at run time` };
      return next === "-" || isDescriptorPath(next) ? { lang: PY, from: "stdin" } : undefined;
    }
    if (!a.startsWith("-") || a === "-") return isDescriptorPath(a) ? { lang: PY, from: "stdin" } : undefined; // a script file
    if (a.startsWith("--")) {
      // Python prints its version or help and exits before running anything.
      if (/^--(version|help|help-env|help-xoptions|help-all)$/.test(a)) return undefined;
      if (a === "--check-hash-based-pycs") i++;
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const letter = a[j]!;
      const rest = a.slice(j + 1);
      if (letter === "V" || letter === "h" || letter === "?") return undefined;
      if (letter === "c" || letter === "m") {
        const value = rest !== "" ? rest : argv[i + 1];
        if (value === undefined) {
          return rest === "" && i + 1 < argv.length
            ? { unknown: `the -${letter} value of ${cmd.name} is only known at run time` }
            : cmd.openArgs
              ? { lang: PY, from: "open" }
              : undefined;
        }
        const after = argv.slice(rest !== "" ? i + 1 : i + 2);
        return letter === "c" ? { lang: PY, code: value } : { lang: PY, module: value, moduleArgs: after };
      }
      if (PY_VALUE.has(letter)) {
        // -W action::category imports the category's module: `-W ignore::antigravity.X`.
        const value = rest !== "" ? rest : argv[i + 1];
        if (letter === "W" && value !== undefined && PY.opener.test(value)) return { lang: PY, code: value };
        if (rest === "") i++;
        break;
      }
      if (!PY_FLAGS.has(letter)) return undefined; // python refuses an unknown option
    }
  }
  if (cmd.openArgs) return { lang: PY, from: "open" };
  // With the input it inherited (a terminal, or capgate's /dev/null) Python reads what the
  // operator types, not what the command line gives it; a pipe, a file or a here-document is read.
  return cmd.stdin.kind === "inherited" ? undefined : { lang: PY, from: "stdin" };
}

/** `-e code` style interpreters: the code options, the options that take a value, and the language. */
interface EvalSpec {
  lang: Language;
  code: readonly string[];
  /** Options whose value is a module loaded before the code (`perl -MBrowser::Open`, `ruby -rlaunchy`, `node -r open`). */
  modules?: readonly string[];
  value: readonly string[];
  /** The first operand is the program text (awk). */
  programOperand?: boolean;
  /** A subcommand that takes code (`deno eval`, `bun eval`? no). */
  evalSub?: string;
}

const EVAL: Readonly<Record<string, EvalSpec>> = {
  node: {
    lang: JS,
    code: ["-e", "--eval", "-p", "--print"],
    modules: ["-r", "--require", "--import", "--loader", "--experimental-loader"],
    value: ["--input-type", "-C", "--conditions", "--env-file"],
  },
  nodejs: {
    lang: JS,
    code: ["-e", "--eval", "-p", "--print"],
    value: ["-r", "--require", "--import", "--loader", "--input-type"],
  },
  bun: { lang: JS, code: ["-e", "--eval", "-p", "--print"], value: ["-r", "--preload", "--cwd"] },
  tsx: {
    lang: JS,
    code: ["-e", "--eval", "-p", "--print"],
    value: ["-r", "--require", "--import", "--tsconfig"],
  },
  "ts-node": {
    lang: JS,
    code: ["-e", "--eval", "-p", "--print"],
    value: ["-r", "--require", "-P", "--project", "-O", "--compiler-options", "-C", "--compiler"],
  },
  deno: { lang: JS, code: [], value: [], evalSub: "eval" },
  perl: { lang: PERL, code: ["-e", "-E"], modules: ["-M", "-m"], value: ["-I", "-x", "-i"] },
  ruby: { lang: RUBY, code: ["-e"], modules: ["-r"], value: ["-I", "-C", "-E", "-F"] },
  php: { lang: PHP, code: ["-r", "-B", "-R", "-E"], value: ["-c", "-d", "-z", "-t"] },
  lua: { lang: LUA, code: ["-e"], value: ["-l"] },
  luajit: { lang: LUA, code: ["-e"], value: ["-l", "-j", "-O"] },
  rscript: { lang: R, code: ["-e"], value: [] },
  r: { lang: R, code: ["-e"], value: [] },
  // `awk` is gawk, mawk or another awk: the options of each that take a value.
  awk: {
    lang: AWK,
    code: ["--source"],
    value: [
      "-f",
      "-v",
      "-F",
      "-E",
      "-i",
      "-l",
      "-W",
      "--file",
      "--assign",
      "--field-separator",
      "--exec",
      "--include",
      "--load",
    ],
    programOperand: true,
  },
  gawk: {
    lang: AWK,
    code: ["--source", "-e"],
    value: ["-f", "-v", "-F", "-E", "-i", "-l", "-W", "--file", "--assign", "--include", "--load", "--exec"],
    programOperand: true,
  },
  mawk: { lang: AWK, code: [], value: ["-f", "-v", "-F", "-W"], programOperand: true },
  nawk: { lang: AWK, code: [], value: ["-f", "-v", "-F"], programOperand: true },
  busybox_awk: { lang: AWK, code: [], value: ["-f", "-v", "-F"], programOperand: true },
};

function evalSource(cmd: ResolvedCommand, spec: EvalSpec): CodeSource[] | { unknown: string } {
  const { argv } = cmd;
  const out: CodeSource[] = [];
  let i = 1;
  if (spec.evalSub) {
    // `deno run /dev/stdin`, `deno run -`: the script of another subcommand from standard input.
    if (argv[1] !== spec.evalSub)
      return argv.slice(2).some((a) => a !== undefined && (a === "-" || isDescriptorPath(a)))
        ? [{ lang: spec.lang, from: "stdin" }]
        : [];
    const code = argv[argv.length - 1];
    if (code === undefined) return { unknown: `the code of ${cmd.name} eval is only known at run time` };
    return [{ lang: spec.lang, code }];
  }
  let sawProgram = false;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return { unknown: `an argument of ${cmd.name} is only known at run time` };
    if (a === "--") break;
    if (!a.startsWith("-") || a === "-") {
      if (spec.programOperand && !sawProgram && !out.some((s) => s.code !== undefined)) {
        out.push({ lang: spec.lang, code: a });
      }
      break;
    }
    const eq = a.indexOf("=");
    const name = eq === -1 ? a : a.slice(0, eq);
    if (spec.code.includes(name)) {
      const code = eq !== -1 ? a.slice(eq + 1) : argv[++i];
      if (code === undefined) return { unknown: `the ${name} code of ${cmd.name} is only known at run time` };
      out.push({ lang: spec.lang, code });
      sawProgram = true;
      continue;
    }
    if (spec.modules?.includes(name)) {
      const mod = eq !== -1 ? a.slice(eq + 1) : argv[++i];
      if (mod === undefined)
        return { unknown: `the ${name} module of ${cmd.name} is only known at run time` };
      out.push(preloadSource(spec.lang, mod));
      continue;
    }
    const program = spec.programOperand
      ? awkProgramFile(name, eq !== -1 ? a.slice(eq + 1) : argv[i + 1], argv[i + 2])
      : undefined;
    if (program) {
      if (program.following) i++;
      sawProgram = true;
      const known = programFile(program.file, i + 1 < argv.length);
      if (known === "unknown")
        return { unknown: `the ${name} program file of ${cmd.name} is only known at run time` };
      if (known === "stdin") out.push({ lang: spec.lang, from: "stdin" });
    }
    if (!a.startsWith("--") && a.length > 2) {
      // A short cluster (`perl -lne CODE`, `node -pe CODE`, `ruby -rlaunchy`), letter by letter.
      let consumed = false;
      let j = 1;
      for (; j < a.length; j++) {
        const letter = `-${a[j]}`;
        const rest = a.slice(j + 1);
        if (spec.code.includes(letter) || spec.modules?.includes(letter)) {
          const value =
            rest !== "" && !/^[a-z]+$/.test(rest)
              ? rest
              : rest !== "" && !rest.split("").every((l) => spec.code.includes(`-${l}`))
                ? rest
                : argv[++i];
          if (value === undefined)
            return { unknown: `the ${letter} value of ${cmd.name} is only known at run time` };
          if (spec.code.includes(letter)) {
            out.push({ lang: spec.lang, code: value });
            sawProgram = true;
          } else out.push(preloadSource(spec.lang, value));
          consumed = true;
          break;
        }
        if (spec.value.includes(letter)) {
          // awk's program file in a cluster (`-f-`, `-f/dev/stdin`, `-Wexec /dev/stdin`).
          const program = spec.programOperand
            ? awkProgramFile(letter, rest !== "" ? rest : argv[i + 1], argv[rest !== "" ? i + 1 : i + 2])
            : undefined;
          if (program) {
            if (program.following) i++;
            sawProgram = true;
            const known = programFile(program.file, true);
            if (known === "unknown")
              return { unknown: `the ${letter} program file of ${cmd.name} is only known at run time` };
            if (known === "stdin") out.push({ lang: spec.lang, from: "stdin" });
          }
          if (rest === "") i++;
          consumed = true;
          break;
        }
      }
      if (consumed || j >= a.length) continue;
    }
    if (spec.value.includes(name) && eq === -1) i++;
  }
  if (argv[i] === "--") {
    // Options end; for awk the next word is the program text, for the others the script.
    i++;
    if (spec.programOperand && !sawProgram && !out.some((s) => s.code !== undefined)) {
      if (i < argv.length && argv[i] === undefined)
        return { unknown: `the program of ${cmd.name} is only known at run time` };
      if (argv[i] !== undefined) out.push({ lang: spec.lang, code: argv[i]! });
    }
  }
  // A preload (`-r mod`, `-Mstrict`) does not stand for the script: the script still runs.
  // `bun run SCRIPT`: the script follows the subcommand.
  if (cmd.name === "bun" && argv[i] === "run") i++;
  if (!sawProgram && !out.some((s) => s.code !== undefined && s.preload === undefined)) {
    const script = argv[i];
    // An option this table does not know may have taken the word before the script
    // (`node --title x /dev/stdin`): the word after it is checked too.
    const previous = argv[i - 1];
    const next = argv[i + 1];
    if (
      !spec.programOperand &&
      previous?.startsWith("--") === true &&
      !previous.includes("=") &&
      next !== undefined &&
      (next === "-" || isDescriptorPath(next))
    )
      out.push({ lang: spec.lang, from: "stdin" });
    if (script === undefined && cmd.openArgs) out.push({ lang: spec.lang, from: "open" });
    else if (
      (script === undefined || script === "-") &&
      cmd.stdin.kind !== "inherited" &&
      !spec.programOperand
    ) {
      out.push({ lang: spec.lang, from: "stdin" });
    } else if (script !== undefined && isDescriptorPath(script)) out.push({ lang: spec.lang, from: "stdin" });
  }
  return out;
}

/** awk options whose value is a file of program text. */
const AWK_PROGRAM_FILES = new Set(["-f", "--file", "-E", "--exec", "-i", "--include"]);
/** mawk's `-W exec FILE` (any prefix of `exec`, the file after `=` or in the next word). */
const MAWK_EXEC = /^e(?:x(?:e(?:c)?)?)?(?:=(.*))?$/s;

/**
 * The program file awk's option `option` names, given the option's value and the word after
 * that (mawk's `-W exec FILE` takes it: `following`); undefined when the option names none
 * (`-v`, `-W version`).
 */
function awkProgramFile(
  option: string,
  value: string | undefined,
  after: string | undefined,
): { file: string | undefined; following: boolean } | undefined {
  if (AWK_PROGRAM_FILES.has(option)) return { file: value, following: false };
  if (option !== "-W") return undefined;
  // A value only run time knows (or none) may be `exec`: the program file is not known.
  if (value === undefined) return { file: undefined, following: false };
  const exec = MAWK_EXEC.exec(value);
  if (!exec) return undefined;
  return exec[1] !== undefined ? { file: exec[1], following: false } : { file: after, following: true };
}

/**
 * A preload (`node -r X`, `perl -MX`, `ruby -rX`): a module's code, or — read from standard
 * input (`-r /dev/stdin`, `-r /proc/self/fd/0`) — code from wherever stdin comes from.
 */
function preloadSource(lang: Language, mod: string): CodeSource {
  return mod === "-" || isDescriptorPath(mod)
    ? { lang, from: "stdin" }
    : { lang, code: moduleCode(lang, mod), preload: mod };
}

/** A program file: read from standard input, only known at run time, or a file on disk. */
function programFile(file: string | undefined, present: boolean): "stdin" | "unknown" | "file" {
  if (file === undefined) return present ? "unknown" : "file";
  return file === "-" || isDescriptorPath(file) ? "stdin" : "file";
}

function moduleCode(lang: Language, mod: string): string {
  const bare = mod.replace(/[=\s].*$/s, "").replace(/['"`]/g, "");
  return lang === JS ? `require('${bare}')` : lang === PERL ? `use ${bare};` : `require '${bare}'`;
}

/** The code an interpreter invocation runs, as far as the command line shows it. */
export function codeSources(cmd: ResolvedCommand): CodeSource[] | { unknown: string } {
  if (PYTHON.test(cmd.name)) {
    const s = pythonSource(cmd);
    if (!s) return [];
    return "unknown" in s ? s : [s];
  }
  const spec = evalSpec(cmd.name);
  return spec ? evalSource(cmd, spec) : [];
}

/**
 * The interpreter table entry for a command name, also under a versioned name
 * (`perl5.36.0`, `node20`, `lua5.4`, `ruby3.1`, `php8.2` are the same programs).
 */
function evalSpec(name: string): EvalSpec | undefined {
  if (Object.hasOwn(EVAL, name)) return EVAL[name];
  const base = /^([a-z]+?)-?\d+(\.\d+)*$/.exec(name)?.[1];
  return base !== undefined && Object.hasOwn(EVAL, base) ? EVAL[base] : undefined;
}

/** Is `name` an interpreter whose options this module reads (python*, node, perl, ruby, awk …)? */
export function isInterpreterName(name: string): boolean {
  return PYTHON.test(name) || evalSpec(name) !== undefined || /^(powershell|pwsh|powershell_ise)$/.test(name);
}

/** Does this code or module name an opener? (Rule 1; used by the gui rules.) */
export function sourceOpensBrowser(cmd: ResolvedCommand, s: CodeSource): boolean {
  if (s.module !== undefined) {
    const mod = s.module.toLowerCase();
    if (s.lang.opener.test(mod)) return true;
    if (PY_RUNNERS.has(mod) || PY_RUNNERS.has(mod.split(".")[0]!)) {
      return (s.moduleArgs ?? []).some(
        (a) => a === undefined || s.lang.opener.test(a) || /^-m(webbrowser|antigravity)$/.test(a),
      );
    }
    return false;
  }
  const code = s.code ?? (s.from === "stdin" && cmd.stdin.kind === "text" ? cmd.stdin.text : undefined);
  if (code === undefined) return false;
  // A name inside a string literal is data (`print("webbrowser")`), not an import or a call —
  // unless the code starts processes, where a literal can become an argv word
  // (`subprocess.run(["python3", "-m", "webbrowser", u])`), or the language loads modules by a
  // quoted name (its opener pattern then holds the quote: node's `require('open')`).
  if (s.lang.openerQuoted || spawnsProcesses(s.lang, code)) return s.lang.opener.test(code);
  return s.lang.opener.test(withoutStringLiterals(code));
}

/** Does the code reach a process API (the same test rule 3 uses)? */
function spawnsProcesses(lang: Language, code: string): boolean {
  if (lang.spawnGate !== undefined) return lang.spawnGate.test(code);
  lang.spawn.lastIndex = 0;
  const found = lang.spawn.test(code);
  lang.spawn.lastIndex = 0;
  return found;
}

/**
 * The code with the body of every string literal ('…', "…", `…`, escapes skipped as in
 * `stringLiterals`) blanked, so a pattern tested on it sees only what is not quoted.
 */
function withoutStringLiterals(code: string): string {
  let out = "";
  for (let i = 0; i < code.length; i++) {
    const q = code[i]!;
    out += q;
    if (q !== "'" && q !== '"' && q !== "`") continue;
    let j = i + 1;
    for (; j < code.length && code[j] !== q; j++) {
      if (code[j] === "\\") j++;
      out += " ";
    }
    if (j < code.length) out += q;
    i = j;
  }
  return out;
}

/**
 * String literals in code: '…', "…", `…` (escapes kept simple: \x skips x), each as written
 * and — so that a command line built from literals is checked as the program would see it —
 * also: adjacent literals joined where the language concatenates them implicitly (Python,
 * Ruby: `'xdg-' 'open'`), a Python slice with literal bounds applied (`'nepo-gdx'[::-1]`,
 * `'xxdxgx'[1::2]`), and — when the code calls a reversal at all (`reversed(…)`,
 * `.reverse`, `strrev`, R's `rev`: each has "rev" in its name) — every literal reversed.
 * Only opener and configured rules count for such strings.
 * `computedSlice` is set when a literal is subscripted by anything but integer literals.
 */
function stringLiterals(code: string, lang: Language): { texts: string[]; computedSlice?: string } {
  const texts: string[] = [];
  let computedSlice: string | undefined;
  const implicit = lang === PY || lang === RUBY;
  const reverses = /rev/i.test(code);
  const both = (text: string) => (reverses ? [text, [...text].reverse().join("")] : [text]);
  let joined: string | undefined;
  for (let i = 0; i < code.length; i++) {
    const q = code[i]!;
    if (q !== "'" && q !== '"' && q !== "`") continue;
    let j = i + 1;
    let text = "";
    for (; j < code.length && code[j] !== q; j++) {
      if (code[j] === "\\") j++;
      text += code[j] ?? "";
    }
    texts.push(...both(text));
    // `"\x78dg-open"`, `"\u0078dg-open"`: the program sees the decoded string.
    const decoded = decodeStringEscapes(code.slice(i + 1, j));
    if (decoded !== text) texts.push(...both(decoded));
    const rest = code.slice(j + 1);
    joined = joined === undefined ? decoded : joined + decoded;
    // `'a' 'b'` (also `'a' r'b'`, across lines inside brackets) is one string to Python and Ruby.
    const next = implicit ? /^\s*(?:[rRbBuU]{0,2})(?=['"])/.exec(rest) : null;
    if (next) {
      i = j + next[0].length;
      continue;
    }
    if (joined !== text) texts.push(...both(joined));
    if (lang === PY) {
      const sub = /^\s*\[([^\]]*)\]/.exec(rest);
      if (sub) {
        const sliced = pythonSlice(joined, sub[1]!);
        if (sliced === undefined) computedSlice ??= `${clip(joined)}[${sub[1]}]`;
        else texts.push(sliced);
      }
    }
    joined = undefined;
    i = j;
  }
  return computedSlice === undefined ? { texts } : { texts, computedSlice };
}

const STRING_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  e: "\x1b",
  "0": "\0",
};

/**
 * The escapes the string literals of Python, JavaScript, Perl, Ruby and PHP share: `\xHH`,
 * `\x{H…}`, `\uHHHH`, `\u{H…}`, `\UHHHHHHHH`, octal `\NNN`, `\n`-style letters; any
 * other `\c` is `c`. A superset of each language — the result is only ever checked for
 * openers, so decoding what a language would leave alone can only deny more.
 */
export function decodeStringEscapes(body: string): string {
  return body.replace(
    /\\(x\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{1,2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{1,3})|([\s\S]))/g,
    (_m, _all, xb, x, ub, u, U, oct, other: string | undefined) => {
      const hex = xb ?? x ?? ub ?? u ?? U;
      if (hex !== undefined) {
        const code = Number.parseInt(hex, 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : "";
      }
      if (oct !== undefined) return String.fromCharCode(Number.parseInt(oct, 8) & 0xff);
      return other === undefined ? "" : (STRING_ESCAPES[other] ?? other);
    },
  );
}

/** `text[spec]` as Python computes it, for integer-literal indexes and slices; undefined for anything else. */
function pythonSlice(text: string, spec: string): string | undefined {
  const chars = [...text];
  const n = chars.length;
  const int = (v: string): number | null | undefined =>
    v.trim() === "" ? null : /^\s*[-+]?\d+\s*$/.test(v) ? Number(v) : undefined;
  const parts = spec.split(":");
  if (parts.length === 1) {
    const k = int(parts[0]!);
    if (k === undefined || k === null) return undefined;
    const at = k < 0 ? n + k : k;
    return at >= 0 && at < n ? chars[at] : "";
  }
  if (parts.length > 3) return undefined;
  const [a, b, c] = parts.map(int);
  if (a === undefined || b === undefined || c === undefined) return undefined;
  const step = c ?? 1;
  if (step === 0) return undefined;
  const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);
  const norm = (v: number) => (v < 0 ? v + n : v);
  let out = "";
  if (step > 0) {
    const start = a === null ? 0 : clamp(norm(a), 0, n);
    const stop = b === null ? n : clamp(norm(b), 0, n);
    for (let k = start; k < stop; k += step) out += chars[k];
  } else {
    const start = a === null ? n - 1 : clamp(norm(a), -1, n - 1);
    const stop = b === null ? -1 : clamp(norm(b), -1, n - 1);
    for (let k = start; k > stop; k += step) out += chars[k];
  }
  return out;
}

/** PowerShell's text: every argument, with -EncodedCommand (any unique prefix: -e, -en, -enc…, -ec) decoded. */
export function powershellText(args: readonly (string | undefined)[]): string | undefined {
  const parts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === undefined) return undefined;
    if (
      /^[-/](e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)$/i.test(
        a,
      )
    ) {
      const b64 = args[++i];
      if (b64 === undefined) return undefined;
      const decoded = Buffer.from(b64, "base64").toString("utf16le");
      parts.push(decoded);
      continue;
    }
    parts.push(a);
  }
  return parts.join(" ");
}

/** PowerShell that builds code or commands at run time (`iex`, `& ('sta'+'rt')`, `[char]`…). */
const PS_DYNAMIC =
  /\b(iex|invoke-expression|invoke-command|icm|start-job|new-object\s+-com\w*|add-type)\b|\[scriptblock\]|\[char\]|frombase64string|-join\b|[&.]\s*[($]|['"]\s*\+\s*['"$]|\$env:comspec|-encodedcommand|\$executioncontext/i;

/** Rules 2–4 as continuations: denials, and literal command lines to check. */
export function interpreterContinuations(cmd: ResolvedCommand): Continuation[] {
  if (cmd.name === "powershell" || cmd.name === "pwsh" || cmd.name === "powershell_ise") {
    const text = powershellText(cmd.argv.slice(1));
    if (text === undefined)
      return [{ kind: "unresolvable", reason: `an argument of ${cmd.name} is only known at run time` }];
    const dyn = PS_DYNAMIC.exec(text);
    // PowerShell runs external programs by name (`pwsh -c 'xdg-open u'`): the text is checked as a command line too.
    const external: Continuation[] = [text, ...cmd.argv.slice(1)]
      .filter((t): t is string => t !== undefined && !t.startsWith("-"))
      .map((script) => ({ kind: "script", script, via: cmd.name, soft: true }));
    return dyn
      ? [
          {
            kind: "unresolvable",
            reason: `the ${cmd.name} code builds code or a command at run time (\`${dyn[0]}\`), which cannot be checked`,
          },
        ]
      : external;
  }
  const sources = codeSources(cmd);
  if (!Array.isArray(sources)) return [{ kind: "unresolvable", reason: sources.unknown }];
  const out: Continuation[] = [];
  for (const s of sources) {
    if (s.from === "open") {
      out.push({
        kind: "unresolvable",
        reason: `the code ${cmd.name} runs would come from data read at run time`,
      });
      continue;
    }
    let code = s.code;
    if (s.module !== undefined) continue;
    if (code === undefined && s.from === "stdin") {
      if (cmd.stdin.kind !== "text") {
        out.push({
          kind: "unresolvable",
          reason: `${cmd.name} would read its program from standard input (${cmd.stdin.kind === "pipe" ? "a pipe" : cmd.stdin.kind === "file" ? "a file" : "not a literal here-document"}), which cannot be checked; pass the code literally`,
        });
        continue;
      }
      code = cmd.stdin.text;
    }
    if (code === undefined) continue;
    const dyn = s.lang.dynamic.exec(code);
    if (dyn) {
      out.push({
        kind: "unresolvable",
        reason: `the ${cmd.name} code evaluates code or imports a module by a computed name (\`${dyn[0].trim()}\`), which cannot be checked`,
      });
      continue;
    }
    const gated = s.lang.spawnGate === undefined || s.lang.spawnGate.test(code);
    // Code that reaches a process API at all (`child_process`, `subprocess`): its string
    // literals are checked as command lines even when the call is renamed (`{execSync: e}`).
    let spawns = s.lang.spawnGate !== undefined && gated;
    // `import subprocess as s; s.run(x)`: the alias's calls are spawn calls too.
    const aliases =
      s.lang === PY
        ? [...code.matchAll(/\bimport\s+(?:subprocess|os|pty)\s+as\s+(\w+)/g)].map((m) => m[1]!)
        : [];
    const spawnRe =
      aliases.length > 0
        ? new RegExp(`${s.lang.spawn.source}|\\b(?:${aliases.join("|")})\\.\\w+\\s*\\(`, "g")
        : s.lang.spawn;
    for (const m of gated ? code.matchAll(spawnRe) : []) {
      spawns = true;
      const at = m.index ?? 0;
      const after = code.slice(at + m[0].length);
      if (!literalSpawn(s.lang, m[0], after, code.slice(0, at))) {
        out.push({
          kind: "unresolvable",
          reason: `the ${cmd.name} code starts a process whose command is computed at run time (\`${clip(m[0] + after)}\`); name the program literally`,
        });
        break;
      }
    }
    if (spawns) {
      const literals = stringLiterals(code, s.lang);
      if (literals.computedSlice !== undefined) {
        out.push({
          kind: "unresolvable",
          reason: `the ${cmd.name} code slices a string by a computed index (\`${literals.computedSlice}\`), so the command it could build cannot be checked`,
        });
      }
      for (const found of literals.texts) {
        // Perl/awk pipe opens: `"cmd |"`, `"| cmd"`, `"-|"`.
        const literal = found.replace(/^\s*-?\|-?\s*|\s*-?\|-?\s*$/g, "");
        if (literal.trim() !== "")
          out.push({ kind: "script", script: literal, via: `${cmd.name} code`, soft: true });
      }
    }
  }
  return out;
}

/**
 * Is the command a spawn call starts a plain literal? `system("ls")`, `run(["ls", x])`,
 * `"ls" | getline` are; `system(cmd)`, `system("xdg-" + x)`, `f"…"`, `"%s" % x`, template
 * literals and interpolating strings (`"…$x"` in Perl/PHP, `#{}` in Ruby) are not.
 */
function literalSpawn(lang: Language, call: string, after: string, before: string): boolean {
  if (/\|\s*getline\b$/.test(call)) return /(["'])[^"']*\1\s*\|\s*getline$/.test(before + call);
  let quote = /['"`]$/.exec(call)?.[0];
  let rest = after;
  if (!quote) {
    const open = /^\s*[[(]?\s*(['"`])/.exec(after);
    if (!open) return false;
    quote = open[1]!;
    rest = after.slice(open[0].length);
  }
  let k = 0;
  let body = "";
  for (; k < rest.length && rest[k] !== quote; k++) {
    if (rest[k] === "\\") k++;
    body += rest[k] ?? "";
  }
  if (quote === "`" && body.includes("${")) return false;
  if (lang === RUBY && quote !== "'" && body.includes("#{")) return false;
  if ((lang === PERL || lang === PHP) && quote !== "'" && /[$@]/.test(body)) return false;
  return wordsKept(rest.slice(k + 1));
}

/**
 * Does what follows a literal leave its words as written? Anything done to it makes the
 * command computed (`+`, `%`, `*`, a subscript `[::-1]`, Perl's `.`, a method call) —
 * except a chain of methods that keep the words: case changes (names compare lower-cased),
 * trimming blanks, splitting at blanks. A separator other than blanks would make words the
 * policy never saw (`'xdg-openAx'.split('A')`).
 */
function wordsKept(after: string): boolean {
  let tail = after.trimStart();
  for (;;) {
    if (/^(\+|%|\*|\[)/.test(tail)) return false;
    if (!tail.startsWith(".")) return true;
    const method = /^\.\s*([A-Za-z_]\w*)\s*(\(\s*(?:(['"])[ \t]+\3\s*)?\)|\()?/.exec(tail);
    if (method === null || !WORD_KEEPING_METHODS.has(method[1]!) || method[2] === "(") return false;
    if (method[3] !== undefined && method[1] !== "split") return false;
    tail = tail.slice(method[0].length).trimStart();
  }
}

/** Methods on a string literal that leave its words as the policy reads them (names compare lower-cased). */
const WORD_KEEPING_METHODS = new Set([
  "split",
  "strip",
  "lstrip",
  "rstrip",
  "trim",
  "lower",
  "upper",
  "casefold",
  "toLowerCase",
  "toUpperCase",
  "downcase",
  "upcase",
  "shellsplit",
]);

function clip(text: string): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > 50 ? `${one.slice(0, 47)}...` : one;
}
