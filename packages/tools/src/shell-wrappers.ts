/**
 * The data behind wrapper peeling: which commands run another command given as their
 * arguments, and how their options are shaped. Read by shell-commands.ts.
 */

/**
 * Commands that run another command given as their arguments. `value` options take the
 * next word (or `--opt=value`/`-ovalue`); `script` options take a string run by a shell;
 * `stop` options mean nothing is run (`command -v`); `operands` are positional words
 * before the command (timeout's duration); `assignments` lets `VAR=x` words through.
 */
export interface WrapperSpec {
  value?: readonly string[];
  script?: readonly string[];
  stop?: readonly string[];
  operands?: number;
  assignments?: boolean;
  /** For runners: the subcommands that run a program (`uv run`, `pnpm exec`). */
  subcommands?: readonly string[];
}

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    value: ["-u", "--unset", "-C", "--chdir", "-P"],
    script: ["-S", "--split-string"],
    stop: [],
    assignments: true,
  },
  command: { stop: ["-v", "-V"] },
  builtin: {},
  nohup: {},
  exec: { value: ["-a"] },
  timeout: { value: ["-s", "--signal", "-k", "--kill-after"], operands: 1 },
  sudo: {
    value: [
      "-u",
      "--user",
      "-g",
      "--group",
      "-C",
      "--close-from",
      "-D",
      "--chdir",
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-T",
      "--command-timeout",
      "-U",
      "--other-user",
      "-R",
      "--chroot",
      "--host",
    ],
    stop: ["-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V", "--version", "-e", "--edit"],
    assignments: true,
  },
  doas: { value: ["-u", "-C"] },
  nice: { value: ["-n", "--adjustment"] },
  ionice: {
    value: ["-c", "--class", "-n", "--classdata", "-P", "--pgid", "-u", "--uid"],
    stop: ["-p", "--pid"],
  },
  stdbuf: { value: ["-i", "--input", "-o", "--output", "-e", "--error"] },
  time: { value: ["-f", "--format", "-o", "--output"] },
  xargs: {
    value: [
      "-a",
      "--arg-file",
      "-d",
      "--delimiter",
      "-E",
      "-I",
      "-L",
      "--max-lines",
      "-n",
      "--max-args",
      "-P",
      "--max-procs",
      "-s",
      "--max-chars",
      "--process-slot-var",
    ],
  },
  setsid: {},
  chronic: {},
  unbuffer: {},
  caffeinate: { value: ["-t", "-w"] },
  strace: { value: ["-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P"] },
  ltrace: { value: ["-o", "-e", "-p", "-s", "-u", "-a", "-n", "-A", "-D", "-F", "-l", "-x"] },
  flock: {
    value: ["-w", "--timeout", "-E", "--conflict-exit-code"],
    script: ["-c", "--command"],
    operands: 1,
  },
  chrt: { value: ["-T", "-P", "-D"], stop: ["-p", "--pid"], operands: 1 },
  taskset: { stop: ["-p", "--pid"], operands: 1 },
  su: { value: ["-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w"], script: ["-c", "--command"] },
  runuser: { value: ["-u", "--user", "-s", "--shell", "-g", "--group", "-G"], script: ["-c", "--command"] },
  script: { value: ["-E", "--echo", "-I", "-O", "-T", "-B", "-m"], script: ["-c", "--command"] },
  "nix-shell": { value: ["-p", "--packages", "-A", "--attr", "-I"], script: ["--run", "--command"] },
  npx: { value: ["-p", "--package"], script: ["-c", "--call"] },
  bunx: { value: ["-p", "--package"] },
  uv: {
    value: ["--with", "--python", "-p", "--directory", "--project", "--package", "--env-file"],
    subcommands: ["run"],
  },
  uvx: { value: ["--with", "--python", "-p", "--from"] },
  poetry: { subcommands: ["run"] },
  pipenv: { subcommands: ["run"] },
  pdm: { subcommands: ["run"] },
  pnpm: { value: ["-C", "--dir", "--filter", "-F"], subcommands: ["exec", "dlx"] },
  yarn: { subcommands: ["exec", "dlx"] },
  npm: { value: ["-w", "--workspace", "--package"], script: ["-c", "--call"], subcommands: ["exec", "x"] },
  conda: { value: ["-n", "--name", "-p", "--prefix"], subcommands: ["run"] },
  mamba: { value: ["-n", "--name", "-p", "--prefix"], subcommands: ["run"] },
  busybox: {},
  "ssh-agent": { value: ["-a", "-E", "-t", "-P", "-O"], stop: ["-k", "-l"] },
  "dbus-launch": { value: ["--config-file", "--binary-syntax"] },
  "dbus-run-session": { value: ["--config-file", "--dbus-daemon"] },
  "xvfb-run": {
    value: [
      "-n",
      "--server-num",
      "-s",
      "--server-args",
      "-f",
      "--auth-file",
      "-e",
      "--error-file",
      "-p",
      "--xauth-protocol",
      "-w",
      "--wait",
    ],
  },
};

/** Shells whose `-c` string (or here-document on stdin) is parsed again and checked. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "rbash",
  "fish",
  "yash",
  "posh",
]);
