/**
 * Readers for commands that run another command but do not read their options the getopt
 * way of shell-wrappers.ts: the bash builtin `jobs -x`, `firejail`, `bwrap`, `ip netns|vrf
 * exec`, `expect`, `mpirun`/`mpiexec`, `lldb`, `rr`, the task spooler `tsp`. Each reads
 * exactly the grammar it knows and denies what falls outside it (an unknown option, a word
 * only known at run time where an option may stand): the command behind the launcher must
 * be certain, or the line does not run (docs/shell-policy.md §2).
 */

import { globMayBeOption } from "../parse/shell-glob.js";
import { literalWord, type ShellWord } from "../parse/shell-words.js";
import { isDescriptorPath } from "./descriptor-path.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";

function deny(reason: string): Continuation[] {
  return [{ kind: "unresolvable", reason }];
}

function runTime(word: ShellWord, what: string): Continuation[] {
  return deny(
    `${what} \`${word.raw}\` is only known at run time (${word.dynamic ?? "glob or brace expansion"})`,
  );
}

/** A word in option position that could become an option at run time (`$x`, `-[c]`). */
function mayBeOption(word: ShellWord): boolean {
  return word.value === undefined || globMayBeOption(word);
}

/** Option values a launcher skips: one that may become several words (`$x`, a glob) moves the command. */
function shiftingValue(values: readonly ShellWord[], what: string): Continuation[] | undefined {
  const w = values.find((v) => v.splits || v.glob);
  return w
    ? deny(
        `the value \`${w.raw}\` of ${what} may become several words at run time, which moves where the command starts`,
      )
    : undefined;
}

/** `NAME=value` handed to the program's environment: checked like an assignment. */
function assignment(text: string): Continuation | undefined {
  const m = /^([^=\s]+)=/.exec(text);
  return m ? { kind: "assignment", name: m[1]!, value: literalWord(text.slice(m[0].length)) } : undefined;
}

/**
 * `jobs -x CMD ARGS…` (bash builtin): runs CMD with job specs (`%1`) in the arguments
 * replaced by process group ids. bash reads options as its internal getopt does (`-lpnxrs`,
 * clusters, `--`), stopping at the first operand.
 */
export function peelJobs(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let execute = false;
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) {
      // After -x it is the command (the layer denies a command name only known at run time);
      // before, it may be `-x` itself, or split (`$x`) or expand (a glob) into `-x CMD`.
      if (execute) break;
      if (i + 1 < words.length || w.splits || w.glob)
        return runTime(w, "an option of jobs (it may be `-x`, which runs a command)");
      return [];
    }
    const v = w.value!;
    if (v === "--") {
      i++;
      break;
    }
    if (!v.startsWith("-") || v === "-") break;
    if (v.includes("x")) execute = true;
  }
  if (!execute || i >= words.length) return [];
  // Job specs are replaced by numbers at run time.
  const rest = words
    .slice(i)
    .map((w) =>
      w.value?.startsWith("%")
        ? { ...w, value: undefined, dynamic: "jobs -x replaces a job spec by its process group id" }
        : w,
    );
  return [{ kind: "command", words: rest, stdin: cmd.stdin }];
}

/**
 * firejail: options are single words (`--name` or `--name=value`, never a separate value),
 * the first other word is the program. `--env=NAME=value` sets the program's environment;
 * `--shell=` other than `none` runs the command line through that shell (older firejail).
 */
export function peelFirejail(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const out: Continuation[] = [];
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) return runTime(w, "an argument where firejail reads its options");
    const v = w.value!;
    if (v === "--") {
      i++;
      break;
    }
    if (!v.startsWith("-")) break;
    if (!v.startsWith("--"))
      return deny(`firejail: \`${v}\` is not an option capgate knows firejail to read`);
    if (
      /^--(help|version|list|tree|top|netstats|debug-[a-z-]+|ls=|get=|put=|shutdown=|profile\.print=)/.test(v)
    )
      return [];
    if (/^--shell=/.test(v) && v !== "--shell=none")
      return deny("firejail --shell= runs the command line through another shell, which cannot be checked");
    if (/^--env=/.test(v)) {
      const a = assignment(v.slice("--env=".length));
      if (a) out.push(a);
    }
  }
  const rest = words.slice(i);
  if (rest.length === 0) return [...out, ...stdinShell("firejail", cmd)];
  return [...out, { kind: "command", words: rest, stdin: cmd.stdin }];
}

