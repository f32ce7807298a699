/**
 * Bash indirection: ways a command line makes bash (or a program) run code that is not a
 * command word the parser can see — prompt strings and hooks (PS4 with `set -x`,
 * PROMPT_COMMAND), alias and command tables (BASH_ALIASES, BASH_CMDS, `hash -p`, `alias`),
 * exported functions (`BASH_FUNC_x%%`), startup files (BASH_ENV, ENV), loadable builtins
 * (`enable -f`), callbacks (`mapfile -C`, `complete -C`, `bind -x`), array subscripts that
 * bash evaluates as arithmetic (`printf -v 'a[$(cmd)]'`), and variables whose value a
 * program runs as a command (BROWSER, EDITOR, PAGER, LESSOPEN, GIT_SSH_COMMAND…).
 */

import { SUBSCRIPT_CODE } from "../parse/shell-arithmetic.js";
import type { Assignment, ShellWord } from "../parse/shell-words.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";

/** Variables whose value bash itself runs or reads as code. */
const CODE_VARIABLES = new Set([
  "PS0",
  "PS1",
  "PS2",
  "PS3",
  "PS4",
  "PROMPT_COMMAND",
  "BASH_ENV",
  "ENV",
  "BASH_ALIASES",
  "BASH_CMDS",
  "SHELLOPTS",
  "BASHOPTS",
  "BASH_LOADABLES_PATH",
  "BASH_COMPAT",
  "LD_PRELOAD",
  "LD_AUDIT",
  "LD_LIBRARY_PATH",
  "GCONV_PATH",
  "NODE_OPTIONS",
  "PERL5OPT",
  "RUBYOPT",
  "PYTHONSTARTUP",
  "PYTHONINSPECT",
  "PYTHONBREAKPOINT",
  "PYTHONWARNINGS",
  "POSIXLY_CORRECT",
]);

/**
 * Variables whose value a tool reads as code or as a file of code, denied like the ones
 * above: less's key-binding files (a lesskey file's `#env` section sets LESSOPEN and the
 * like) and its editor template, groff's options and program lookup as man runs it.
 */
const TOOL_CODE_VARIABLES: Readonly<Record<string, string>> = {
  LESSKEYIN: "less reads key bindings and an #env section (LESSOPEN, …) from that file",
  LESSKEY: "less reads key bindings and an #env section (LESSOPEN, …) from that file",
  LESSKEYIN_SYSTEM: "less reads key bindings and an #env section (LESSOPEN, …) from that file",
  LESSKEY_SYSTEM: "less reads key bindings and an #env section (LESSOPEN, …) from that file",
  LESSKEY_CONTENT: "less reads it as lesskey source, whose #env section sets LESSOPEN and the like",
  LESSEDIT: "less runs it (a prompt-style template) as the editor command",
  MANROFFOPT: "man passes it to groff, whose options (-U, -m, -M, -P) let a page or macro file run commands",
  GROFF_COMMAND_PREFIX: "groff prefixes the names of the programs it runs (troff, preprocessors) with it",
  GROFF_BIN_PATH: "groff looks up the programs it runs (troff, preprocessors) there",
  PERL5DB: "perl -d runs it as the debugger's code (`BEGIN { … }`)",
  PERLDB_OPTS:
    "perl's debugger reads its options there, among them commands to run (`NonStop`, `TTY`, `RemotePort`) and files of commands",
};

/** Variables that say where shells read their startup files; assigning one makes an interactive or login shell run other code. */
const STARTUP_DIR_VARIABLES = new Set(["HOME", "ZDOTDIR", "XDG_CONFIG_HOME"]);

/** Does this assignment move the shells' startup files (`HOME=.`, `ZDOTDIR=…`)? A name only known at run time might. */
export function redirectsStartup(a: Assignment): boolean {
  return a.name === undefined || STARTUP_DIR_VARIABLES.has(a.name);
}

/** Variables whose value some program runs as a command line (checked as one). */
const PROGRAM_VARIABLES = new Set([
  "BROWSER",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "GIT_PAGER",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_ASKPASS",
  "GIT_EXTERNAL_DIFF",
  "GIT_PROXY_COMMAND",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "SUDO_EDITOR",
  "LESSOPEN",
  "LESSCLOSE",
  "SYSTEMD_PAGER",
  "SYSTEMD_EDITOR",
  "FCEDIT",
  "TERMINAL",
  "SHELL",
  "CVS_RSH",
  "RSYNC_RSH",
  "MAILER",
  "XDG_OPEN",
  "DIFFTOOL",
  "BAT_PAGER",
  "DELTA_PAGER",
  "GH_PAGER",
  "GH_BROWSER",
  "GH_EDITOR",
  "GLAB_PAGER",
  "KUBE_EDITOR",
  "PSQL_PAGER",
  "PSQL_EDITOR",
  "AWS_PAGER",
  "SVN_EDITOR",
  "CVSEDITOR",
  "HGEDITOR",
  "RSYNC_CONNECT_PROG",
  "TS_ONFINISH",
  "TS_ENV",
  "LESSGLOBALTAGS",
]);

