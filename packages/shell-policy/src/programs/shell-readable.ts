/**
 * Which commands the policy can read completely — the guarantee under configured deny and
 * ask rules (docs/shell-policy.md §12). A configured rule can only hold on what capgate
 * sees; a program that runs its arguments, its standard input or a config value as
 * commands or code hides what it runs. Rather than list such programs (an attacker finds
 * the one missing), this is an allow-list: programs whose arguments are data, and for the
 * programs that do run something, the forms whose commands capgate reads (they are walked
 * as continuations, shell-commands.ts). Everything else "cannot be read completely", and
 * with deny or ask rules configured it is asked about unless the operator allow-lists it.
 *
 * Script files a command runs (`bash build.sh`, `python3 app.py`, a Makefile, npm scripts,
 * `./tool args`) are files, not arguments: what they do is §8's business, as before.
 */

import type { Assignment } from "../parse/shell-words.js";
import { DATA_PROGRAM_NOTES, DATA_PROGRAM_READERS } from "./data-programs.js";
import { gitKeyUnreadable, gitSubcommand, gitUnreadable } from "./git-programs.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";
import { sedCommandRuns } from "./sed-script.js";
import { isProgramVariable } from "./shell-indirection.js";
import { codeSources, isAwkSource, isInterpreterName, PYTHON } from "./shell-interpreters.js";
import { SHELLS, WRAPPER_ALIASES, WRAPPERS } from "./shell-wrappers.js";

/** Why capgate cannot read a program's command lines completely, or undefined. */
type Reader = (cmd: ResolvedCommand) => string | undefined;

const data: Reader = () => undefined;

/**
 * Programs whose arguments are data: each was checked against its manual for options that
 * run a program (those it has are read as continuations — `sort --compress-program`, `tar
 * --to-command`, `man -P`, `zip -TT`, `split --filter` — or have a reader below).
 */
const DATA_PROGRAMS = [
  // coreutils
  "arch b2sum base32 base64 basename basenc cat chgrp chmod chown cksum comm cp csplit cut date dd df dir",
  "dircolors dirname du echo expand expr factor false fmt fold groups head hostid id join link ln logname ls",
  "md5sum mkdir mkfifo mknod mktemp mv nl nproc numfmt od paste pathchk pinky pr printenv printf ptx pwd",
  "readlink realpath rm rmdir seq sha1sum sha224sum sha256sum sha384sum sha512sum shred shuf sleep sort",
  "split stat stty sum sync tac tail tee test [ touch tr true truncate tsort tty uname unexpand uniq unlink",
  "users vdir wc who whoami yes",
  // bash builtins that take data (the ones that take code are read by shell-indirection.ts)
  "cd pushd popd dirs export unset set shift exit return wait read local declare typeset readonly let : type",
  "hash umask ulimit times shopt getopts kill disown bg fg alias unalias history help logout caller enable",
  "mapfile readarray compgen complete bind fc suspend",
  // text, search, archives, files
  "grep egrep fgrep zgrep jq yq gojq xxd hexdump strings file iconv dos2unix unix2dos column less more",
  "tar gzip gunzip zcat bzip2 bunzip2 bzcat xz unxz xzcat zstd unzstd zstdcat lz4 unlz4 unzip zip zipinfo 7z",
  "tree locate updatedb which whereis whatis apropos man cal clear tput reset bc md5 shasum",
  "diff cmp",
  // processes and the machine
  "ps pgrep pkill killall top htop free uptime lsof pidof vmstat iostat mpstat uname hostname lscpu lsblk",
  "nproc getconf locale id groups last w",
  // network clients (their transfers are the network guard's business)
  "curl ping ping6 dig nslookup host ifconfig netstat ss traceroute tracepath openssl scp rsync ip",
  // build and project tools whose arguments are data; what they run comes from files
  "tsc eslint prettier biome vitest jest mocha turbo esbuild rollup webpack vite next swc",
  "pytest ruff black mypy flake8 pylint isort tox ninja terraform pip pip3",
  "rustfmt gofmt clang-format nano emacs",
].flatMap((line) => line.split(" "));