/** firejail, proot and friends start the user's shell when given no command. */
function stdinShell(tool: string, cmd: ResolvedCommand): Continuation[] {
  if (cmd.stdin.kind === "text")
    return [{ kind: "script", script: cmd.stdin.text, via: `${tool} reading a here-document` }];
  if (cmd.stdin.kind === "file" && cmd.stdin.path === "/dev/null") return [];
  return deny(`${tool} with no command starts a shell reading standard input, which cannot be checked`);
}

/** bubblewrap's options and how many words each takes (bwrap compares names exactly). */
const BWRAP_ARITY: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    [
      "--unshare-all",
      "--share-net",
      "--unshare-user",
      "--unshare-user-try",
      "--unshare-ipc",
      "--unshare-pid",
      "--unshare-net",
      "--unshare-uts",
      "--unshare-cgroup",
      "--unshare-cgroup-try",
      "--disable-userns",
      "--assert-userns-disabled",
      "--clearenv",
      "--new-session",
      "--die-with-parent",
      "--as-pid-1",
      "--level-prefix",
    ].map((n) => [n, 0]),
  ),
  ...Object.fromEntries(
    [
      "--userns",
      "--userns2",
      "--pidns",
      "--uid",
      "--gid",
      "--hostname",
      "--chdir",
      "--unsetenv",
      "--lock-file",
      "--sync-fd",
      "--remount-ro",
      "--exec-label",
      "--file-label",
      "--proc",
      "--dev",
      "--tmpfs",
      "--mqueue",
      "--dir",
      "--seccomp",
      "--add-seccomp-fd",
      "--block-fd",
      "--userns-block-fd",
      "--info-fd",
      "--json-status-fd",
      "--cap-add",
      "--cap-drop",
      "--perms",
      "--size",
      "--argv0",
      "--overlay-src",
      "--tmp-overlay",
      "--ro-overlay",
    ].map((n) => [n, 1]),
  ),
  ...Object.fromEntries(
    [
      "--setenv",
      "--bind",
      "--bind-try",
      "--dev-bind",
      "--dev-bind-try",
      "--ro-bind",
      "--ro-bind-try",
      "--bind-fd",
      "--ro-bind-fd",
      "--file",
      "--bind-data",
      "--ro-bind-data",
      "--symlink",
      "--chmod",
    ].map((n) => [n, 2]),
  ),
  "--overlay": 3,
};

/** `bwrap [options] [--] COMMAND ARGS`: `--setenv NAME VALUE` is an assignment; `--args FD` reads more options from a descriptor. */
export function peelBwrap(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const out: Continuation[] = [];
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) return runTime(w, "an argument where bwrap reads its options");
    const v = w.value!;
    if (v === "--") {
      i++;
      break;
    }
    if (!v.startsWith("-")) break;
    if (v === "--help" || v === "--version") return [];
    if (v === "--args") return deny("bwrap --args reads further options and the command from a descriptor");
    if (!Object.hasOwn(BWRAP_ARITY, v))
      return deny(`bwrap: unknown option \`${v}\` (not in capgate's table)`);
    const n = BWRAP_ARITY[v]!;
    if (i + n >= words.length) return deny(`bwrap ${v} needs ${n} value(s)`);
    const moved = shiftingValue(words.slice(i + 1, i + 1 + n), `bwrap ${v}`);
    if (moved) return moved;
    if (v === "--setenv") {
      const name = words[i + 1]!;
      if (name.value === undefined) return runTime(name, "the variable name of bwrap --setenv");
      out.push({ kind: "assignment", name: name.value, value: words[i + 2]! });
    }
    i += n;
  }
  const rest = words.slice(i);
  if (rest.length === 0) return out;
  return [...out, { kind: "command", words: rest, stdin: cmd.stdin }];
}