/** Why assigning `name` cannot be checked, or undefined when it is an ordinary variable. */
export function codeVariable(name: string): string | undefined {
  if (name.startsWith("BASH_FUNC_") || name.includes("%%")) {
    return `\`${name}\` defines an exported function whose body bash runs when the name is called`;
  }
  if (CODE_VARIABLES.has(name)) {
    return `\`${name}\` is read by bash or the dynamic loader as code (prompt hooks, startup files, alias and command tables, preloads), which cannot be checked`;
  }
  if (Object.hasOwn(TOOL_CODE_VARIABLES, name)) {
    return `\`${name}\`: ${TOOL_CODE_VARIABLES[name]}, which cannot be checked`;
  }
  return undefined;
}

/**
 * `LESS` holds options less reads before its arguments: `+cmd` start-up commands (`+!cmd`
 * runs a shell command, `+|` pipes to one, `+v` starts the editor) and `-k`/`--lesskey-*`
 * files are code. Plain display options (`-R`, `-FRX`, `--mouse`) are fine.
 */
function lessOptions(value: string): string | undefined {
  if (/[+!|`$]/.test(value)) {
    return "`LESS` holds a less start-up command (`+…`) or shell syntax, which can run commands";
  }
  for (const token of value.trim().split(/\s+/)) {
    if (token.startsWith("--")) {
      const name = token.slice(2).replace(/=.*$/s, "").toLowerCase();
      if (name.length > 0 && (name.startsWith("less") || "lesskey-file".startsWith(name)))
        return "`LESS` names a lesskey file, whose #env section can set LESSOPEN and the like";
    } else if (/k/.test(token)) {
      return "`LESS` holds -k (a lesskey file, whose #env section can set LESSOPEN and the like)";
    }
  }
  return undefined;
}

export function isProgramVariable(name: string): boolean {
  // less 661+: LESS_OSC8_<scheme> is the command that opens an OSC 8 link of that scheme.
  return PROGRAM_VARIABLES.has(name) || /^LESS_OSC8_/.test(name);
}

/**
 * What assigning `name` a value only run time knows would make run (nothing for an ordinary
 * variable): the checks of `assignmentContinuations` with the value unknown.
 */
function runTimeAssignment(name: string, dynamic: string, via: string): Continuation[] {
  const value: ShellWord = { raw: `<${dynamic}>`, value: undefined, splits: false, glob: false, dynamic };
  return assignmentContinuations({ name, value, text: `${name}=<${dynamic}>` }, via);
}

/**
 * Why a nameref `ref` to `target` cannot be checked, or undefined. Every later assignment
 * through the reference sets the target: one the policy checks by name (a code variable, a
 * program's variable, a startup directory) could then be set under another name.
 */
function namerefTarget(builtin: string, ref: string, target: string): string | undefined {
  const bare = target.replace(/\[.*$/s, "");
  const written = `${builtin} -n ${ref}=${target}`;
  const why = codeVariable(bare);
  if (why) return `${written}: ${why}`;
  if (STARTUP_DIR_VARIABLES.has(bare) || runTimeAssignment(bare, "a nameref", `\`${written}\``).length > 0)
    return `${written}: assignments to ${ref} set \`${bare}\`, whose value bash or a program acts on; set ${bare} by name`;
  return undefined;
}