/** Programs known to run their arguments, input or options as commands, with why (better than the unknown-program message). */
const RUNNERS: Readonly<Record<string, string>> = {
  ed: "ed runs `!` lines of its input (a here-string, a pipe, a file on stdin) as shell commands",
  red: "red is ed: it reads editing commands from its input",
  ex: "ex runs `!` commands and editor commands from its input and its `-c`/`+` arguments",
  dc: "dc runs the text after `!` as a shell command",
  m4: "m4's syscmd and esyscmd run shell commands",
  psql: "psql runs `\\!` meta-commands as shell commands, and SQL such as COPY … PROGRAM runs programs on the server",
  mysql: "the mysql client runs `\\!`/`system` commands",
  mariadb: "the mariadb client runs `\\!`/`system` commands",
  sqlite3: "sqlite3 runs `.shell`/`.system` commands and its edit() function runs an editor",
  sqlite: "sqlite runs `.shell`/`.system` commands",
  duckdb: "duckdb runs `.shell`/`.system` commands",
  sqlcmd: "sqlcmd runs `!!` commands",
  mongosh: "mongosh runs JavaScript",
  mongo: "mongo runs JavaScript",
  nc: "nc -e/-c runs a program for each connection",
  ncat: "ncat --exec/--sh-exec/--lua-exec runs a program for each connection",
  netcat: "netcat -e/-c runs a program for each connection",
  socat: "socat addresses such as EXEC: and SYSTEM: run programs",
  crontab: "crontab installs commands cron runs later",
  sftp: "sftp runs `!` lines of its batch file or input as local shell commands",
  ftp: "ftp runs `!` lines of its input as local shell commands",
  gpg: "gpg runs helper programs named in its options (--photo-viewer, --exec-path)",
  ack: "ack runs the program named by --pager",
  diff3: "diff3 runs the program named by --diff-program",
  sdiff: "sdiff runs the program named by --diff-program and an editor from its input",
  install: "install -s runs the program named by --strip-program",
  watchexec: "watchexec runs the command given in its arguments",
  nodemon: "nodemon runs the command given by --exec",
  concurrently: "concurrently runs the command strings given as arguments",
  "cross-env": "cross-env runs the command given after its assignments",
  "env-cmd": "env-cmd runs the command given in its arguments",
  dotenv: "dotenv runs the command given in its arguments",
  direnv: "direnv exec runs a command, and .envrc files are shell code",
  nx: "nx exec and run-commands run commands given in arguments",
  lerna: "lerna exec runs the command given in its arguments",
  "git-filter-repo": "git filter-repo runs Python callbacks given in its options",
  osascript: "osascript runs AppleScript",
  jshell: "jshell runs Java code",
  raku: "raku runs the code given with -e",
  julia: "julia runs the code given with -e",
  guile: "guile runs the code given with -c",
  racket: "racket runs the code given with -e",
  sbcl: "sbcl runs the code given with --eval",
  clisp: "clisp runs the code given with -x",
  ghci: "ghci runs Haskell code",
  elixir: "elixir runs the code given with -e",
  erl: "erl runs the code given with -eval",
  groovy: "groovy runs the code given with -e",
  scala: "scala runs the code given with -e",
  kotlin: "kotlin runs scripts and code given on the command line",
  qjs: "qjs runs the JavaScript given with -e",
  pwsh: "PowerShell runs its arguments as PowerShell code",
  powershell: "PowerShell runs its arguments as PowerShell code",
};

function plain(value: string): boolean {
  return !/[\s;&|<>()$`\\"'*?[\]{}~#!=]/.test(value);
}

/** The first operand of a program whose options come first (no option takes a value unless listed). */
function firstOperand(
  argv: readonly (string | undefined)[],
  valueOptions: RegExp = /^$/,
): { index: number; value: string | undefined } | undefined {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return { index: i, value: undefined };
    if (a === "--") return i + 1 < argv.length ? { index: i + 1, value: argv[i + 1] } : undefined;
    if (a.startsWith("-") && a !== "-") {
      if (valueOptions.test(a)) i++;
      continue;
    }
    return { index: i, value: a };
  }
  return undefined;
}

/** `NAME=value` arguments of make are variables recipes expand — possibly as commands (`CC=…`): a plain value is data. */
const make: Reader = (cmd) => {
  for (const a of cmd.argv.slice(1)) {
    if (a === undefined) return "a make argument is only known at run time";
    const m = /^([A-Za-z_.][A-Za-z0-9_.]*)=(.*)$/s.exec(a);
    if (m && !plain(m[2]!.replace(/=/g, "")) && !/^(-[A-Za-z0-9,=._/-]+\s*)+$/.test(m[2]!))
      return `the make variable ${m[1]} is set to \`${m[2]!.slice(0, 40)}\`, text a recipe may run as a command`;
  }
  return undefined;
};

/** Keys of `cmake -D` known to hold data; project options (not CMAKE_*) with a plain value are data too. */
const CMAKE_DATA_KEYS =
  /^CMAKE_(BUILD_TYPE|INSTALL_PREFIX|PREFIX_PATH|EXPORT_COMPILE_COMMANDS|CXX_STANDARD|C_STANDARD|CXX_STANDARD_REQUIRED|CXX_EXTENSIONS|POSITION_INDEPENDENT_CODE|VERBOSE_MAKEFILE|TOOLCHAIN_FILE|MODULE_PATH|FIND_ROOT_PATH|OSX_ARCHITECTURES|OSX_DEPLOYMENT_TARGET|CUDA_ARCHITECTURES|BUILD_WITH_INSTALL_RPATH|SKIP_RPATH|INSTALL_RPATH|COLOR_DIAGNOSTICS|UNITY_BUILD|INTERPROCEDURAL_OPTIMIZATION|INSTALL_LIBDIR|INSTALL_BINDIR|INSTALL_INCLUDEDIR|RUNTIME_OUTPUT_DIRECTORY|LIBRARY_OUTPUT_DIRECTORY|ARCHIVE_OUTPUT_DIRECTORY|FIND_PACKAGE_PREFER_CONFIG|POLICY_DEFAULT_CMP\d+|SYSTEM_NAME|SYSTEM_PROCESSOR|SYSROOT|MSVC_RUNTIME_LIBRARY|DEBUG_POSTFIX|FIND_DEBUG_MODE|COMPILE_WARNING_AS_ERROR|CONFIGURATION_TYPES)(:[A-Z]+)?$/;