/**
 * `ip [options] netns exec NAME cmd…`, `ip -all netns exec cmd…`, `ip vrf exec NAME cmd…`.
 * iproute2 matches its options, objects and verbs by any prefix (`ip net e ns cmd`), and
 * `-batch FILE` reads commands from a file.
 */
export function peelIp(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let all = false;
  let i = 1;
  const isPrefix = (word: string, full: string, min = 1) => word.length >= min && full.startsWith(word);
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) return runTime(w, "an argument where ip reads its options");
    let v = w.value!;
    if (!v.startsWith("-") || v === "-") break;
    if (v.startsWith("--")) v = v.slice(1);
    if (isPrefix(v, "-batch", 2) || isPrefix(v, "-force", 3))
      return deny("ip -batch reads its commands (ip netns exec …) from a file, which cannot be checked");
    if (isPrefix(v, "-all", 2)) all = true;
    // Options whose value is the next word; iproute2 tries -loops, -family … in this order.
    if (
      isPrefix(v, "-loops", 2) ||
      isPrefix(v, "-family", 2) ||
      isPrefix(v, "-rcvbuf", 3) ||
      isPrefix(v, "-netns", 2)
    ) {
      const moved = shiftingValue(words.slice(i + 1, i + 2), `ip ${v}`);
      if (moved) return moved;
      i++;
    }
  }
  const object = words[i];
  if (!object) return [];
  if (object.value === undefined) return runTime(object, "the object of ip");
  const netns = isPrefix(object.value, "netns", 3);
  const vrf = isPrefix(object.value, "vrf", 1);
  if (!netns && !vrf) return [];
  const verb = words[i + 1];
  if (!verb) return [];
  if (verb.value === undefined) return runTime(verb, `the ${object.value} command of ip`);
  if (!isPrefix(verb.value, "exec", 1)) return [];
  const out: Continuation[] = [];
  // `ip -all netns exec cmd` has no NAME; with the option's spelling in doubt, check both readings.
  if (netns && all && words.length > i + 2)
    out.push({ kind: "command", words: words.slice(i + 2), stdin: cmd.stdin });
  if (words.length > i + 3) out.push({ kind: "command", words: words.slice(i + 3), stdin: cmd.stdin });
  return out;
}

/**
 * expect (Tcl): `-c CMDS` and code read from standard input (`expect`, `expect -`, `-i`) are
 * Tcl, which can `spawn`/`exec` anything: denied. A script file is not read (docs §8).
 * Also `tclsh`/`wish` reading their program from standard input.
 */
export function peelTcl(cmd: ResolvedCommand): Continuation[] {
  const { words, name } = cmd;
  const tcl = "Tcl code, which can run any program (`exec`, `spawn`), and capgate does not read Tcl";
  if (name !== "expect") {
    // `tclsh ?-encoding NAME? ?script?` (Tcl 8.6+).
    const script = words[1]?.value === "-encoding" ? words[3] : words[1];
    if (
      script === undefined ||
      script.value === "-" ||
      (script.value !== undefined && isDescriptorPath(script.value))
    ) {
      if (cmd.stdin.kind === "file" && cmd.stdin.path === "/dev/null") return [];
      return deny(`${name} would read ${tcl} from standard input`);
    }
    return [];
  }
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) return runTime(w, "an argument where expect reads its options");
    const v = w.value!;
    if (v === "--") {
      const next = words[i + 1];
      return next && next.value !== "-" && !(next.value !== undefined && isDescriptorPath(next.value))
        ? []
        : deny(`expect would read ${tcl} from standard input`);
    }
    if (v === "-" || !v.startsWith("-")) {
      return v === "-" || isDescriptorPath(v) ? deny(`expect would read ${tcl} from standard input`) : [];
    }
    if (/^-[dinNv]*c/.test(v)) return deny(`expect -c runs ${tcl}`);
    if (/^-[dnNv]*i/.test(v)) return deny(`expect -i reads ${tcl} from standard input`);
    if (/^-[dnN]*v/.test(v)) return [];
    if (/^-[dnN]*[fb]$/.test(v)) {
      // The script file follows; `-` is standard input.
      const script = words[i + 1];
      if (!script) return deny(`expect ${v} needs a script`);
      if (script.value === undefined) return runTime(script, "the script of expect");
      return script.value === "-" || isDescriptorPath(script.value)
        ? deny(`expect would read ${tcl} from standard input`)
        : [];
    }
    if (v === "-D") {
      i++;
      continue;
    }
    if (!/^-[dnN]+$/.test(v)) return deny(`expect: unknown option \`${v}\``);
  }
  return deny(`expect with no script reads ${tcl} from standard input`);
}

