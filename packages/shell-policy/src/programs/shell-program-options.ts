/**
 * Options of ordinary tools whose value is a command the tool runs: `git -c core.pager=…`,
 * `ssh -o ProxyCommand=…`, `rsync -e …`, `tar --use-compress-program=…`, `man -P …`,
 * `vim -c '!…'`, `sed 's/x/y/e'`, `make --eval`. As data: the tool, the option spellings and
 * what the value is. The value is checked as a command line for openers and configured
 * rules (`soft`: a harmless value is fine), or the invocation is denied when the value is
 * code the policy cannot read.
 */

import { wordMayBe } from "../parse/shell-glob.js";
import { isDescriptorPath } from "./descriptor-path.js";
import { configValue, GIT_COMMAND_KEYS, gitSubcommand, gitSubcommandContinuations } from "./git-programs.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";

type ValueKind =
  /** The value is a command line some shell runs. */
  | "command"
  /** `key=value` pairs (git -c, ssh -o): `keys` says which keys hold a command. */
  | "config"
  /** The value is code in the tool's own language that can run programs: denied. */
  | "deny";

interface ProgramOption {
  readonly names: readonly string[];
  readonly kind: ValueKind;
  readonly keys?: RegExp;
  readonly note?: string;
  /** Only under these git subcommands (`-x` is a command for `rebase`, not for `clean`). */
  readonly sub?: readonly string[];
}

const SSH_COMMAND_KEYS =
  /^(proxycommand|localcommand|knownhostscommand|remotecommand|permitlocalcommand|match)$/i;

export const PROGRAM_OPTIONS: Readonly<Record<string, readonly ProgramOption[]>> = {
  git: [
    { names: ["-c"], kind: "config", keys: GIT_COMMAND_KEYS },
    {
      names: ["--config-env"],
      kind: "deny",
      note: "git --config-env reads a config value from the environment",
    },
    // Subcommand options whose value is a command git runs.
    { names: ["-x", "--exec"], kind: "command", sub: ["rebase"] },
    { names: ["--upload-pack"], kind: "command", sub: ["fetch", "pull", "clone", "ls-remote"] },
    { names: ["-u"], kind: "command", sub: ["clone", "ls-remote"] },
    { names: ["--receive-pack", "--exec"], kind: "command", sub: ["push", "send-pack"] },
    { names: ["--exec"], kind: "command", sub: ["archive", "fetch-pack"] },
    { names: ["-O", "--open-files-in-pager"], kind: "command", sub: ["grep"] },
    { names: ["-x", "--extcmd"], kind: "command", sub: ["difftool"] },
  ],
  split: [{ names: ["--filter"], kind: "command" }],
  ssh: [{ names: ["-o"], kind: "config", keys: SSH_COMMAND_KEYS }],
  scp: [
    { names: ["-o"], kind: "config", keys: SSH_COMMAND_KEYS },
    { names: ["-S"], kind: "command" },
  ],
  sftp: [
    { names: ["-o"], kind: "config", keys: SSH_COMMAND_KEYS },
    { names: ["-S"], kind: "command" },
  ],
  rsync: [{ names: ["-e", "--rsh", "--rsync-path"], kind: "command" }],
  tar: [
    {
      names: [
        "-I",
        "--use-compress-program",
        "--to-command",
        "--info-script",
        "-F",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
      ],
      kind: "command",
    },
    { names: ["--checkpoint-action"], kind: "deny", note: "tar --checkpoint-action can run commands" },
  ],
  man: [
    { names: ["-P", "--pager"], kind: "command" },
    { names: ["-H", "--html"], kind: "command" },
  ],
  sort: [{ names: ["--compress-program"], kind: "command" }],
  make: [
    {
      names: ["--eval", "-E"],
      kind: "deny",
      note: "make --eval text is makefile code that can run any command",
    },
  ],
  gmake: [
    {
      names: ["--eval", "-E"],
      kind: "deny",
      note: "make --eval text is makefile code that can run any command",
    },
  ],
  emacs: [
    {
      names: ["--eval", "--execute", "--funcall", "-f", "--load", "-l", "--batch", "--script"],
      kind: "deny",
      note: "Emacs Lisp can open URLs and run programs",
    },
  ],
  zip: [{ names: ["-TT", "--unzip-command"], kind: "command" }],
  less: [],
};