/** `cmake -E` commands that only touch files or print (`env`, `time`, `chdir` run a command and are peeled). */
const CMAKE_E_DATA = new Set(
  "capabilities cat chdir compare_files copy copy_directory copy_directory_if_different copy_if_different create_symlink create_hardlink echo echo_append env environment false make_directory md5sum sha1sum sha224sum sha256sum sha384sum sha512sum remove remove_directory rename rm sleep tar time touch touch_nocreate true".split(
    " ",
  ),
);

const cmake: Reader = (cmd) => {
  const { argv } = cmd;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return "a cmake argument is only known at run time";
    if (a === "-E") {
      const sub = argv[i + 1];
      if (sub === undefined && i + 1 < argv.length) return "the cmake -E command is only known at run time";
      if (sub === undefined || !CMAKE_E_DATA.has(sub))
        return `\`cmake -E ${sub ?? "…"}\` is not a cmake -E command capgate knows to run nothing`;
      return undefined;
    }
    if (a === "--build") {
      // `cmake --build dir -- ARGS`: the arguments after `--` go to the native build tool (make).
      const dash = argv.indexOf("--", i);
      return dash === -1 ? undefined : make({ ...cmd, argv: ["make", ...argv.slice(dash + 1)] });
    }
    const d = a === "-D" ? argv[++i] : a.startsWith("-D") ? a.slice(2) : undefined;
    if (a === "-D" && d === undefined) return "a cmake -D value is only known at run time";
    if (d === undefined) continue;
    const eq = d.indexOf("=");
    const key = eq === -1 ? d : d.slice(0, eq);
    const value = eq === -1 ? "" : d.slice(eq + 1);
    if (CMAKE_DATA_KEYS.test(key)) continue;
    if (!key.startsWith("CMAKE_") && plain(value)) continue;
    return `cmake -D${key} is not a cmake setting capgate knows to hold data (it may name a program such as a compiler launcher)`;
  }
  return undefined;
};

/** npm's config options whose value is a program or shell (docs: npm config). */
const NPM_PROGRAM_OPTIONS =
  /^--(script-shell|shell|editor|browser|git|node-options|viewer|call|init-module|onload-script)(=|$)/;
const NPM_DATA_COMMANDS = new Set(
  "install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install ic install-clean isntall-clean install-test it install-ci-test cit test t tst run run-script rum urn start stop restart ls list ll la outdated audit view info show v pack publish version link ln uninstall remove rm r un unlink update up upgrade why explain config c get set cache dedupe ddp doctor fund help login logout adduser whoami prefix root search s se find owner dist-tag deprecate prune rebuild rb shrinkwrap pkg ping token unpublish access team org query sbom diff star stars unstar repo bugs docs home issues hook profile completion help-search exec x find-dupes".split(
    " ",
  ),
);

const npm: Reader = (cmd) => {
  const { argv } = cmd;
  const program = argv.find((a) => a !== undefined && NPM_PROGRAM_OPTIONS.test(a));
  if (program) return `npm ${program.replace(/=.*$/s, "")} names a program npm runs`;
  const op = firstOperand(argv, /^(-w|--workspace|--prefix|-C)$/);
  if (!op) return undefined;
  if (op.value === undefined) return "the npm command is only known at run time";
  if (/^(init|create|innit|new)$/.test(op.value))
    return argv.length > op.index + 1
      ? `npm ${op.value} <initializer> runs the package create-<initializer>`
      : undefined;
  if (op.value === "explore") return "npm explore runs a command in a package's directory";
  if (op.value === "edit") return undefined;
  if (/^(config|c|set)$/.test(op.value)) {
    const key = argv
      .slice(op.index + 1)
      .find((a) => a !== undefined && !/^(set|get|list|ls|delete|edit|fix)$/.test(a) && !a.startsWith("-"));
    if (key !== undefined && NPM_PROGRAM_OPTIONS.test(`--${key.replace(/=.*$/s, "")}`))
      return `npm config sets \`${key.replace(/=.*$/s, "")}\`, a program npm runs later`;
    return undefined;
  }
  if (!NPM_DATA_COMMANDS.has(op.value)) return `\`npm ${op.value}\` is not an npm command capgate knows`;
  return undefined;
};