/** mpirun/mpiexec (Open MPI and MPICH/Hydra) options, by name without dashes, and how many words each takes. */
const MPI_ARITY: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    [
      "oversubscribe",
      "allow-run-as-root",
      "report-bindings",
      "tag-output",
      "timestamp-output",
      "q",
      "quiet",
      "v",
      "verbose",
      "display-map",
      "display-allocation",
      "use-hwthread-cpus",
      "bind-to-core",
      "bind-to-socket",
      "nolocal",
      "merge-stderr-to-stdout",
      "genvall",
      "genvnone",
      "envall",
      "envnone",
      "l",
      "prepend-rank",
      "noprefix",
      "enable-recovery",
      "disable-recovery",
    ].map((n) => [n, 0]),
  ),
  ...Object.fromEntries(
    [
      "n",
      "np",
      "c",
      "N",
      "H",
      "host",
      "hosts",
      "hostfile",
      "machinefile",
      "f",
      "default-hostfile",
      "ppn",
      "npernode",
      "npersocket",
      "map-by",
      "bind-to",
      "rank-by",
      "x",
      "wdir",
      "wd",
      "path",
      "output-filename",
      "outfile-pattern",
      "errfile-pattern",
      "timeout",
      "cpus-per-proc",
      "cpus-per-rank",
      "genvlist",
      "envlist",
      "iface",
      "launcher",
      "bootstrap",
    ].map((n) => [n, 1]),
  ),
  mca: 2,
  gmca: 2,
  genv: 2,
  env: 2,
};
/** Options whose value is a program or a file of further options: denied. */
const MPI_DENY = new Set([
  "launch-agent",
  "launcher-exec",
  "bootstrap-exec",
  "prefix",
  "tune",
  "am",
  "configfile",
  "app",
  "debugger",
  "rsh",
]);
/** MCA parameters that name a program (the remote launch agent, a prefix for orted). */
const MPI_MCA_PROGRAM = /agent|launch|exec|prefix|cmd|command|debugger|rsh|ssh/i;