/** Editors whose startup commands (`-c`, `+cmd`, `--cmd`) are editor code. */
const VIM = new Set(["vim", "vi", "nvim", "view", "vimdiff", "ex", "gvim", "rvim", "nvi"]);
const VIM_CODE =
  /\b(system|systemlist|job_start|jobstart|termopen|terminal|py3?|python3?|pyx|lua|perl|ruby|tcl|netrw|Browse|Explore|Open|source|so|exe|execute|call)\b/;

/**
 * Long options of these tools that are themselves a prefix of an option in the table:
 * getopt_long takes an exact name before a prefix (`tar --checkpoint=1` is not
 * `--checkpoint-action`).
 */
const EXACT_LONG: Readonly<Record<string, readonly string[]>> = {
  tar: ["--checkpoint"],
};

/**
 * `a` names the long option `name` the way getopt_long reads it: exactly or by a prefix
 * (`--to-com` is `--to-command`). A prefix shared with another option is ambiguous and the
 * tool refuses it, so counting it here only ever denies what would not run.
 */
export function isLongSpelling(a: string, name: string, tool: string): boolean {
  const given = a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
  if (given === name) return true;
  if (!name.startsWith("--") || !given.startsWith("--") || given.length < 3) return false;
  if (Object.hasOwn(EXACT_LONG, tool) && EXACT_LONG[tool]!.includes(given)) return false;
  return name.startsWith(given);
}

/**
 * Tools whose long options take one dash as well as two, each abbreviated as far as it stays
 * unambiguous (Emacs: `-eval`, `-exec` for `--execute`); their short options never cluster.
 */
const SINGLE_DASH_LONG = new Set(["emacs"]);

function valueAt(
  args: readonly (string | undefined)[],
  i: number,
  name: string,
  tool: string,
): { value: string | undefined; next: number } | undefined {
  const given = args[i];
  if (given === undefined) return undefined;
  if (given === name) return { value: args[i + 1], next: i + 1 };
  const singleDashLong = SINGLE_DASH_LONG.has(tool);
  const a = singleDashLong && /^-[^-]./.test(given) ? `-${given}` : given;
  if (a.startsWith("--") && isLongSpelling(a, name, tool)) {
    const eq = a.indexOf("=");
    return eq === -1 ? { value: args[i + 1], next: i + 1 } : { value: a.slice(eq + 1), next: i };
  }
  if (singleDashLong || name.startsWith("--") || name.length !== 2) return undefined;
  if (given.startsWith(name) && given.length > 2) return { value: given.slice(2), next: i };
  // getopt clusters flags: `rsync -avze CMD`, `tar -cvICMD`, `git rebase -qx CMD` — the
  // option's value is the rest of the word, or the next word. Letters before it are read as
  // flags (one of them taking a value would make this a misreading, which only checks more).
  const at = /^-[^-]/.test(given) ? given.indexOf(name[1]!, 2) : -1;
  if (at === -1) return undefined;
  return at === given.length - 1
    ? { value: args[i + 1], next: i + 1 }
    : { value: given.slice(at + 1), next: i };
}

function soft(script: string, via: string): Continuation {
  return { kind: "script", script, via, soft: true };
}

/** GNU make's short options that take a value in the next word or the rest of the cluster. */
const MAKE_VALUE_LETTERS = new Set(["C", "f", "I", "o", "W", "E"]);

/** ssh's options that take a value (OpenBSD ssh, scp and sftp share these letters). */
const SSH_VALUE_LETTERS = new Set("BbcDEeFIiJLlmOoPpQRSWwX".split(""));

/**
 * In the short-option word `args[i]`, the first letter that takes a value and that value, as
 * getopt reads a cluster: the rest of the word (`-rfFILE`), else the next word (`next`).
 * Undefined when the word is no option cluster or none of its letters takes a value.
 */