/** pnpm, yarn and bun run a script of that name — or, failing one, a program: a known program is judged as a command (shell-commands.ts). */
const packageRunner =
  (tool: string, launchers: readonly string[]): Reader =>
  (cmd) => {
    const { argv } = cmd;
    const program = argv.find((a) => a !== undefined && NPM_PROGRAM_OPTIONS.test(a));
    if (program) return `${tool} ${program.replace(/=.*$/s, "")} names a program ${tool} runs`;
    const op = firstOperand(argv, /^(-C|--dir|--filter|-F|--cwd|--workspace|-w)$/);
    if (op?.value !== undefined && launchers.includes(op.value))
      return `\`${tool} ${op.value}\` runs a package or command named in its arguments`;
    return undefined;
  };

/** Package managers whose other subcommands manage packages and environments (`run`/`exec` are peeled wrappers). */
const packageManager =
  (tool: string, launchers: readonly string[]): Reader =>
  (cmd) => {
    const op = firstOperand(cmd.argv);
    if (op?.value !== undefined && launchers.includes(op.value))
      return `\`${tool} ${op.value}\` runs a shell or a command named in its arguments`;
    return undefined;
  };

const DOCKER_LAUNCHERS =
  /^(run|exec|create|attach|debug|container|compose|buildx|builder|plugin|sandbox|mcp|model|agent)$/;
const DOCKER_DATA = new Set(
  "build images image ps pull push tag login logout logs inspect rm rmi stop kill restart start pause unpause version info network volume system context manifest search stats top diff history save load export import port events wait cp commit rename update secret config node service stack swarm trust scout init".split(
    " ",
  ),
);
const COMPOSE_DATA = new Set(
  "up down build ps logs pull push config stop start restart rm images ls version kill pause unpause top port events create cp convert ".split(
    " ",
  ),
);

/** docker/podman: `run`, `exec`, `compose run|exec` start a container that runs a command the policy does not follow. */
const docker: Reader = (cmd) => {
  const op = firstOperand(cmd.argv, /^(-H|--host|-c|--context|--config|-l|--log-level)$/);
  if (!op) return undefined;
  if (op.value === undefined) return `the ${cmd.name} command is only known at run time`;
  if (op.value === "compose" || cmd.name === "docker-compose") {
    const rest = cmd.name === "docker-compose" ? cmd.argv : ["compose", ...cmd.argv.slice(op.index + 1)];
    const sub = firstOperand(
      rest,
      /^(-f|--file|-p|--project-name|--profile|--env-file|--project-directory|--ansi|--progress)$/,
    );
    if (sub?.value === undefined) return sub ? "the compose command is only known at run time" : undefined;
    if (COMPOSE_DATA.has(sub.value)) return undefined;
    return `\`${cmd.name} compose ${sub.value}\` runs a command in a container, which capgate does not follow`;
  }
  if (op.value === "container" || op.value === "buildx" || op.value === "builder") {
    const sub = cmd.argv[op.index + 1];
    if (
      sub !== undefined &&
      /^(ls|list|ps|inspect|logs|rm|prune|stop|kill|build|bake|use|version|du|imagetools|create)$/.test(
        sub,
      ) &&
      !(op.value === "container" && sub === "create")
    )
      return undefined;
  }
  if (DOCKER_LAUNCHERS.test(op.value))
    return `\`${cmd.name} ${op.value}\` runs a command in a container, which capgate does not follow`;
  if (!DOCKER_DATA.has(op.value))
    return `\`${cmd.name} ${op.value}\` is not a ${cmd.name} command capgate knows`;
  return undefined;
};

const KUBECTL_LAUNCHERS = /^(exec|run|debug|attach|plugin|alpha)$/;
const kubectl: Reader = (cmd) => {
  const op = firstOperand(
    cmd.argv,
    /^(-n|--namespace|--context|--cluster|--kubeconfig|-s|--server|--user|--token)$/,
  );
  if (op?.value === undefined) return op ? "the kubectl command is only known at run time" : undefined;
  if (KUBECTL_LAUNCHERS.test(op.value))
    return `\`kubectl ${op.value}\` runs a command in the cluster, which capgate does not follow`;
  if (
    !/^(get|describe|logs|apply|create|delete|edit|explain|config|cluster-info|top|rollout|scale|autoscale|label|annotate|expose|set|patch|replace|diff|version|api-resources|api-versions|auth|certificate|cordon|uncordon|drain|taint|wait|kustomize|completion|port-forward|proxy|cp|events)$/.test(
      op.value,
    )
  )
    return `\`kubectl ${op.value}\` is not a kubectl command capgate knows (kubectl plugins are programs)`;
  return undefined;
};

const GH_DATA = new Set(
  "pr issue repo api run workflow release auth gist label search status secret variable cache ruleset project org attestation completion help version".split(
    " ",
  ),
);
const gh: Reader = (cmd) => {
  const op = firstOperand(cmd.argv, /^(-R|--repo|--hostname)$/);
  if (op?.value === undefined) return op ? "the gh command is only known at run time" : undefined;
  if (op.value === "config") {
    const [verb, key] = cmd.argv.slice(op.index + 1);
    if (
      verb === "set" &&
      !/^(git_protocol|prompt|http_unix_socket|spinner|color_labels|accessible_colors)$/.test(key ?? "")
    )
      return `gh config set ${key ?? ""} sets a program gh runs later (editor, pager, browser)`;
    return undefined;
  }
  if (op.value === "alias") return "gh aliases can be shell commands (`!…`)";
  if (!GH_DATA.has(op.value))
    return `\`gh ${op.value}\` is not a gh command capgate knows (gh extensions and aliases are programs)`;
  if (op.value === "repo" && cmd.argv[op.index + 1] === "view" && cmd.argv.includes("--web"))
    return undefined;
  return undefined;
};