/** `mpirun [options] prog args [: [options] prog args]…` */
export function peelMpirun(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const out: Continuation[] = [];
  const tool = cmd.name;
  let i = 1;
  while (i < words.length) {
    // Options of this section.
    for (; i < words.length; i++) {
      const w = words[i]!;
      if (mayBeOption(w)) return runTime(w, `an argument where ${tool} reads its options`);
      const v = w.value!;
      if (v === "--") {
        i++;
        break;
      }
      if (!v.startsWith("-") || v === "-") break;
      const eq = v.indexOf("=");
      const name = v.replace(/^--?/, "").replace(/=.*$/s, "");
      if (name === "h" || name === "help" || name === "V" || name === "version" || name === "info") return [];
      if (MPI_DENY.has(name))
        return deny(`${tool} -${name} names a program or a file of options that cannot be checked`);
      if (!Object.hasOwn(MPI_ARITY, name))
        return deny(
          `${tool}: unknown option \`${v}\` (not in capgate's table; the command cannot be told for certain)`,
        );
      const n = eq !== -1 ? 0 : MPI_ARITY[name]!;
      const values = eq !== -1 ? [literalWord(v.slice(eq + 1))] : words.slice(i + 1, i + 1 + n);
      if (values.length < n) return deny(`${tool} -${name} needs ${n} value(s)`);
      const moved = shiftingValue(values, `${tool} -${name}`);
      if (moved) return moved;
      if (values.some((x) => x.value === undefined) && /^(x|genv|env|mca|gmca)$/.test(name))
        return runTime(values.find((x) => x.value === undefined)!, `the value of ${tool} -${name}`);
      if (name === "x") {
        const a = assignment(values[0]!.value!);
        if (a) out.push(a);
      } else if (name === "genv" || name === "env") {
        out.push({ kind: "assignment", name: values[0]!.value!, value: values[1]! });
      } else if ((name === "mca" || name === "gmca") && MPI_MCA_PROGRAM.test(values[0]!.value!)) {
        return deny(
          `${tool} --${name} ${values[0]!.value} names a program ${tool} runs, which cannot be checked`,
        );
      }
      i += n;
    }
    let end = i;
    while (end < words.length && words[end]!.value !== ":") end++;
    if (end > i) out.push({ kind: "command", words: words.slice(i, end), stdin: cmd.stdin });
    i = end + 1;
  }
  return out;
}

/** lldb's options (LLVM OptTable: one or two dashes), by name, and what each value is. */
const LLDB_OPTIONS: Readonly<Record<string, "flag" | "value" | "command" | "program" | "stop" | "deny">> = {
  b: "flag",
  batch: "flag",
  x: "flag",
  "no-lldbinit": "flag",
  "local-lldbinit": "flag",
  X: "flag",
  "no-use-colors": "flag",
  Q: "flag",
  "source-quietly": "flag",
  e: "flag",
  editor: "flag",
  w: "flag",
  "wait-for": "flag",
  d: "flag",
  debug: "flag",
  capture: "flag",
  a: "value",
  arch: "value",
  c: "value",
  core: "value",
  n: "value",
  "attach-name": "value",
  p: "value",
  "attach-pid": "value",
  l: "value",
  "script-language": "value",
  s: "value",
  source: "value",
  S: "value",
  "source-before-file": "value",
  K: "value",
  "source-on-crash": "value",
  "capture-path": "value",
  f: "program",
  file: "program",
  o: "command",
  "one-line": "command",
  O: "command",
  "one-line-before-file": "command",
  k: "command",
  "one-line-on-crash": "command",
  h: "stop",
  help: "stop",
  v: "stop",
  version: "stop",
  P: "stop",
  "python-path": "stop",
  "print-script-interpreter-info": "stop",
  r: "deny",
  repl: "deny",
  R: "deny",
  "repl-language": "deny",
};

/**
 * `lldb [options] [program [args]]`, `lldb -- program args`: the program may be run (`-o
 * run`), so it is checked as a command; `-o`/`-O`/`-k` commands are read by lldbCommand.
 */
export function peelLldb(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  const out: Continuation[] = [];
  let program: ShellWord | undefined;
  const positional: ShellWord[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (mayBeOption(w)) return runTime(w, "an argument of lldb");
    const v = w.value!;
    if (v === "--") {
      positional.push(...words.slice(i + 1));
      break;
    }
    if (!v.startsWith("-") || v === "-") {
      positional.push(w);
      continue;
    }
    const eq = v.indexOf("=");
    const name = v.replace(/^--?/, "").replace(/=.*$/s, "");
    const kind = Object.hasOwn(LLDB_OPTIONS, name) ? LLDB_OPTIONS[name]! : undefined;
    if (kind === undefined) return deny(`lldb: unknown option \`${v}\` (not in capgate's table)`);
    if (kind === "stop") return [];
    if (kind === "deny") return deny(`lldb ${v} starts a REPL whose code cannot be checked`);
    if (kind === "flag") continue;
    const value = eq !== -1 ? literalWord(v.slice(eq + 1)) : words[++i];
    if (!value) return deny(`lldb ${v} needs a value`);
    if (value.value === undefined) return runTime(value, `the value of lldb ${v}`);
    if (kind === "program") program = value;
    else if (kind === "command") out.push(...lldbCommand(value.value));
  }
  const run = program ? [program, ...positional] : positional;
  if (run.length > 0) out.push({ kind: "command", words: run, stdin: cmd.stdin });
  return out;
}