function clusterValue(
  args: readonly (string | undefined)[],
  i: number,
  valueLetters: ReadonlySet<string>,
): { letter: string; value: string | undefined; next: boolean } | undefined {
  const a = args[i];
  if (a === undefined || a === "--" || !a.startsWith("-") || a.length < 2) return undefined;
  for (let j = 1; j < a.length; j++) {
    const letter = a[j]!;
    if (!valueLetters.has(letter)) continue;
    const rest = a.slice(j + 1);
    return { letter, value: rest !== "" ? rest : args[i + 1], next: rest === "" };
  }
  return undefined;
}

/**
 * The value `args[i]` gives make's option `-LETTER` or one of `longs` (`-f FILE`, `-rfFILE`,
 * `--file=FILE`, `--mak FILE`: long options by any prefix getopt_long takes); undefined when
 * only run time knows it, null when the word does not give that option.
 */
function makeOptionValue(
  args: readonly (string | undefined)[],
  i: number,
  tool: string,
  letter: string,
  longs: readonly string[],
): string | undefined | null {
  const a = args[i];
  if (a?.startsWith("--") && a !== "--") {
    if (!longs.some((long) => isLongSpelling(a, long, tool))) return null;
    return a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[i + 1];
  }
  const hit = clusterValue(args, i, MAKE_VALUE_LETTERS);
  return hit?.letter === letter ? hit.value : null;
}

/**
 * `ssh -F FILE` reads a config file, whose `ProxyCommand`, `LocalCommand` and `Match exec`
 * are commands. A file on disk is out of scope (docs/shell-policy.md §8); one read from
 * standard input or a descriptor (`-F /dev/stdin <<< 'ProxyCommand …'`) is written in the
 * command line itself, and cannot be checked.
 */
function sshConfigFromDescriptor(cmd: ResolvedCommand): string | undefined {
  const args = cmd.argv;
  for (let i = 1; i < args.length; i++) {
    const hit = clusterValue(args, i, SSH_VALUE_LETTERS);
    if (!hit) continue;
    if (hit.next) i++;
    const { value } = hit;
    if (hit.letter === "F" && (value === undefined || value === "-" || isDescriptorPath(value)))
      return `${cmd.name} -F would read its config (ProxyCommand, LocalCommand: commands) from standard input, a descriptor or a name only known at run time, which cannot be checked`;
  }
  return undefined;
}