const CARGO_DATA = new Set(
  "build b check c test t run r bench doc d fmt clippy new init add remove rm update search publish install uninstall clean tree metadata fetch vendor package login logout owner yank version help generate-lockfile locate-project pkgid verify-project fix report info rustc rustdoc".split(
    " ",
  ),
);
const cargo: Reader = (cmd) => {
  if (cmd.argv.some((a) => a === undefined || a === "--config" || a?.startsWith("--config=")))
    return "cargo --config KEY=VALUE can name programs cargo runs (target runners, rustc wrappers, linkers)";
  const op = firstOperand(cmd.argv, /^(-Z|--color|-C)$/);
  if (op?.value === undefined) return op ? "the cargo command is only known at run time" : undefined;
  if (/^\+/.test(op.value)) return undefined; // `cargo +nightly build`: a toolchain, then the command
  if (!CARGO_DATA.has(op.value))
    return `\`cargo ${op.value}\` is not a cargo command capgate knows (cargo plugins are programs)`;
  return undefined;
};

const go: Reader = (cmd) => {
  const { argv } = cmd;
  for (const a of argv) {
    if (a === undefined) continue;
    if (/^--?(exec|toolexec)(=|$)/.test(a)) return `go ${a.replace(/=.*$/s, "")} names a program go runs`;
    if (/^--?ldflags=.*extld/.test(a)) return "go -ldflags names an external linker program";
  }
  const op = firstOperand(argv);
  if (op?.value === undefined) return op ? "the go command is only known at run time" : undefined;
  if (op.value === "env" && argv.includes("-w"))
    return "go env -w sets GOFLAGS and other settings that name programs";
  if (op.value === "bug") return "go bug opens a browser";
  if (
    !/^(build|test|run|vet|fmt|mod|get|install|list|clean|doc|version|env|work|generate|tool|fix|help|telemetry)$/.test(
      op.value,
    )
  )
    return `\`go ${op.value}\` is not a go command capgate knows`;
  return undefined;
};

const rustup: Reader = (cmd) => {
  const op = firstOperand(cmd.argv);
  if (op?.value === "run") return "rustup run runs the command given in its arguments";
  return undefined;
};

/** C compilers: `-wrapper` runs its value around every subprogram. */
const cc: Reader = (cmd) =>
  cmd.argv.some((a) => a === undefined || a === "-wrapper")
    ? `${cmd.name} -wrapper runs a program around each compilation step`
    : undefined;

const rustc: Reader = (cmd) =>
  cmd.argv.some(
    (a, i) =>
      a !== undefined &&
      (/^-Clinker=|^-C\s*linker/.test(a) || (a === "-C" && /^linker=/.test(cmd.argv[i + 1] ?? ""))),
  )
    ? "rustc -C linker= names a program rustc runs"
    : undefined;

/** `java -XX:OnError="cmd"` / `-XX:OnOutOfMemoryError="cmd"` run a command. */
const java: Reader = (cmd) =>
  cmd.argv.some((a) => a !== undefined && /^-XX:(OnError|OnOutOfMemoryError)=/.test(a))
    ? "java -XX:OnError / -XX:OnOutOfMemoryError run a command"
    : undefined;

const mvn: Reader = (cmd) =>
  cmd.argv.some((a) => a !== undefined && /(^|:)(exec|antrun)(:|$)/.test(a) && !a.startsWith("-"))
    ? "the maven exec/antrun goals run programs named in their properties"
    : undefined;

/** ssh runs the words after the host as a command line on that host (another machine, or this one). */
const ssh: Reader = (cmd) => {
  const op = firstOperand(cmd.argv, /^-[BbcDEeFIiJLlmOopQRSWw]$/);
  if (!op) return undefined;
  if (op.value === undefined) return "the ssh destination is only known at run time";
  return op.index + 1 < cmd.argv.length
    ? "ssh runs the words after the host as a shell command there, which capgate does not follow"
    : undefined;
};

/** vim and friends: `-c`/`+`/`--cmd`/`-S`/`-s` commands and ex mode (`-e`, `-E`, `-es`) reading its input. */
const vim: Reader = (cmd) => {
  for (const a of cmd.argv.slice(1)) {
    if (a === undefined) return `an argument of ${cmd.name} is only known at run time`;
    if (a === "--") break;
    if (
      /^(-c|--cmd|-S|-s|-e|-E|-es|-Es|-u|--clean)$/.test(a) ||
      /^\+./.test(a) ||
      /^-[a-zA-Z]*[esES]/.test(a)
    )
      return `${cmd.name} runs editor commands from its arguments or input (\`${a}\`), and editor commands can run programs`;
  }
  return cmd.stdin.kind === "pipe" || cmd.stdin.kind === "text"
    ? `${cmd.name} reads editor commands from its input`
    : undefined;
};