/** lldb commands allowed without a closer look: they run nothing but the target itself. */
const LLDB_HARMLESS =
  /^(r|run|c|continue|bt|q|quit|exit|b|br|break|breakpoint|thread|frame|fr|register|image|disassemble|di|memory|process\s+launch|watchpoint|finish|next|n|step|s|ni|si|up|down|kill)(\s|$)/;

/** One lldb command (`-o`): `platform shell`/`shell` is shell code; evaluating expressions that call functions, scripts and the rest are denied. */
export function lldbCommand(text: string): Continuation[] {
  const t = text.trim();
  const shell =
    /^(?:(?:pl|pla|plat|platf|platfo|platfor|platform)\s+)?(?:sh|she|shel|shell)\s+([\s\S]*)$/.exec(t);
  if (shell) {
    const rest = shell[1]!.trim();
    if (rest.startsWith("-"))
      return deny(
        `the lldb command \`${t.slice(0, 40)}\` runs a shell command with options capgate does not read`,
      );
    return [{ kind: "script", script: rest, via: "lldb platform shell" }];
  }
  // `target create PROG` makes PROG the program a later `run` starts.
  const target = /^(?:target\s+create|file)\s+(\S+)\s*$/.exec(t);
  if (target) return [{ kind: "command", words: [literalWord(target[1]!.replace(/^(['"])(.*)\1$/, "$2"))] }];
  if (/^(p|po|print|call|e|expr|expression|v|var|frame\s+variable)(\s|$)/.test(t) && !/[(`$]/.test(t))
    return [];
  if (LLDB_HARMLESS.test(t) && !/(^|\s)(-c|--shell|-s\b|--shell-expand)/.test(t)) return [];
  return deny(
    `the lldb command \`${t.slice(0, 40)}\` may run code (scripts, expressions, shell) that cannot be checked`,
  );
}

const RR_GLOBAL: Readonly<Record<string, number>> = {
  "-A": 1,
  "--microarch": 1,
  "-C": 1,
  "--checksum": 1,
  "-D": 1,
  "--dump-on": 1,
  "-E": 0,
  "--fatal-errors": 0,
  "-F": 0,
  "--force-things": 0,
  "-K": 0,
  "--check-cached-mmaps": 0,
  "-M": 0,
  "--mark-stdio": 0,
  "-S": 0,
  "--suppress-environment-warnings": 0,
  "-T": 1,
  "--dump-at": 1,
  "--log": 1,
  "--resource-path": 1,
};
const RR_RECORD: Readonly<Record<string, number>> = {
  "-b": 0,
  "--force-syscall-buffer": 0,
  "-n": 0,
  "--no-syscall-buffer": 0,
  "--no-file-cloning": 0,
  "--no-read-cloning": 0,
  "-h": 0,
  "--chaos": 0,
  "-u": 0,
  "--cpu-unbound": 0,
  "-w": 0,
  "--wait": 0,
  "--ignore-nested": 0,
  "--setuid-sudo": 0,
  "--asan": 0,
  "--tsan": 0,
  "--stdio-marker": 0,
  "-c": 1,
  "--num-cpu-ticks": 1,
  "-i": 1,
  "--ignore-signal": 1,
  "-o": 1,
  "--output-trace-dir": 1,
  "-p": 1,
  "--print-trace-dir": 1,
  "-t": 1,
  "--continue-through-signal": 1,
  "--bind-to-cpu": 1,
  "--num-cores": 1,
  "--nested": 1,
  "--syscall-buffer-sig": 1,
  "--syscall-buffer-size": 1,
  "--disable-cpuid-features": 1,
  "--disable-cpuid-features-ext": 1,
  "--disable-cpuid-features-xsave": 1,
  "-v": 1,
  "--env": 1,
};
const RR_SUBCOMMANDS =
  /^(record|replay|rerun|ps|dump|pack|sources|buildid|cpufeatures|traceinfo|help|explicit-sources|gdbinit|mark)$/;

/**
 * `rr record [options] prog args` (also `rr prog args`, record being the default): the
 * program runs. `rr replay` runs gdb; its gdb options (`--`, `-x`, `-o`, `-d`) are denied.
 */
export function peelRr(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  let i = 1;
  const pending: Continuation[] = [];
  const options = (table: Readonly<Record<string, number>>, what: string): Continuation[] | undefined => {
    for (; i < words.length; i++) {
      const w = words[i]!;
      if (mayBeOption(w)) return runTime(w, `an argument where ${what} reads its options`);
      const v = w.value!;
      if (v === "--") {
        i++;
        return undefined;
      }
      if (!v.startsWith("-") || v === "-") return undefined;
      const eq = v.indexOf("=");
      const name = eq === -1 ? v : v.slice(0, eq);
      const short = !name.startsWith("--") && name.length > 2 ? name.slice(0, 2) : name;
      if (!Object.hasOwn(table, short))
        return deny(`${what}: unknown option \`${v}\` (not in capgate's table)`);
      const n = eq === -1 && short === name ? table[short]! : 0;
      const moved = shiftingValue(words.slice(i + 1, i + 1 + n), `${what} ${name}`);
      if (moved) return moved;
      if (short === "-v" || name === "--env") {
        const value = eq !== -1 ? v.slice(eq + 1) : short !== name ? v.slice(2) : words[i + 1]?.value;
        if (value === undefined) return deny(`the value of ${what} ${name} is only known at run time`);
        const a = assignment(value);
        if (a) pending.push(a);
      }
      i += n;
    }
    return undefined;
  };
  const global = options(RR_GLOBAL, "rr");
  if (global) return global;
  const sub = words[i];
  if (!sub) return [];
  if (sub.value === undefined) return runTime(sub, "the subcommand of rr");
  if (sub.value === "replay" || sub.value === "rerun") {
    const gdb = words
      .slice(i + 1)
      .find((w) => w.value === undefined || /^(--|-x|-o|-d|--debugger|--gdb-x)/.test(w.value));
    return gdb
      ? deny(`rr ${sub.value} passes \`${gdb.raw}\` on to the debugger it starts, which cannot be checked`)
      : [];
  }
  if (RR_SUBCOMMANDS.test(sub.value) && sub.value !== "record") return [];
  if (sub.value === "record") i++;
  const record = options(RR_RECORD, "rr record");
  if (record) return record;
  const rest = words.slice(i);
  return rest.length > 0 ? [...pending, { kind: "command", words: rest, stdin: cmd.stdin }] : pending;
}

/**
 * task spooler (`tsp`, `ts` on some systems): a command given to it is queued to its server
 * and run later, outside this command's process tree — like `at` or `tmux`, denied. Its
 * actions without a command (`tsp -l`, `tsp -t 3`, `tsp -K`) run nothing.
 */
export function peelTsp(cmd: ResolvedCommand): Continuation[] {
  const { words } = cmd;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (v === undefined) return runTime(w, "an argument of tsp");
    if (/^-[KClBhVnEgfmd]+$/.test(v)) continue;
    if (/^-[LDNUW]$/.test(v)) {
      const moved = shiftingValue(words.slice(i + 1, i + 2), `tsp ${v}`);
      if (moved) return moved;
      i++;
      continue;
    }
    if (/^-[LDNUW]./.test(v)) continue;
    // Actions with an optional job id: the id is the next word when it is a number.
    if (/^-[Stcpoisrwku]$/.test(v)) {
      if (/^\d+$/.test(words[i + 1]?.value ?? "")) i++;
      continue;
    }
    return deny(
      "tsp (task spooler) queues the command to its server, which runs it later outside this command's process tree",
    );
  }
  return [];
}