/** What the program-running options of `cmd` make run. */
export function programOptionContinuations(cmd: ResolvedCommand): Continuation[] {
  const args = cmd.argv;
  const out: Continuation[] = [];
  if (VIM.has(cmd.name)) {
    for (let i = 1; i < args.length; i++) {
      const a = args[i];
      let code: string | undefined;
      if (a === "-c" || a === "--cmd" || a === "-S") code = args[++i];
      else if (a?.startsWith("+") && a.length > 1) code = a.slice(1);
      else continue;
      if (code === undefined)
        return [{ kind: "unresolvable", reason: `a ${cmd.name} startup command is only known at run time` }];
      const bang = /^\s*:?\s*(?:[.%,\d\s]*)?!(.*)$/s.exec(code);
      if (bang) out.push({ kind: "script", script: bang[1]!, via: `${cmd.name} !` });
      else if (VIM_CODE.test(code) || code.includes("!")) {
        out.push({
          kind: "unresolvable",
          reason: `the ${cmd.name} command \`${code.slice(0, 40)}\` can run programs, which cannot be checked`,
        });
      }
    }
    return out;
  }
  if (cmd.name === "less" || cmd.name === "more") {
    if (args.some((a) => a === undefined || (a.startsWith("+") && /[!|]/.test(a)))) {
      return [
        {
          kind: "unresolvable",
          reason: `a ${cmd.name} +command that runs a shell command cannot be checked`,
        },
      ];
    }
    return [];
  }
  if (cmd.name === "ssh" || cmd.name === "scp" || cmd.name === "sftp") {
    const why = sshConfigFromDescriptor(cmd);
    if (why) return [{ kind: "unresolvable", reason: why }];
  }
  if (cmd.name === "sed" || cmd.name === "gsed") return sedContinuations(cmd);
  if (cmd.name === "socat") return socatContinuations(cmd);
  if (cmd.name === "sqlite3" || cmd.name === "sqlite") return sqliteContinuations(cmd);
  if (cmd.name === "make" || cmd.name === "gmake") {
    // `make -f -` reads the makefile — recipes are commands — from standard input.
    for (let i = 1; i < args.length; i++) {
      // `-C DIR` first: make looks for the makefile there (`make -C /dev/fd -f 0`).
      const dir = makeOptionValue(args, i, cmd.name, "C", ["--directory"]);
      if (dir !== null && (dir === undefined || isDescriptorPath(dir)))
        return [
          {
            kind: "unresolvable",
            reason:
              "make -C into /dev, /proc or a directory only known at run time: a makefile named there can be a descriptor, which cannot be checked",
          },
        ];
    }
    for (let i = 1; i < args.length; i++) {
      const file = makeOptionValue(args, i, cmd.name, "f", ["--file", "--makefile"]);
      if (file === null) continue;
      if (file === undefined || file === "-" || isDescriptorPath(file)) {
        return [
          {
            kind: "unresolvable",
            reason:
              "make would read its makefile (whose recipes are commands) from standard input or a descriptor, which cannot be checked",
          },
        ];
      }
    }
    for (const a of args.slice(1)) {
      const m = a === undefined ? null : /^(SHELL|MAKESHELL|\.SHELLFLAGS)=(.*)$/s.exec(a);
      if (m) out.push(soft(m[2]!, `make ${m[1]}`));
    }
  }
  if (cmd.name === "git") {
    // The ext:: transport runs its URL as a command (`git clone 'ext::sh -c …'`, a remote's url).
    const ext = args.find((a) => a !== undefined && /(^|=)ext::/i.test(a));
    if (ext !== undefined)
      return [
        {
          kind: "unresolvable",
          reason: `\`${ext.slice(0, 40)}\` is a git ext:: transport URL, whose text git runs as a command`,
        },
      ];
  }
  if (cmd.name === "tar") out.push(...tarTraditionalPrograms(args));
  if (cmd.name === "git") out.push(...gitSubcommandContinuations(cmd));
  const sub = cmd.name === "git" ? gitSubcommand(args) : undefined;
  const specs = (Object.hasOwn(PROGRAM_OPTIONS, cmd.name) ? PROGRAM_OPTIONS[cmd.name]! : []).filter(
    (spec) => spec.sub === undefined || (sub !== undefined && spec.sub.includes(sub)),
  );
  // A glob word becomes the names of matching files: `-[I]` is `-I` when a file `-I` exists.
  for (const w of cmd.words.slice(1)) {
    if (!w.glob) continue;
    for (const spec of specs) {
      for (const name of spec.names) {
        const spellings = name.startsWith("--") ? [name, `${name}=x`] : [name, `${name}x`];
        if (spellings.some((c) => wordMayBe(w, c)))
          return [
            {
              kind: "unresolvable",
              reason: `\`${w.raw}\` is a glob that a file named like \`${name}\` would turn into that option of ${cmd.name}, which runs a command`,
            },
          ];
      }
    }
  }
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "--") break;
    for (const spec of specs) {
      for (const name of spec.names) {
        const hit = valueAt(args, i, name, cmd.name);
        if (!hit) continue;
        i = hit.next;
        const { value } = hit;
        if (spec.kind === "deny")
          return [{ kind: "unresolvable", reason: spec.note ?? `${cmd.name} ${name} cannot be checked` }];
        if (value === undefined)
          return [
            { kind: "unresolvable", reason: `the ${name} value of ${cmd.name} is only known at run time` },
          ];
        if (spec.kind === "command") out.push(soft(value, `${cmd.name} ${name}`));
        else {
          const m = /^\s*([^=\s]+)\s*[=\s]\s*(.*)$/s.exec(value);
          if (m && spec.keys?.test(m[1]!)) out.push(...configValue(m[1]!, m[2]!, `${cmd.name} ${name}`));
        }
      }
    }
  }
  return out;
}