/** What an assignment makes run: denials for code variables, the value as a command line for program variables. */
export function assignmentContinuations(a: Assignment, via: string): Continuation[] {
  if (a.name === undefined) {
    return [
      {
        kind: "unresolvable",
        reason: `${via}: the variable name in \`${a.text}\` is only known at run time`,
      },
    ];
  }
  const code = codeVariable(a.name);
  if (code) return [{ kind: "unresolvable", reason: `${via}: ${code}` }];
  if (a.value?.value !== undefined && SUBSCRIPT_CODE.test(a.value.value)) {
    // `x='a[$(cmd)]'; echo $((x))`: arithmetic on the variable evaluates the subscript and runs cmd.
    return [
      {
        kind: "unresolvable",
        reason: `${via}: the value holds an array subscript with a command substitution, which bash runs when the variable is used in arithmetic`,
      },
    ];
  }
  if (a.name === "LESS" && a.value) {
    if (a.value.value === undefined)
      return [{ kind: "unresolvable", reason: `${via}: \`LESS\` holds less options only known at run time` }];
    const why = lessOptions(a.value.value);
    if (why) return [{ kind: "unresolvable", reason: `${via}: ${why}` }];
  }
  if (a.name === "MANOPT" && a.value) {
    // man reads MANOPT as options before its own: judge them as `man OPTIONS`.
    if (a.value.value === undefined)
      return [
        { kind: "unresolvable", reason: `${via}: \`MANOPT\` holds man options only known at run time` },
      ];
    return [{ kind: "script", script: `man ${a.value.value}`, via: "the man options in MANOPT" }];
  }
  if (a.name === "GIT_CONFIG_PARAMETERS" && a.value) return gitConfigParameters(a.value);
  if (/^GIT_CONFIG_VALUE_\d+$/.test(a.name) && a.value?.value !== undefined) {
    // A `!` value is an alias run by the shell (when its GIT_CONFIG_KEY_n is alias.*): parse it as code.
    const bang = /^\s*!(.*)$/s.exec(a.value.value);
    if (bang) return [{ kind: "script", script: bang[1]!, via: `the git alias in ${a.name}` }];
  }
  if ((isProgramVariable(a.name) || /^GIT_CONFIG_VALUE_\d+$/.test(a.name)) && a.value) {
    return programValue(a.name, a.value);
  }
  return [];
}

/**
 * GIT_CONFIG_PARAMETERS is what `git -c` passes to child gits: `'key=value'` or
 * `'key'='value'` items, single-quoted the way git quotes them (`'\''` for a quote). Each
 * value is checked like a `-c` value: a `!` alias as shell code, anything else as a command line.
 */
function gitConfigParameters(value: ShellWord): Continuation[] {
  if (value.value === undefined) return programValue("GIT_CONFIG_PARAMETERS", value);
  const out: Continuation[] = [];
  const unquote = (t: string) => t.replace(/'\\''/g, "'");
  const item = /'((?:[^']|'\\'')*)'(?:='((?:[^']|'\\'')*)')?/g;
  let rest = value.value;
  for (const m of value.value.matchAll(item)) {
    rest = rest.replace(m[0], "");
    const first = unquote(m[1]!);
    const v = m[2] !== undefined ? unquote(m[2]) : first.slice(first.indexOf("=") + 1);
    const bang = /^\s*!(.*)$/s.exec(v);
    if (bang) out.push({ kind: "script", script: bang[1]!, via: "a git alias in GIT_CONFIG_PARAMETERS" });
    else if (v.trim() !== "")
      out.push({ kind: "script", script: v, via: "GIT_CONFIG_PARAMETERS", soft: true });
  }
  if (rest.trim() !== "") {
    return [
      {
        kind: "unresolvable",
        reason:
          "GIT_CONFIG_PARAMETERS is not a list of git-quoted 'key=value' items, so what git reads from it cannot be checked",
      },
    ];
  }
  return out;
}

/** Does this assignment define a git alias through the environment (so any `git x` may be another subcommand)? */
export function definesGitEnvAlias(a: Assignment): boolean {
  if (a.name === undefined || !/^GIT_CONFIG_(KEY_\d+|PARAMETERS)$/.test(a.name)) return false;
  return a.value?.value === undefined || /alias\./i.test(a.value.value);
}

function programValue(name: string, value: ShellWord): Continuation[] {
  if (value.value === undefined) {
    return [
      {
        kind: "unresolvable",
        reason: `\`${name}\` names a program that will be run, and its value \`${value.raw}\` is only known at run time`,
      },
    ];
  }
  // BROWSER is a colon-separated list; LESSOPEN starts with `|`; both use %s for the argument.
  const parts = name === "BROWSER" ? value.value.split(":") : [value.value];
  return parts
    .map((p) => p.replace(/^\s*\|\|?-?/, "").replace(/%[a-zA-Z]/g, "x"))
    .filter((p) => p.trim() !== "")
    .map((script) => ({ kind: "script" as const, script, via: `the program in ${name}`, soft: true }));
}

function deny(reason: string): Continuation[] {
  return [{ kind: "unresolvable", reason }];
}