/**
 * gdb and lldb read debugger commands (which can run programs) from their input: input the
 * command line gives them (a pipe, a here-document, a file) is unreadable. Their `-ex`/`-o`
 * commands are read by their own readers (shell-commands.ts, shell-launchers.ts).
 */
const debuggerInput: Reader = (cmd) =>
  cmd.stdin.kind === "inherited" || (cmd.stdin.kind === "file" && cmd.stdin.path === "/dev/null")
    ? undefined
    : `${cmd.name} reads debugger commands (which can run programs) from its input`;

/** ripgrep runs a preprocessor (`--pre`) and a hostname program (`--hostname-bin`). */
const rg: Reader = (cmd) => {
  const hit = cmd.argv.find((a) => a !== undefined && /^--(pre|hostname-bin)(=|$)/.test(a));
  return hit ? `rg ${hit.replace(/=.*$/s, "")} names a program rg runs` : undefined;
};

/** awk code runs programs only through `system`, pipes (`print | "cmd"`, `"cmd" | getline`, `|&`) and gawk's `@` calls. */
function awkRuns(code: string): string | undefined {
  if (/\bsystem\b/.test(code)) return "the awk code calls system()";
  if (code.replace(/\|\|/g, "").includes("|")) return "the awk code pipes to or from a command (`|`)";
  if (code.includes("@")) return "the awk code uses gawk's `@` (indirect calls, @load, @include)";
  return undefined;
}

/** Python modules run with `-m` whose arguments are data (their code comes from installed files). */
const PYTHON_DATA_MODULES = new Set(
  "pip venv virtualenv pytest unittest http.server json.tool build twine mypy black ruff flake8 pylint isort coverage pyflakes compileall py_compile ensurepip site pydoc tabnanny tarfile zipfile gzip calendar uvicorn flask django pre_commit poetry pdm hatch tox nox sphinx mkdocs jupyter notebook ipykernel pip_audit bandit pycodestyle pydocstyle yapf autopep8 doctest webbrowser".split(
    " ",
  ),
);