/**
 * tar's traditional form, `tar cIf PROG x.tar dir`: the first word is option letters without
 * a dash, and the letters that take a value take the next words in order. When those letters
 * include one whose value is a command (`I`, `F`), which word is that value depends on every
 * letter before it, so each later word is checked as a command line (a file name there
 * passes: the check is soft).
 */
function tarTraditionalPrograms(args: readonly (string | undefined)[]): Continuation[] {
  const first = args[1];
  if (first === undefined || first.startsWith("-") || !/[IF]/.test(first)) return [];
  const out: Continuation[] = [];
  for (const a of args.slice(2)) {
    if (a === undefined)
      return [
        { kind: "unresolvable", reason: "a tar argument that may be a program is only known at run time" },
      ];
    out.push(soft(a, `tar ${first}`));
  }
  return out;
}

/** socat's `EXEC:cmd` and `SYSTEM:cmd` addresses run a program; the command ends at the first `,` (address options). */
function socatContinuations(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  for (const a of cmd.argv.slice(1)) {
    if (a === undefined)
      return [{ kind: "unresolvable", reason: "a socat address is only known at run time" }];
    const m = /^(exec|system)[:,](.*)$/is.exec(a);
    if (!m) continue;
    const command = m[2]!.split(/(?<!\\),/)[0]!;
    out.push({ kind: "script", script: command, via: `socat ${m[1]!.toUpperCase()}:`, soft: true });
  }
  return out;
}

/** sqlite3 dot-commands in arguments or `-cmd`: `.shell`/`.system` run a command, `|cmd` outputs pipe to one. */
function sqliteContinuations(cmd: ResolvedCommand): Continuation[] {
  const out: Continuation[] = [];
  for (const a of cmd.argv.slice(1)) {
    if (a === undefined)
      return [{ kind: "unresolvable", reason: `an argument of ${cmd.name} is only known at run time` }];
    for (const line of a.split(/[\n;]/)) {
      const shell = /^\s*\.(shell|system)\s+(.*)$/s.exec(line);
      if (shell) out.push({ kind: "script", script: shell[2]!, via: `${cmd.name} .${shell[1]}` });
      else if (
        /^\s*\.(output|once|import|read|excel)\b.*\|/s.test(line) ||
        /^\s*\.(excel|once\s+-[ex])/.test(line)
      )
        return [
          {
            kind: "unresolvable",
            reason: `the ${cmd.name} command \`${line.trim().slice(0, 40)}\` runs a program, which cannot be checked`,
          },
        ];
    }
  }
  return out;
}

/** GNU sed's `e` command and the `e` flag of `s///` run the pattern space as a command. */
function sedContinuations(cmd: ResolvedCommand): Continuation[] {
  const args = cmd.argv;
  const scripts: string[] = [];
  let sawScript = false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === undefined)
      return [{ kind: "unresolvable", reason: "a sed argument is only known at run time" }];
    if (a === "-e" || (a.startsWith("--") && !a.includes("=") && isLongSpelling(a, "--expression", "sed"))) {
      const s = args[++i];
      if (s === undefined)
        return [{ kind: "unresolvable", reason: "the sed script is only known at run time" }];
      scripts.push(s);
      sawScript = true;
    } else if (a.startsWith("--") && a.includes("=") && isLongSpelling(a, "--expression", "sed")) {
      scripts.push(a.slice(a.indexOf("=") + 1));
      sawScript = true;
    } else if (a === "-f" || a === "--file" || a.startsWith("--file=")) {
      sawScript = true;
      if (a === "-f" || a === "--file") i++;
    } else if (!a.startsWith("-") && !sawScript) {
      scripts.push(a);
      sawScript = true;
    }
  }
  for (const s of scripts) {
    if (
      /(^|[;\n{}])\s*(\d+|\$|\/[^/]*\/)?\s*e(\s|;|$)/.test(s) ||
      /s(.)(?:(?!\1).|\\\1)*\1(?:(?!\1).|\\\1)*\1[gpiImMw0-9]*e/.test(s)
    ) {
      return [
        {
          kind: "unresolvable",
          reason:
            "the sed script runs commands (the `e` command or the `e` flag of `s`), which cannot be checked",
        },
      ];
    }
  }
  return [];
}