/** `NAME=(…)`, `NAME+=(…)`, `NAME[sub]=(…)`: an argument a declaration reads as a compound assignment. */
const COMPOUND_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=\(/s;

/** Options of the name-taking builtins that take a value (the value is not a name). */
const BUILTIN_VALUE_OPTIONS: Readonly<Record<string, string>> = {
  read: "dinNptu",
  mapfile: "dnOsu",
  readarray: "dnOsu",
  printf: "",
  declare: "",
  typeset: "",
  local: "",
  export: "",
  readonly: "",
  getopts: "",
  wait: "",
  unset: "",
};

/**
 * Builtins that take variable names, callbacks or definitions: `declare`/`export`/`local`/
 * `readonly`/`typeset`, `read`, `printf -v`, `mapfile`/`readarray`, `getopts`, `wait -p`,
 * `test -v`, `let`, `hash`, `enable`, `complete`/`compgen`, `bind`, `alias`, `fc`.
 */
export function builtinContinuations(cmd: ResolvedCommand): Continuation[] {
  const { name, words } = cmd;
  const args = words.slice(1);
  const values = args.map((w) => w.value);
  switch (name) {
    case "alias":
      if (args.some((w) => w.value === undefined || w.value.includes("="))) {
        return deny(
          "`alias` definitions change how later lines are read (alias text is spliced in before parsing), which cannot be checked; write the command out",
        );
      }
      return [];
    case "hash":
      if (values.some((v) => v === undefined || /^-[a-z]*p/.test(v))) {
        return deny("`hash -p` maps a command name to another program, which cannot be checked");
      }
      return [];
    case "enable":
      if (values.some((v) => v === undefined || /^-[a-z]*f/.test(v))) {
        return deny("`enable -f` loads a builtin from a shared object, which cannot be checked");
      }
      return [];
    case "complete":
    case "compgen":
      if (values.some((v) => v === undefined || /^-[a-zA-Z]*C/.test(v))) {
        return deny(`\`${name} -C\` runs a command to generate completions, which cannot be checked`);
      }
      return [];
    case "bind":
      if (values.some((v) => v === undefined || /^-[a-zA-Z]*x/.test(v))) {
        return deny("`bind -x` binds a key to shell code, which cannot be checked");
      }
      return [];
    case "fc":
      if (values.some((v) => v === undefined || !/^-[lnr]+$|^-?\d+$/.test(v))) {
        return deny(
          "`fc` re-runs history through an editor, which cannot be checked (only `fc -l` is allowed)",
        );
      }
      return [];
    case "let":
      return values.some((v) => v === undefined || SUBSCRIPT_CODE.test(v) || /\$\(|`/.test(v))
        ? deny(
            "`let` evaluates its arguments as arithmetic, and bash runs command substitutions found in them",
          )
        : [];
    case "test":
    case "[":
      for (let i = 0; i < values.length; i++) {
        if (values[i] === "-v" && (values[i + 1] === undefined || SUBSCRIPT_CODE.test(values[i + 1]!))) {
          return deny(
            "`test -v` evaluates an array subscript, and bash runs command substitutions found in it",
          );
        }
      }
      return [];
  }
  if (!Object.hasOwn(BUILTIN_VALUE_OPTIONS, name)) return [];
  const out: Continuation[] = [];
  const names: ShellWord[] = [];
  const valueOptions = BUILTIN_VALUE_OPTIONS[name]!;
  const declareLike = ["declare", "typeset", "local", "export", "readonly"].includes(name);
  let nameref = false;
  // Declarations that make arrays read a quoted `NAME=(…)` again (`export` does not).
  const rereadsArrays = declareLike && name !== "export";
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const v = w.value;
    if (v === undefined) {
      out.push({
        kind: "unresolvable",
        reason: `\`${name}\` gets \`${w.raw}\`, only known at run time, where it takes a variable name`,
      });
      continue;
    }
    if (v === "--") {
      names.push(...args.slice(i + 1));
      break;
    }
    if ((v.startsWith("-") || (declareLike && v.startsWith("+"))) && v.length > 1 && names.length === 0) {
      const letters = v.slice(1);
      if (declareLike && letters.includes("n")) nameref = true;
      if ((name === "mapfile" || name === "readarray") && letters.includes("C")) {
        return deny(
          `\`${name} -C\` runs a callback as shell code for every line read, which cannot be checked`,
        );
      }
      // Letter by letter, as getopt reads a cluster: the first letter that takes a value takes
      // the rest of the word (`printf -vNAME`, `read -rdz`) or, when nothing is left, the next
      // word. `printf -v NAME`, `read -a NAME`, `wait -p NAME`: that value is a name.
      for (let j = 0; j < letters.length; j++) {
        const letter = letters[j]!;
        const nameOption =
          (name === "printf" && letter === "v") ||
          (name === "read" && letter === "a") ||
          (name === "wait" && letter === "p");
        if (!nameOption && !valueOptions.includes(letter)) continue;
        const rest = letters.slice(j + 1);
        const value: ShellWord | undefined = rest !== "" ? { ...w, raw: rest, value: rest } : args[++i];
        if (value && nameOption) names.push(value);
        if (value && value.value === undefined) {
          out.push({ kind: "unresolvable", reason: `\`${name} ${v}\` gets a value only known at run time` });
        }
        break;
      }
      continue;
    }
    if (name === "printf" || name === "getopts") {
      // printf's format and arguments are data; getopts NAME is its second argument.
      if (name === "getopts" && i === 1) names.push(w);
      continue;
    }
    if (name === "unset" || name === "wait") continue;
    names.push(w);
  }
  for (const w of names) {
    const v = w.value;
    if (v === undefined) {
      out.push({
        kind: "unresolvable",
        reason: `\`${name}\` gets the variable name \`${w.raw}\`, only known at run time`,
      });
      continue;
    }
    const bare = v.replace(/[[=].*$/s, "");
    if (rereadsArrays && COMPOUND_ASSIGNMENT.test(v)) {
      // `declare -a 'a=($(cmd))'`: bash reads a quoted `NAME=(…)` argument of a declaration
      // again as a compound assignment, with every expansion in it, so it is walked as the
      // statement bash runs (quoting it hides nothing).
      out.push({ kind: "script", script: v, via: `the compound assignment \`${name}\` reads again` });
    }
    if (STARTUP_DIR_VARIABLES.has(bare) && !declareLike) {
      // `read HOME`, `printf -v HOME …`: the value comes at run time (declarations bring their own assignments).
      out.push({
        kind: "assignment",
        name: bare,
        value: { raw: w.raw, value: undefined, splits: false, glob: false, dynamic: `set by ${name}` },
      });
    }
    if (declareLike) {
      const why = codeVariable(bare);
      if (why) out.push({ kind: "unresolvable", reason: `${name} ${bare}: ${why}` });
    } else {
      // `read NAME`, `printf -v NAME`, `mapfile NAME`, `getopts … NAME`: an assignment whose
      // value only run time knows, checked as one (a code variable, a program's variable).
      out.push(...runTimeAssignment(bare, `set by ${name}`, `\`${name} ${bare}\``));
    }
    if (SUBSCRIPT_CODE.test(v)) {
      out.push({
        kind: "unresolvable",
        reason: `\`${name} ${v}\`: bash evaluates the array subscript as arithmetic and runs the command substitution in it`,
      });
    }
  }
  if (rereadsArrays) {
    // `declare -a a='($(cmd))'`: the declaration's own assignment, its value quoted, is read
    // again as a compound assignment all the same.
    for (const a of cmd.assignments ?? []) {
      const value = a.value?.value;
      if (a.name !== undefined && value?.startsWith("("))
        out.push({
          kind: "script",
          script: `${a.name}=${value}`,
          via: `the compound assignment \`${name}\` reads again`,
        });
    }
  }
  if (nameref) {
    // A reference declared without a target here gets one later — from its current value
    // or its first assignment (`declare -n a; a=PS4`), which the policy cannot follow; and a
    // quoted `'a=PS4'` word is a target all the same.
    for (const w of names) {
      const v = w.value;
      if (v === undefined) continue;
      const eq = v.indexOf("=");
      if (eq === -1) {
        out.push({
          kind: "unresolvable",
          reason: `\`${name} -n ${v}\` declares a reference whose target is set later, which cannot be checked; write the target in the declaration`,
        });
        continue;
      }
      const why = namerefTarget(name, v.slice(0, eq), v.slice(eq + 1));
      if (why) out.push({ kind: "unresolvable", reason: why });
    }
    // `declare -n ref=PS4`: the value of a nameref is itself a variable name.
    for (const a of cmd.assignments ?? []) {
      const target = a.value?.value;
      if (a.value && target === undefined)
        out.push({
          kind: "unresolvable",
          reason: `the nameref target in \`${a.text}\` is only known at run time`,
        });
      else if (target !== undefined) {
        const why = namerefTarget(name, a.name ?? "", target);
        if (why) out.push({ kind: "unresolvable", reason: why });
      }
    }
  }
  return out;
}