/** Interpreters: a script file is readable; code on the command line or the input is not. */
function interpreter(cmd: ResolvedCommand): string | undefined {
  const sources = codeSources(cmd);
  if (!Array.isArray(sources)) return undefined; // denied as unresolvable
  if (/awk$/.test(cmd.name)) {
    // `awk -f /dev/stdin`: the program file is the input.
    for (let i = 1; i < cmd.argv.length; i++) {
      const a = cmd.argv[i];
      const file =
        a === "-f" || a === "--file"
          ? cmd.argv[i + 1]
          : a?.startsWith("--file=")
            ? a.slice(7)
            : a?.startsWith("-f")
              ? a.slice(2)
              : null;
      if (file !== null && (file === undefined || file === "-" || /^\/+(dev|proc)\//.test(file)))
        return `${cmd.name} would read its program from its input or a descriptor`;
    }
  }
  for (const s of sources) {
    if (isAwkSource(s)) {
      if (s.code !== undefined) {
        const why = awkRuns(s.code);
        if (why) return why;
        continue;
      }
      return `${cmd.name} would read its program from its input`;
    }
    if (s.module !== undefined) {
      if (PYTHON.test(cmd.name) && PYTHON_DATA_MODULES.has(s.module)) continue;
      return `\`${cmd.name} -m ${s.module}\` runs a module capgate does not know to treat its arguments as data`;
    }
    if (s.preload !== undefined) {
      if (/^[\w@./:-]+$/.test(s.preload) && !/^(data|https?|file):/i.test(s.preload)) continue;
      return `${cmd.name} loads \`${s.preload.slice(0, 40)}\` first, which is code rather than a module name`;
    }
    if (s.code !== undefined)
      return `the code given to ${cmd.name} on the command line is in a general-purpose language: capgate reads it for openers, but cannot tell everything it runs`;
    return `${cmd.name} would read its program from its input`;
  }
  return undefined;
}

const READERS: Readonly<Record<string, Reader>> = {
  ...Object.fromEntries(DATA_PROGRAMS.map((name) => [name, data])),
  ...Object.fromEntries(Object.keys(DATA_PROGRAM_NOTES).map((name) => [name, data])),
  ...Object.fromEntries(Object.entries(DATA_PROGRAM_READERS).map(([name, entry]) => [name, entry.read])),
  git: gitUnreadable,
  sed: (cmd) => sedCommandRuns(cmd.argv),
  gsed: (cmd) => sedCommandRuns(cmd.argv),
  make,
  gmake: make,
  cmake,
  npm,
  pnpm: packageRunner("pnpm", ["create", "dlx-create"]),
  yarn: packageRunner("yarn", ["create", "workspaces", "workspace", "node"]),
  bun: (cmd) => interpreter(cmd) ?? packageRunner("bun", ["create", "x", "repl"])(cmd),
  uv: packageManager("uv", ["tool"]),
  poetry: packageManager("poetry", ["shell"]),
  pipenv: packageManager("pipenv", ["shell"]),
  pdm: packageManager("pdm", []),
  conda: packageManager("conda", ["activate"]),
  mamba: packageManager("mamba", ["activate"]),
  docker,
  podman: docker,
  "docker-compose": docker,
  kubectl,
  gh,
  cargo,
  go,
  rustup,
  rustc,
  gcc: cc,
  "g++": cc,
  cc,
  "c++": cc,
  clang: cc,
  "clang++": cc,
  java,
  mvn,
  mvnw: mvn,
  gradle: data,
  gradlew: data,
  ssh,
  vim,
  vi: vim,
  nvim: vim,
  view: vim,
  vimdiff: vim,
  gvim: vim,
  rg,
  wget: (cmd) =>
    cmd.argv.some((a) => a !== undefined && /^--use-askpass(=|$)/.test(a))
      ? "wget --use-askpass names a program wget runs"
      : undefined,
  gdb: debuggerInput,
  "gdb-multiarch": debuggerInput,
  lldb: debuggerInput,
};

/**
 * Commands the walk reads itself (shell-commands.ts): shells (`-c` strings and here-documents
 * are parsed; script files are §8), `eval`, `trap`, `source`, `find -exec`, and the launchers
 * with readers of their own. What they run is judged as its own command.
 */
const WALKED = new Set([
  "eval",
  "find",
  "trap",
  "source",
  ".",
  "coproc",
  "sg",
  "newgrp",
  "valgrind",
  "start-stop-daemon",
  "capsh",
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
  "rr",
  "tsp",
  "command",
  "builtin",
  "exec",
]);

/** Is `name` a program capgate has an entry for (data, a reader, a wrapper, a shell, an interpreter, a known runner)? */
export function isKnownProgram(name: string): boolean {
  return (
    Object.hasOwn(READERS, name) ||
    Object.hasOwn(RUNNERS, name) ||
    Object.hasOwn(WRAPPERS, name) ||
    Object.hasOwn(WRAPPER_ALIASES, name) ||
    SHELLS.has(name) ||
    WALKED.has(name) ||
    isInterpreterName(name)
  );
}

/**
 * Why capgate cannot read completely what `cmd` runs, or undefined when it can: the part
 * that could not be read and why, for the reason shown to the model or the approver.
 */
export function unreadablePart(cmd: ResolvedCommand): string | undefined {
  const { name } = cmd;
  if (Object.hasOwn(READERS, name)) return READERS[name]!(cmd);
  if (SHELLS.has(name) || WALKED.has(name)) return undefined;
  const tool = Object.hasOwn(WRAPPER_ALIASES, name) ? WRAPPER_ALIASES[name]! : name;
  if (Object.hasOwn(RUNNERS, tool) && !Object.hasOwn(WRAPPERS, tool)) return RUNNERS[tool];
  if (Object.hasOwn(WRAPPERS, tool)) return undefined;
  if (isInterpreterName(name) || /^(tclsh|wish)\d/.test(name)) return interpreter(cmd);
  if (Object.hasOwn(RUNNERS, name)) return RUNNERS[name];
  if (isProjectFile(cmd.words[0]?.value)) return undefined;
  return `\`${name}\` is not a program capgate knows to treat its arguments as data: it may run its arguments or its input as commands`;
}

/**
 * A program named by a relative path inside the project (`./gradlew`, `bin/dev`,
 * `node_modules/.bin/vitest`): a file, whose behaviour is §8's business like `bash build.sh`.
 * A path that climbs out (`../x`) or starts at `/` is judged by its name.
 */
function isProjectFile(word: string | undefined): boolean {
  if (word === undefined || !word.includes("/") || word.startsWith("/") || word.startsWith("~")) return false;
  return !word.split("/").includes("..");
}

/** Commands of pnpm, yarn and bun themselves (and their aliases): never the program fallback. */
const PACKAGE_RUNNER_COMMANDS = new Set(
  "add i install update up upgrade remove rm uninstall un link ln unlink import rebuild rb prune fetch patch patch-commit patch-remove audit list ls ll la outdated why licenses run test t tst start stop restart exec dlx create publish pack root bin setup init deploy env config c doctor store server recursive multi m install-test it dedupe approve-builds ignored-builds cat-file cat-index find-hash self-update help version login logout whoami owner view info dist-tag deprecate search workspace workspaces global node x build repl pm cache plugin set constraints npm explain dlx".split(
    " ",
  ),
);

/**
 * `pnpm tool args`, `yarn tool args`, `bun tool args`: a name that is not the runner's own
 * command runs the package script of that name — or, when there is none, the program
 * (pnpm runs any program on PATH). A name capgate knows as a program is judged as that
 * command; any other is read as a script name (the package.json file, §8).
 */
export function packageFallback(cmd: ResolvedCommand): Continuation[] {
  if (!/^(pnpm|yarn|bun)$/.test(cmd.name)) return [];
  const op = firstOperand(cmd.argv, /^(-C|--dir|--filter|-F|--cwd)$/);
  if (op?.value === undefined || PACKAGE_RUNNER_COMMANDS.has(op.value) || !isKnownProgram(op.value))
    return [];
  return [{ kind: "command", words: cmd.words.slice(op.index), stdin: cmd.stdin }];
}

/**
 * Are the words xargs appends to `cmd` data? For a data program, and for git after a
 * subcommand whose arguments are paths or revisions (`xargs git add`); not where they could
 * become code, a command or a config key (`xargs sed`, `xargs git config`).
 */
export function takesDataArguments(cmd: ResolvedCommand): boolean {
  if (Object.hasOwn(READERS, cmd.name) && READERS[cmd.name] === data) return true;
  if (cmd.name !== "git") return false;
  const sub = gitSubcommand(cmd.argv);
  return (
    sub !== undefined &&
    /^(add|rm|mv|checkout|restore|diff|log|show|blame|ls-files|grep|status|reset|stage|annotate|cat-file|rev-parse|branch|tag|check-ignore|check-attr)$/.test(
      sub,
    )
  );
}

/** Variables known to hold data for every program that reads them (names, places, switches, dates). */
const DATA_VARIABLES =
  /^(PATH|HOME|PWD|OLDPWD|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|USER|LOGNAME|TMPDIR|TEMP|TMP|NODE_ENV|CI|DEBUG|PORT|HOST|HOSTNAME|GOPATH|GOBIN|GOROOT|GOOS|GOARCH|GOPROXY|GOPRIVATE|CGO_ENABLED|JAVA_HOME|ANDROID_HOME|PYTHONPATH|VIRTUAL_ENV|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONHASHSEED|PYTHONIOENCODING|RUST_LOG|RUST_BACKTRACE|CARGO_HOME|RUSTUP_HOME|NO_COLOR|FORCE_COLOR|COLUMNS|LINES|GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_TERMINAL_PROMPT|GIT_TRACE[A-Z0-9_]*|GIT_CONFIG_NOSYSTEM|GIT_OPTIONAL_LOCKS|GIT_LITERAL_PATHSPECS|GIT_CEILING_DIRECTORIES|GIT_MERGE_AUTOEDIT|GIT_REFLOG_ACTION|NPM_TOKEN|NODE_AUTH_TOKEN|GITHUB_TOKEN|GH_TOKEN|AWS_REGION|AWS_PROFILE|AWS_DEFAULT_REGION|KUBECONFIG|DOCKER_BUILDKIT|COMPOSE_PROJECT_NAME|TS_NODE_PROJECT|VITEST|JEST_WORKER_ID|CAPGATE_HOME)$/;

/**
 * Why a variable put in a program's environment cannot be read as data, or undefined. A
 * plain one-word value is data; a value that could be a command line (blanks, shell
 * characters) or is only known at run time is data only for variables known to hold data.
 * Program variables (EDITOR, GIT_SSH_COMMAND …) are read as command lines already, and a
 * git config entry in the environment (GIT_CONFIG_KEY_n, GIT_CONFIG_PARAMETERS) must name a
 * data key, as `git -c` must.
 */
export function assignmentUnreadable(a: Assignment): string | undefined {
  const { name, value } = a;
  if (name === undefined || value === undefined) return undefined;
  // git's ext:: transport runs its URL as a command; GIT_ALLOW_PROTOCOL=ext switches it on.
  if (
    value.value !== undefined &&
    (/ext::/i.test(value.value) || (name === "GIT_ALLOW_PROTOCOL" && /(^|:)ext(:|$)/i.test(value.value)))
  )
    return `${name} sets git's ext:: transport, whose URL git runs as a command`;
  if (/^GIT_CONFIG_KEY_\d+$/.test(name)) {
    if (value.value === undefined) return `the git config key in ${name} is only known at run time`;
    return gitKeyUnreadable(value.value, undefined, name);
  }
  if (name === "GIT_CONFIG_PARAMETERS") {
    if (value.value === undefined) return "GIT_CONFIG_PARAMETERS is only known at run time";
    for (const m of value.value.matchAll(/'((?:[^']|'\\'')*)'/g)) {
      const item = m[1]!.replace(/'\\''/g, "'");
      const eq = item.indexOf("=");
      const why = gitKeyUnreadable(eq === -1 ? item : item.slice(0, eq), undefined, name);
      if (why) return why;
    }
    return undefined;
  }
  // LESS and MANOPT are read by shell-indirection.ts (less options, man options).
  if (isProgramVariable(name) || DATA_VARIABLES.test(name) || name === "LESS" || name === "MANOPT")
    return undefined;
  if (value.value === undefined)
    return `the value of ${name} is only known at run time, and a program may run it as a command`;
  if (plain(value.value.replace(/[=:,/.@%+-]/g, ""))) return undefined;
  return `${name} is set to \`${value.value.slice(0, 40)}\`, which a program reading ${name} may run as a command`;
}
