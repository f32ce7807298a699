/**
 * The data behind wrapper peeling: which commands run another command given as their
 * arguments, and each one's option table as its getopt sees it (which options take a
 * value, their long names, whether the tool permutes). shell-getopt.ts reads any of them
 * the same way; shell-commands.ts turns the reading into the inner command. Every entry
 * carries command lines that must reach the opener behind it (`mustMatch`, each must be
 * denied by the `gui.xdg-open` rule) and ordinary uses that must stay allowed
 * (`mustNotMatch`), checked whenever a policy loads.
 */
import type { ArgKind, OptionRole, OptionSpec, OptionTable } from "../parse/shell-getopt.js";

export interface WrapperSpec {
  readonly options: OptionTable;
  /** Operands before the command: timeout's duration, flock's file, chroot's new root. */
  readonly operands?: number;
  /** An operand before the options that is there only when it looks like this (setarch's arch). */
  readonly leadingOperand?: RegExp;
  /** An operand after the options that is there only when it looks like this (chrt's priority). */
  readonly optionalOperand?: RegExp;
  /**
   * What the words after the operands are: a command (default); arguments of the user's
   * shell (su); one shell string, the rest its `$0…` (sg); all of them joined into one
   * shell string (watch).
   */
  readonly runs?: "command" | "shell-args" | "shell-string" | "shell-joined";
  /** With no command: nothing runs (default), or an interactive shell reads standard input. */
  readonly noCommand?: "nothing" | "shell";
  /** `VAR=value` words may come before the command (env, sudo). */
  readonly assignments?: boolean;
  /** A lone `-` operand is an option (env's `-` = `-i`, su's `-` = `-l`). */
  readonly dashIsOption?: boolean;
  /** For runners: the subcommands that run a program (`uv run`, `pnpm exec`). */
  readonly subcommands?: readonly string[];
  /** xargs: words read at run time are appended to the command (or replace `-I` marks). */
  readonly appendsData?: boolean;
  /** A mark the tool replaces with data at run time in the command's words (entr's `/_`). */
  readonly dataMark?: string;
  /** flock: after the operand, exactly this word makes the next one a shell string. */
  readonly postOperandScript?: readonly string[];
  /** Command lines that must reach the opener behind the wrapper (denied as gui.xdg-open). */
  readonly mustMatch: readonly string[];
  /** Ordinary uses that must be allowed. */
  readonly mustNotMatch: readonly string[];
}

const o = (arg: ArgKind, ...names: string[]): OptionSpec => ({ names, arg });
const flag = (...names: string[]): OptionSpec => ({ names, arg: "none" });
const val = (...names: string[]): OptionSpec => ({ names, arg: "required" });
const opt = (...names: string[]): OptionSpec => ({ names, arg: "optional" });
const role = (r: OptionRole, arg: ArgKind, ...names: string[]): OptionSpec => ({ names, arg, role: r });
const stop = (...names: string[]): OptionSpec => role("stop", "none", ...names);
const HELP = stop("-h", "--help");
const HELP_LONG = stop("--help");
const VERSION = stop("-V", "--version");
const VERSION_LONG = stop("--version");

const U = "https://example.com";

const BASE_WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  setpriv: {
    options: {
      options: [
        flag("-d", "--dump"),
        flag("--nnp", "--no-new-privs"),
        val("--ambient-caps", "--inh-caps", "--bounding-set", "--groups", "--securebits", "--pdeathsig"),
        val("--regid", "--reuid", "--rgid", "--ruid", "--egid", "--euid"),
        val("--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"),
        flag("--keep-groups", "--clear-groups", "--init-groups", "--reset-env"),
        HELP,
        VERSION,
      ],
    },
    mustMatch: [
      `setpriv xdg-open ${U}`,
      `setpriv --nnp --reuid=1000 xdg-open ${U}`,
      `setpriv --no-new -- xdg-open ${U}`,
    ],
    mustNotMatch: ["setpriv --dump", "setpriv --nnp make test"],
  },
  env: {
    options: {
      options: [
        flag("-i", "--ignore-environment"),
        flag("-0", "--null"),
        val("-u", "--unset"),
        val("-C", "--chdir"),
        role("split", "required", "-S", "--split-string"),
        opt("--block-signal"),
        opt("--default-signal"),
        opt("--ignore-signal"),
        flag("--list-signal-handling"),
        flag("-v", "--debug"),
        HELP_LONG,
        VERSION_LONG,
      ],
    },
    assignments: true,
    dashIsOption: true,
    mustMatch: [
      `env xdg-open ${U}`,
      `env --chd=/tmp xdg-open ${U}`,
      `env -S'xdg-open ${U}'`,
      `env -S '-i xdg-open ${U}'`,
      `env - A=1 xdg-open ${U}`,
      `env -u X -- xdg-open ${U}`,
    ],
    mustNotMatch: ["env", "env CI=1 npm test", "env -u HOME --chdir=/tmp ls", "env -S 'echo a\\_b'"],
  },
  command: {
    options: { options: [flag("-p"), stop("-v"), stop("-V")], abbreviations: false },
    mustMatch: [`command xdg-open ${U}`, `command -p xdg-open ${U}`, `command -- xdg-open ${U}`],
    mustNotMatch: ["command -v xdg-open", "command -V open", "command ls -la"],
  },
  builtin: {
    options: { options: [], abbreviations: false },
    mustMatch: [`builtin eval 'xdg-open ${U}'`, `builtin command xdg-open ${U}`],
    mustNotMatch: ["builtin echo open", "builtin cd src"],
  },
  exec: {
    options: { options: [flag("-c"), flag("-l"), val("-a")], abbreviations: false },
    mustMatch: [`exec xdg-open ${U}`, `exec -a name xdg-open ${U}`, `exec -cl -- xdg-open ${U}`],
    mustNotMatch: ["exec 3<&-", "exec ls", "exec >out.log 2>&1"],
  },
  nohup: {
    options: { options: [HELP_LONG, VERSION_LONG] },
    mustMatch: [`nohup xdg-open ${U} &`, `nohup -- xdg-open ${U}`],
    mustNotMatch: ["nohup make build &"],
  },
  timeout: {
    options: {
      options: [
        val("-k", "--kill-after"),
        val("-s", "--signal"),
        flag("-f", "--foreground"),
        flag("-p", "--preserve-status"),
        flag("-v", "--verbose"),
        HELP_LONG,
        VERSION_LONG,
      ],
    },
    operands: 1,
    mustMatch: [
      `timeout 5 xdg-open ${U}`,
      `timeout --sig=KILL --kill=1 5s xdg-open ${U}`,
      `timeout -sKILL -- 5 xdg-open ${U}`,
      `timeout --fore 5 xdg-open ${U}`,
    ],
    mustNotMatch: ["timeout 5 make test", "timeout --preserve-status 10 npm test"],
  },
  sudo: {
    options: {
      options: [
        flag("-A", "--askpass"),
        val("-a"),
        flag("-B", "--bell"),
        flag("-b", "--background"),
        val("-C", "--close-from"),
        val("-c"),
        val("-D", "--chdir"),
        o("none", "-E"),
        opt("--preserve-env"),
        role("stop", "none", "-e", "--edit"),
        val("-g", "--group"),
        flag("-H", "--set-home"),
        opt("-h", "--host"),
        stop("--help"),
        role("shell", "none", "-i", "--login"),
        stop("-K", "--remove-timestamp"),
        flag("-k", "--reset-timestamp"),
        stop("-l", "--list"),
        flag("-N", "--no-update"),
        flag("-n", "--non-interactive"),
        flag("-P", "--preserve-groups"),
        val("-p", "--prompt"),
        val("-R", "--chroot"),
        val("-r", "--role"),
        flag("-S", "--stdin"),
        role("shell", "none", "-s", "--shell"),
        val("-T", "--command-timeout"),
        val("-t", "--type"),
        val("-U", "--other-user"),
        val("-u", "--user"),
        VERSION,
        stop("-v", "--validate"),
      ],
    },
    assignments: true,
    mustMatch: [
      `sudo xdg-open ${U}`,
      `sudo -u alice -E xdg-open ${U}`,
      `sudo --us=alice --preserve-e xdg-open ${U}`,
      `sudo -s -- xdg-open ${U}`,
      `sudo DISPLAY=:0 xdg-open ${U}`,
      `sudo -s <<'EOF'\nxdg-open ${U}\nEOF`,
    ],
    mustNotMatch: ["sudo -u nobody ls", "sudo -l", "sudo -v", "sudo apt-get update"],
  },
  doas: {
    options: {
      options: [val("-a"), stop("-C"), stop("-L"), flag("-n"), role("shell", "none", "-s"), val("-u")],
      abbreviations: false,
    },
    mustMatch: [`doas xdg-open ${U}`, `doas -u alice -n xdg-open ${U}`],
    mustNotMatch: ["doas -u nobody ls"],
  },
  nice: {
    options: { options: [val("-n", "--adjustment"), HELP_LONG, VERSION_LONG], numericOption: true },
    mustMatch: [
      `nice xdg-open ${U}`,
      `nice -n 10 xdg-open ${U}`,
      `nice -5 xdg-open ${U}`,
      `nice --adj=5 xdg-open ${U}`,
    ],
    mustNotMatch: ["nice -n 10 make -j2", "nice"],
  },
  ionice: {
    options: {
      options: [
        val("-c", "--class"),
        val("-n", "--classdata"),
        role("stop", "required", "-p", "--pid"),
        role("stop", "required", "-P", "--pgid"),
        flag("-t", "--ignore"),
        role("stop", "required", "-u", "--uid"),
        HELP,
        VERSION,
      ],
    },
    mustMatch: [`ionice -c 3 xdg-open ${U}`, `ionice --class=idle --classd=7 xdg-open ${U}`],
    mustNotMatch: ["ionice -c3 make", "ionice -p 1"],
  },
  stdbuf: {
    options: {
      options: [val("-i", "--input"), val("-o", "--output"), val("-e", "--error"), HELP_LONG, VERSION_LONG],
    },
    mustMatch: [`stdbuf -oL xdg-open ${U}`, `stdbuf --out=L --err 0 xdg-open ${U}`],
    mustNotMatch: ["stdbuf -oL tail -f log.txt"],
  },
  time: {
    options: {
      options: [
        flag("-a", "--append"),
        val("-f", "--format"),
        val("-o", "--output"),
        flag("-p", "--portability"),
        flag("-q", "--quiet"),
        flag("-v", "--verbose"),
        HELP_LONG,
        stop("-V", "--version"),
      ],
    },
    mustMatch: [`time xdg-open ${U}`, `time -p xdg-open ${U}`, `time --form=%e -o t.txt xdg-open ${U}`],
    mustNotMatch: ["time make", "time -p npm test"],
  },
  xargs: {
    options: {
      options: [
        flag("-0", "--null"),
        val("-a", "--arg-file"),
        val("-d", "--delimiter"),
        val("-E"),
        opt("-e", "--eof"),
        role("replace", "required", "-I"),
        { names: ["-i", "--replace"], arg: "optional", role: "replace", note: "{}" },
        val("-L"),
        opt("-l", "--max-lines"),
        val("-n", "--max-args"),
        flag("-o", "--open-tty"),
        flag("-p", "--interactive"),
        val("-P", "--max-procs"),
        val("--process-slot-var"),
        flag("-r", "--no-run-if-empty"),
        val("-s", "--max-chars"),
        flag("--show-limits"),
        flag("-t", "--verbose"),
        flag("-x", "--exit"),
        HELP_LONG,
        VERSION_LONG,
      ],
    },
    appendsData: true,
    mustMatch: [
      `echo ${U} | xargs xdg-open`,
      `xargs -I{} -n 1 xdg-open {} < urls.txt`,
      `xargs --max-a=1 xdg-open < u`,
    ],
    mustNotMatch: [
      "find . -name '*.o' -print0 | xargs -0 rm --",
      "git ls-files | xargs wc -l",
      "xargs -I{} cp {} out/ < list",
    ],
  },
  setsid: {
    options: { options: [flag("-c", "--ctty"), flag("-f", "--fork"), flag("-w", "--wait"), HELP, VERSION] },
    mustMatch: [`setsid xdg-open ${U}`, `setsid --fo -w xdg-open ${U}`],
    mustNotMatch: ["setsid -w make"],
  },
  flock: {
    options: {
      options: [
        flag("-s", "--shared"),
        flag("-x", "-e", "--exclusive"),
        flag("-u", "--unlock"),
        flag("-n", "--nb", "--nonblock"),
        val("-w", "--wait", "--timeout"),
        val("-E", "--conflict-exit-code"),
        flag("-o", "--close"),
        flag("-F", "--no-fork"),
        flag("--verbose"),
        role("script", "required", "-c", "--command"),
        HELP,
        VERSION,
      ],
    },
    operands: 1,
    postOperandScript: ["-c", "--command"],
    mustMatch: [
      `flock /tmp/lock -c 'xdg-open ${U}'`,
      `flock -n /tmp/lock xdg-open ${U}`,
      `flock --time 3 /tmp/lock --command 'xdg-open ${U}'`,
    ],
    mustNotMatch: ["flock /tmp/build.lock make", "flock -n 9"],
  },
  chrt: {
    options: {
      options: [
        flag("-a", "--all-tasks"),
        flag("-b", "--batch"),
        flag("-d", "--deadline"),
        flag("-e", "--ext"),
        flag("-f", "--fifo"),
        flag("-i", "--idle"),
        stop("-m", "--max"),
        flag("-o", "--other"),
        stop("-p", "--pid"),
        flag("-r", "--rr"),
        flag("-R", "--reset-on-fork"),
        val("-T", "--sched-runtime"),
        val("-P", "--sched-period"),
        val("-D", "--sched-deadline"),
        flag("-v", "--verbose"),
        HELP,
        VERSION,
      ],
    },
    optionalOperand: /^-?\d+$/,
    mustMatch: [`chrt -o 0 xdg-open ${U}`, `chrt --idle 0 xdg-open ${U}`, `chrt -b xdg-open ${U}`],
    mustNotMatch: ["chrt -b 0 make", "chrt -p 1"],
  },
  taskset: {
    options: {
      options: [flag("-a", "--all-tasks"), stop("-p", "--pid"), flag("-c", "--cpu-list"), HELP, VERSION],
    },
    operands: 1,
    mustMatch: [`taskset 1 xdg-open ${U}`, `taskset -c 0 xdg-open ${U}`, `taskset --cpu 0-1 xdg-open ${U}`],
    mustNotMatch: ["taskset -c 0 make", "taskset -p 1"],
  },
  chroot: {
    options: { options: [val("--groups"), val("--userspec"), flag("--skip-chdir"), HELP_LONG, VERSION_LONG] },
    operands: 1,
    noCommand: "shell",
    mustMatch: [`chroot / xdg-open ${U}`, `chroot --user=0:0 / xdg-open ${U}`],
    mustNotMatch: ["chroot /srv/root ls"],
  },
  unshare: {
    options: {
      options: [
        opt("-m", "--mount"),
        opt("-u", "--uts"),
        opt("-i", "--ipc"),
        opt("-n", "--net"),
        opt("-p", "--pid"),
        opt("-U", "--user"),
        opt("-C", "--cgroup"),
        opt("-T", "--time"),
        flag("-f", "--fork"),
        opt("--kill-child"),
        opt("--mount-proc"),
        opt("--mount-binfmt"),
        val("--map-user"),
        val("--map-group"),
        flag("-r", "--map-root-user"),
        flag("-c", "--map-current-user"),
        flag("--map-auto"),
        val("--map-users"),
        val("--map-groups"),
        val("--propagation"),
        val("--setgroups"),
        flag("--keep-caps"),
        val("-R", "--root"),
        val("-w", "--wd"),
        val("-S", "--setuid"),
        val("-G", "--setgid"),
        val("--monotonic"),
        val("--boottime"),
        HELP,
        VERSION,
      ],
    },
    noCommand: "shell",
    mustMatch: [`unshare -r xdg-open ${U}`, `unshare --map-root --net xdg-open ${U}`],
    mustNotMatch: ["unshare -r id"],
  },
  nsenter: {
    options: {
      options: [
        flag("-a", "--all"),
        val("-t", "--target"),
        opt("-m", "--mount"),
        opt("-u", "--uts"),
        opt("-i", "--ipc"),
        opt("-n", "--net"),
        opt("-p", "--pid"),
        opt("-C", "--cgroup"),
        opt("-U", "--user"),
        opt("-T", "--time"),
        val("-S", "--setuid"),
        val("-G", "--setgid"),
        flag("--preserve-credentials"),
        flag("--keep-caps"),
        flag("--user-parent"),
        opt("-r", "--root"),
        opt("-w", "--wd"),
        val("-W", "--wdns"),
        flag("-e", "--env"),
        flag("-F", "--no-fork"),
        flag("-Z", "--follow-context"),
        HELP,
        VERSION,
      ],
    },
    noCommand: "shell",
    mustMatch: [`nsenter -t 1 -m xdg-open ${U}`, `nsenter --tar 1 --all xdg-open ${U}`],
    mustNotMatch: ["nsenter -t 1 -n ip addr"],
  },
  prlimit: {
    options: {
      options: [
        role("stop", "required", "-p", "--pid"),
        val("-o", "--output"),
        flag("--noheadings"),
        flag("--raw"),
        flag("--verbose"),
        ...[
          "c:core",
          "d:data",
          "e:nice",
          "f:fsize",
          "i:sigpending",
          "l:memlock",
          "m:rss",
          "n:nofile",
          "q:msgqueue",
          "r:rtprio",
          "s:stack",
          "t:cpu",
          "u:nproc",
          "v:as",
          "x:locks",
          "y:rttime",
        ].map((p) => opt(`-${p[0]}`, `--${p.slice(2)}`)),
        HELP,
        VERSION,
      ],
    },
    mustMatch: [`prlimit --nofile=1024 xdg-open ${U}`, `prlimit --as=1000000 -- xdg-open ${U}`],
    mustNotMatch: ["prlimit --nofile=1024 make", "prlimit -p 1"],
  },
  setarch: {
    options: {
      options: [
        flag("-B", "--32bit"),
        flag("-F", "--fdpic-funcptrs"),
        flag("-I", "--short-inode"),
        flag("-L", "--addr-compat-layout"),
        flag("-R", "--addr-no-randomize"),
        flag("-S", "--whole-seconds"),
        flag("-T", "--sticky-timeouts"),
        flag("-X", "--read-implies-exec"),
        flag("-Z", "--mmap-page-zero"),
        flag("-3", "--3gb"),
        flag("--4gb"),
        flag("--uname-2.6"),
        flag("-v", "--verbose"),
        stop("--list"),
        role("stop", "optional", "--show"),
        HELP,
        VERSION,
      ],
    },
    leadingOperand: /^[^-]/,
    noCommand: "shell",
    mustMatch: [
      `setarch x86_64 xdg-open ${U}`,
      `setarch x86_64 -R xdg-open ${U}`,
      `setarch -R xdg-open ${U}`,
    ],
    mustNotMatch: ["setarch x86_64 -R ./test-binary", "setarch --list"],
  },
  su: {
    options: {
      permute: true,
      options: [
        role("script", "required", "-c", "--command"),
        role("script", "required", "--session-command"),
        flag("-f", "--fast"),
        val("-g", "--group"),
        val("-G", "--supp-group"),
        flag("-l", "--login"),
        flag("-m", "-p", "--preserve-environment"),
        flag("-P", "--pty"),
        role("program", "required", "-s", "--shell"),
        val("-w", "--whitelist-environment"),
        HELP,
        VERSION,
      ],
    },
    dashIsOption: true,
    operands: 1,
    runs: "shell-args",
    noCommand: "shell",
    mustMatch: [
      `su -c 'xdg-open ${U}' alice`,
      `su alice -c 'xdg-open ${U}'`,
      `su - alice --comm='xdg-open ${U}'`,
      `su alice -- -c 'xdg-open ${U}'`,
      `su alice -s /usr/bin/xdg-open`,
    ],
    mustNotMatch: ["su -c 'make install' root", "su alice -c ls"],
  },
  script: {
    options: {
      permute: true,
      options: [
        flag("-a", "--append"),
        val("-B", "--log-io"),
        role("script", "required", "-c", "--command"),
        val("-E", "--echo"),
        flag("-e", "--return"),
        flag("-f", "--flush"),
        flag("--force"),
        val("-I", "--log-in"),
        val("-O", "--log-out"),
        val("-o", "--output-limit"),
        val("-m", "--logging-format"),
        flag("-q", "--quiet"),
        val("-T", "--log-timing"),
        opt("-t", "--timing"),
        HELP,
        VERSION,
      ],
    },
    operands: 1,
    noCommand: "shell",
    mustMatch: [`script -qc 'xdg-open ${U}' /dev/null`, `script /dev/null -q --comm 'xdg-open ${U}'`],
    mustNotMatch: ["script -q -c 'make test' build.log"],
  },
  strace: {
    options: {
      options: [
        val("-a", "--columns"),
        flag("-A", "--output-append-mode"),
        val("-b", "--detach-on"),
        flag("-c", "--summary-only"),
        flag("-C", "--summary"),
        flag("-d", "--debug"),
        opt("-D", "--daemonize"),
        val("-e"),
        val(
          "--trace",
          "--signal",
          "--status",
          "--abbrev",
          "--verbose",
          "--raw",
          "--read",
          "--write",
          "--fault",
          "--inject",
          "--quiet",
          "--decode-pids",
          "--kvm",
        ),
        val("-E", "--env"),
        flag("-f", "--follow-forks"),
        flag("--output-separately"),
        flag("-F"),
        HELP,
        flag("-i", "--instruction-pointer"),
        val("-I", "--interruptible"),
        flag("-k", "--stack-trace"),
        flag("-n", "--syscall-number"),
        role("output-pipe", "required", "-o", "--output"),
        val("-O", "--summary-syscall-overhead"),
        val("-p", "--attach"),
        val("-P", "--trace-path"),
        flag("-q"),
        opt("-r", "--relative-timestamps"),
        val("-s", "--string-limit"),
        val("-S", "--summary-sort-by"),
        opt("-t", "--absolute-timestamps", "--timestamps"),
        opt("-T", "--syscall-times"),
        val("-u", "--user"),
        val("-U", "--summary-columns"),
        flag("-v", "--no-abbrev"),
        VERSION,
        flag("-w", "--summary-wall-clock"),
        opt("-x", "--strings-in-hex"),
        val("-X", "--const-print-style"),
        opt("-y", "--decode-fds"),
        flag("-Y", "--decode-pids=comm"),
        flag("-z", "--successful-only"),
        flag("-Z", "--failed-only"),
        flag("--seccomp-bpf", "--kill-on-exit", "--tips", "--always-show-pid", "--pidns-translation"),
        opt("--secontext"),
      ],
    },
    mustMatch: [
      `strace -f -o /dev/null xdg-open ${U}`,
      `strace -e trace=execve -- xdg-open ${U}`,
      `strace -o '|xdg-open ${U}' true`,
      `strace --output='!xdg-open ${U}' true`,
    ],
    mustNotMatch: ["strace -c ls", "strace -p 1"],
  },
  ltrace: {
    options: {
      options: [
        val("-a", "--align"),
        val("-A"),
        val("-b"),
        flag("-c"),
        opt("-C", "--demangle"),
        val("-D", "--debug"),
        val("-e"),
        flag("-f"),
        val("-F", "--config"),
        HELP,
        flag("-i"),
        val("-l", "--library"),
        flag("-L"),
        val("-n", "--indent"),
        val("-o", "--output"),
        val("-p"),
        flag("-r"),
        val("-s"),
        flag("-S"),
        flag("-t"),
        flag("-T"),
        val("-u"),
        VERSION,
        val("-w", "--where"),
        val("-x"),
        flag("--no-signals"),
      ],
    },
    mustMatch: [`ltrace -f xdg-open ${U}`],
    mustNotMatch: ["ltrace -c ls"],
  },
  watch: {
    options: {
      options: [
        flag("-b", "--beep"),
        flag("-c", "--color"),
        flag("-C", "--no-color"),
        opt("-d", "--differences"),
        flag("-e", "--errexit"),
        flag("-g", "--chgexit"),
        val("-n", "--interval"),
        flag("-p", "--precise"),
        val("-q", "--equexit"),
        flag("-r", "--no-rerun"),
        flag("-t", "--no-title"),
        flag("-w", "--no-wrap"),
        role("command-follows", "none", "-x", "--exec"),
        HELP,
        stop("-v", "--version"),
      ],
    },
    runs: "shell-joined",
    mustMatch: [`watch -n 1 xdg-open ${U}`, `watch --int=1 'xdg-open ${U}'`, `watch -x xdg-open ${U}`],
    mustNotMatch: ["watch -n 5 'git status'", "watch -d ls -la"],
  },
  "systemd-run": {
    options: {
      options: [
        HELP,
        VERSION_LONG,
        flag(
          "--user",
          "--system",
          "--scope",
          "--slice-inherit",
          "--send-sighup",
          "--wait",
          "--no-ask-password",
          "--no-block",
          "--ignore-failure",
          "--on-timezone-change",
          "--on-clock-change",
        ),
        val("-u", "--unit"),
        val("-p", "--property"),
        val(
          "--description",
          "--slice",
          "--expand-environment",
          "--service-type",
          "--uid",
          "--gid",
          "--nice",
          "--working-directory",
          "--on-active",
          "--on-boot",
          "--on-startup",
          "--on-unit-active",
          "--on-unit-inactive",
          "--on-calendar",
          "--timer-property",
          "--path-property",
          "--socket-property",
          "--job-mode",
          "--background",
          "--json",
        ),
        flag("-r", "--remain-after-exit"),
        val("-H", "--host"),
        val("-M", "--machine"),
        flag("-d", "--same-dir"),
        val("-E", "--setenv"),
        flag("-G", "--collect"),
        flag("-q", "--quiet"),
        flag("-v", "--verbose"),
        flag("-t", "--pty"),
        flag("-P", "--pipe"),
        role("shell", "none", "-S", "--shell"),
      ],
    },
    mustMatch: [`systemd-run --user xdg-open ${U}`, `systemd-run --user --pty -p X=1 xdg-open ${U}`],
    mustNotMatch: ["systemd-run --user --scope make"],
  },
  "dbus-launch": {
    options: {
      abbreviations: false,
      options: [
        flag(
          "--sh-syntax",
          "--csh-syntax",
          "--auto-syntax",
          "--binary-syntax",
          "--close-stderr",
          "--exit-with-session",
          "--exit-with-x11",
        ),
        val("--config-file", "--autolaunch"),
        HELP_LONG,
        VERSION_LONG,
      ],
    },
    mustMatch: [`dbus-launch xdg-open ${U}`, `dbus-launch --exit-with-session xdg-open ${U}`],
    mustNotMatch: ["dbus-launch --sh-syntax"],
  },
  "dbus-run-session": {
    options: {
      abbreviations: false,
      options: [val("--config-file", "--dbus-daemon"), HELP_LONG, VERSION_LONG],
    },
    mustMatch: [`dbus-run-session -- xdg-open ${U}`],
    mustNotMatch: ["dbus-run-session -- make test"],
  },
  "xvfb-run": {
    options: {
      options: [
        flag("-a", "--auto-servernum"),
        val("-e", "--error-file"),
        val("-f", "--auth-file"),
        HELP,
        val("-n", "--server-num"),
        flag("-l", "--listen-tcp"),
        val("-p", "--xauth-protocol"),
        val("-s", "--server-args"),
        val("-w", "--wait"),
      ],
    },
    mustMatch: [`xvfb-run -a xdg-open ${U}`, `xvfb-run -s '-screen 0 1x1x24' xdg-open ${U}`],
    mustNotMatch: ["xvfb-run -a npm test"],
  },
  "ssh-agent": {
    options: {
      options: [
        val("-a"),
        flag("-c"),
        flag("-D"),
        flag("-d"),
        val("-E"),
        stop("-k"),
        val("-O"),
        val("-P"),
        flag("-s"),
        val("-t"),
      ],
      abbreviations: false,
    },
    mustMatch: [`ssh-agent xdg-open ${U}`],
    mustNotMatch: ["ssh-agent -s"],
  },
  caffeinate: {
    options: {
      options: [flag("-d"), flag("-i"), flag("-m"), flag("-s"), flag("-u"), val("-t"), val("-w")],
      abbreviations: false,
    },
    mustMatch: [`caffeinate -i xdg-open ${U}`],
    mustNotMatch: ["caffeinate -i make"],
  },
  chronic: {
    options: { options: [flag("-e"), flag("-v")], abbreviations: false },
    mustMatch: [`chronic xdg-open ${U}`],
    mustNotMatch: ["chronic make"],
  },
  unbuffer: {
    options: { options: [flag("-p")], abbreviations: false },
    mustMatch: [`unbuffer xdg-open ${U}`],
    mustNotMatch: ["unbuffer make"],
  },
  pkexec: {
    options: {
      options: [val("--user"), flag("--disable-internal-agent", "--keep-cwd"), HELP_LONG, VERSION_LONG],
    },
    noCommand: "shell",
    mustMatch: [`pkexec xdg-open ${U}`, `pkexec --us root xdg-open ${U}`],
    mustNotMatch: ["pkexec --version"],
  },
  fakeroot: {
    options: {
      options: [
        val("-l", "--lib"),
        val("--faked"),
        val("-s"),
        val("-i"),
        flag("-u", "--unknown-is-real"),
        val("-b"),
        HELP,
        VERSION,
      ],
    },
    noCommand: "shell",
    mustMatch: [`fakeroot xdg-open ${U}`, `fakeroot -- xdg-open ${U}`],
    mustNotMatch: ["fakeroot make install"],
  },
  busybox: {
    options: { options: [], abbreviations: false },
    mustMatch: [`busybox sh -c 'xdg-open ${U}'`, `busybox env xdg-open ${U}`],
    mustNotMatch: ["busybox ls"],
  },
  "nix-shell": {
    options: {
      options: [
        val(
          "-p",
          "--packages",
          "-A",
          "--attr",
          "-I",
          "--arg",
          "--argstr",
          "-E",
          "--expr",
          "--include",
          "--keep",
          "-k",
          "--exclude",
        ),
        role("script", "required", "--run", "--command"),
        flag(
          "--pure",
          "--impure",
          "-i",
          "--show-trace",
          "-Q",
          "--no-build-output",
          "-v",
          "--verbose",
          "--quiet",
        ),
      ],
      permute: true,
      abbreviations: false,
    },
    noCommand: "shell",
    mustMatch: [`nix-shell -p hello --run 'xdg-open ${U}'`],
    mustNotMatch: ["nix-shell --run 'make test'"],
  },
  npx: {
    options: {
      abbreviations: false,
      options: [
        val("-p", "--package"),
        role("script", "required", "-c", "--call"),
        flag(
          "-y",
          "--yes",
          "--no",
          "-q",
          "--quiet",
          "--silent",
          "--prefer-offline",
          "--prefer-online",
          "--offline",
          "--ignore-existing",
          "--include-workspace-root",
          "--workspaces",
          "-ws",
        ),
        val("-w", "--workspace", "--loglevel", "--registry", "--cache", "--userconfig"),
      ],
    },
    mustMatch: [`npx xdg-open ${U}`, `npx -y open-cli ${U}`, `npx -c 'xdg-open ${U}'`],
    mustNotMatch: ["npx -y prettier --write .", "npx vitest run"],
  },
  bunx: {
    options: {
      abbreviations: false,
      options: [val("-p", "--package"), flag("--bun", "--no-install", "--silent", "--verbose")],
    },
    mustMatch: [`bunx open-cli ${U}`],
    mustNotMatch: ["bunx vitest run"],
  },
  uvx: {
    options: {
      abbreviations: false,
      options: [
        val(
          "--with",
          "--python",
          "-p",
          "--from",
          "--with-editable",
          "--with-requirements",
          "--index",
          "--index-url",
          "--extra-index-url",
          "--directory",
        ),
        flag(
          "--isolated",
          "--offline",
          "--no-cache",
          "-q",
          "--quiet",
          "-v",
          "--verbose",
          "--refresh",
          "--no-progress",
        ),
      ],
    },
    mustMatch: [`uvx --from x xdg-open ${U}`],
    mustNotMatch: ["uvx ruff check ."],
  },
  uv: {
    options: {
      abbreviations: false,
      options: [
        val(
          "--with",
          "--python",
          "-p",
          "--directory",
          "--project",
          "--package",
          "--env-file",
          "--with-editable",
          "--with-requirements",
          "--extra",
          "--group",
          "--only-group",
          "--index",
          "--index-url",
          "--extra-index-url",
        ),
        flag(
          "--no-project",
          "--isolated",
          "--frozen",
          "--locked",
          "--no-sync",
          "--all-extras",
          "--no-dev",
          "--dev",
          "-q",
          "--quiet",
          "-v",
          "--verbose",
          "--offline",
          "--no-cache",
          "--refresh",
          "--active",
          "--no-env-file",
          "--all-packages",
          "--exact",
          "--no-progress",
        ),
        role("deny", "none", "-s", "--script", "-m", "--module", "--gui-script"),
      ],
    },
    subcommands: ["run"],
    mustMatch: [`uv run xdg-open ${U}`, `uv run --with x xdg-open ${U}`],
    mustNotMatch: ["uv run pytest -q", "uv pip install x"],
  },
  poetry: {
    options: {
      abbreviations: false,
      options: [
        val("-C", "--directory", "-P", "--project"),
        flag("-q", "--quiet", "-v", "--no-interaction", "-n"),
      ],
    },
    subcommands: ["run"],
    mustMatch: [`poetry run xdg-open ${U}`],
    mustNotMatch: ["poetry run pytest"],
  },
  pipenv: {
    options: { abbreviations: false, options: [flag("-q", "--quiet", "-v", "--verbose")] },
    subcommands: ["run"],
    mustMatch: [`pipenv run xdg-open ${U}`],
    mustNotMatch: ["pipenv run pytest"],
  },
  pdm: {
    options: {
      abbreviations: false,
      options: [val("-p", "--project"), flag("-v", "--verbose", "-q", "--quiet", "-g", "--global")],
    },
    subcommands: ["run"],
    mustMatch: [`pdm run xdg-open ${U}`],
    mustNotMatch: ["pdm run pytest"],
  },
  pnpm: {
    options: {
      abbreviations: false,
      options: [
        val("-C", "--dir", "--filter", "-F", "--workspace-dir", "--reporter", "--loglevel"),
        flag(
          "-r",
          "--recursive",
          "-w",
          "--workspace-root",
          "--silent",
          "-s",
          "--parallel",
          "--no-bail",
          "--shell-mode",
          "-c",
          "--stream",
          "--aggregate-output",
        ),
      ],
    },
    subcommands: ["exec", "dlx"],
    mustMatch: [`pnpm exec xdg-open ${U}`, `pnpm -C x exec xdg-open ${U}`, `pnpm dlx open-cli ${U}`],
    mustNotMatch: ["pnpm -r build", "pnpm exec vitest run", "pnpm --filter @capgate/tools test"],
  },
  yarn: {
    options: { abbreviations: false, options: [val("--cwd")] },
    subcommands: ["exec", "dlx"],
    mustMatch: [`yarn exec xdg-open ${U}`, `yarn dlx open-cli ${U}`],
    mustNotMatch: ["yarn exec jest", "yarn install"],
  },
  npm: {
    options: {
      abbreviations: false,
      options: [
        val("-w", "--workspace", "--package", "-p", "--prefix", "--loglevel", "--registry"),
        role("script", "required", "-c", "--call"),
        flag(
          "-y",
          "--yes",
          "--no",
          "-ws",
          "--workspaces",
          "--include-workspace-root",
          "-q",
          "--quiet",
          "--silent",
          "-s",
        ),
      ],
    },
    subcommands: ["exec", "x"],
    mustMatch: [`npm exec xdg-open ${U}`, `npm exec -- open-cli ${U}`, `npm x -c 'xdg-open ${U}'`],
    mustNotMatch: ["npm test", "npm exec -- vitest run", "npm start"],
  },
  conda: {
    options: {
      abbreviations: false,
      options: [
        val("-n", "--name", "-p", "--prefix", "--cwd"),
        flag("--no-capture-output", "--live-stream", "-v", "--verbose"),
      ],
    },
    subcommands: ["run"],
    mustMatch: [`conda run -n base xdg-open ${U}`],
    mustNotMatch: ["conda run -n base pytest"],
  },
  mamba: {
    options: {
      abbreviations: false,
      options: [
        val("-n", "--name", "-p", "--prefix", "--cwd"),
        flag("--no-capture-output", "--live-stream", "-v", "--verbose"),
      ],
    },
    subcommands: ["run"],
    mustMatch: [`mamba run -n base xdg-open ${U}`],
    mustNotMatch: ["mamba run -n base pytest"],
  },
};

/**
 * Less common utilities that run the command after their options (eatmydata, proot, …;
 * docs/shell-policy.md §2): each is one more way to reach a denied command, so each one's
 * grammar is modelled, and anything outside it (an option not in the table, a word only
 * known at run time in option position) is denied rather than guessed.
 */
const UTILITY_WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  // A shell script: an optional `--`, then the command (libeatmydata's eatmydata).
  eatmydata: {
    options: { options: [], abbreviations: false },
    mustMatch: [`eatmydata xdg-open ${U}`, `eatmydata -- xdg-open ${U}`],
    mustNotMatch: ["eatmydata apt-get --version", "eatmydata make test"],
  },
  // proot 5: exact long names (`--cw=` is refused), no attached short values; no command is a shell.
  proot: {
    options: {
      abbreviations: false,
      options: [
        val("-r", "--rootfs", "-b", "--bind", "-m", "--mount", "-w", "--pwd", "--cwd"),
        val("-v", "--verbose", "-k", "--kernel-release", "-i", "--change-id", "-R", "-S"),
        role("program", "required", "-q", "--qemu"),
        flag("-0", "--root-id"),
        stop("-V", "--version", "--about", "-h", "--help", "--usage"),
      ],
    },
    noCommand: "shell",
    mustMatch: [`proot xdg-open ${U}`, `proot -0 -w /tmp xdg-open ${U}`, `proot -q xdg-open /bin/true`],
    mustNotMatch: ["proot -0 make install", "proot --version"],
  },
  // libfaketime's faketime: its own switches, the timestamp, then the program.
  faketime: {
    options: {
      abbreviations: false,
      options: [
        flag("-m", "-f", "--exclude-monotonic", "--disable-shm"),
        val("-p"),
        role("program", "required", "--date-prog"),
        stop("-h", "--help", "-v", "--version"),
      ],
    },
    operands: 1,
    mustMatch: [`faketime '2020-01-01' xdg-open ${U}`, `faketime -f '+1d' xdg-open ${U}`],
    mustNotMatch: ["faketime '2020-01-01 10:00' date", "faketime -f '+2y' make test"],
  },
  // A shell script reading exact words; `--shell` starts an interactive shell.
  torsocks: {
    options: {
      abbreviations: false,
      options: [
        val("-u", "--user", "-p", "--pass", "-a", "--address", "-P", "--port"),
        flag("-i", "--isolate", "-6", "--ipv6", "-d", "--debug", "-q", "--quiet"),
        role("shell", "none", "--shell"),
        stop("-h", "--help", "--version"),
      ],
    },
    mustMatch: [`torsocks xdg-open ${U}`, `torsocks -i -P 9050 xdg-open ${U}`],
    mustNotMatch: ["torsocks curl https://example.com", "torsocks --version"],
  },
  // proxychains-ng: `-q`, `-f config`, then the program (also installed as `proxychains`).
  proxychains4: {
    options: { abbreviations: false, options: [flag("-q"), val("-f")] },
    mustMatch: [`proxychains4 xdg-open ${U}`, `proxychains4 -q -f p.conf xdg-open ${U}`],
    mustNotMatch: ["proxychains4 -q curl https://example.com"],
  },
  // numactl's optstring starts with `+`: no permutation. --show/--hardware run nothing.
  numactl: {
    options: {
      options: [
        flag("-a", "--all", "-b", "--balancing", "-l", "--localalloc", "-t", "--strict", "-u", "--huge"),
        flag("-T", "--touch", "-V", "--verify", "-d", "--dump", "-D", "--dump-nodes", "--cpu-compress"),
        val(
          "-i",
          "--interleave",
          "-w",
          "--weighted-interleave",
          "-p",
          "--preferred",
          "-P",
          "--preferred-many",
        ),
        val("-c", "--cpubind", "-N", "--cpunodebind", "-C", "--physcpubind", "-m", "--membind"),
        val("-S", "--shm", "-f", "--file", "-o", "--offset", "-L", "--length", "-M", "--shmmode"),
        val("-I", "--shmid"),
        stop("-s", "--show", "-H", "--hardware", "--version"),
      ],
    },
    mustMatch: [`numactl --interleave=all xdg-open ${U}`, `numactl -a -N 0 -- xdg-open ${U}`],
    mustNotMatch: ["numactl --hardware", "numactl --show", "numactl -N 0 -m 0 make test"],
  },
  // rlwrap does not permute (`rlwrap cmd -a` passes -a on); `-z` names a filter program it starts.
  rlwrap: {
    options: {
      options: [
        opt("-a", "--always-readline", "-m", "--multi-line", "-p", "--prompt-colour"),
        flag("-A", "--ansi-colour-aware", "-c", "--complete-filenames", "-i", "--case-insensitive"),
        flag("-I", "--pass-sigint-as-sigterm", "-n", "--no-warnings", "-N", "--no-children"),
        flag("-o", "--one-shot", "-r", "--remember", "-R", "--renice", "-U", "--mirror-arguments"),
        flag("-W", "--polling"),
        val("-b", "--break-chars", "-C", "--command-name", "-D", "--history-no-dupes"),
        val("-e", "--extra-char-after-completion", "-f", "--file", "-g", "--forget-matching"),
        val("-H", "--history-filename", "-l", "--logfile", "-M", "--multi-line-ext"),
        val("-O", "--only-cook", "-P", "--pre-given", "-q", "--quote-characters", "-s", "--histsize"),
        val("-S", "--substitute-prompt", "-t", "--set-term-name", "-w", "--wait-before-prompt"),
        role("script", "required", "-z", "--filter"),
        stop("-h", "--help", "-v", "--version"),
      ],
    },
    mustMatch: [
      `rlwrap xdg-open ${U}`,
      `rlwrap -C x --histsize=100 xdg-open ${U}`,
      `rlwrap -z 'xdg-open ${U}' cat`,
    ],
    mustNotMatch: ["rlwrap -c ./repl", "rlwrap sqlite3 db.sqlite"],
  },
  // nocache: `-n N`, then the command.
  nocache: {
    options: { abbreviations: false, options: [val("-n")] },
    mustMatch: [`nocache xdg-open ${U}`, `nocache -n 2 xdg-open ${U}`],
    mustNotMatch: ["nocache cp big.iso /mnt/"],
  },
  // runit's chpst: single letters; `-e dir` loads variables (LD_PRELOAD…) from files.
  chpst: {
    options: {
      abbreviations: false,
      options: [
        flag("-v", "-P", "-0", "-1", "-2"),
        val("-u", "-U", "-b", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-t", "-r"),
        {
          names: ["-e"],
          arg: "required",
          role: "deny",
          note: "it sets environment variables read from files",
        },
        stop("-V"),
      ],
    },
    mustMatch: [`chpst xdg-open ${U}`, `chpst -u nobody -n 5 xdg-open ${U}`],
    mustNotMatch: ["chpst -u nobody make", "chpst -m 100000000 ./server"],
  },
  // Debian's cpulimit 2.x: the command after its options, or after `--`.
  cpulimit: {
    options: {
      options: [
        val("-p", "--pid", "-e", "--exe", "-P", "--path", "-c", "--cpu", "-l", "--limit", "-s", "--signal"),
        flag("-b", "--background", "-f", "--foreground", "-m", "--monitor-forks", "-q", "--quiet"),
        flag(
          "-k",
          "--kill",
          "-r",
          "--restore",
          "-v",
          "--verbose",
          "-z",
          "--lazy",
          "-i",
          "--include-children",
        ),
        HELP,
      ],
    },
    mustMatch: [`cpulimit -l 50 -- xdg-open ${U}`, `cpulimit -f -l 50 xdg-open ${U}`],
    mustNotMatch: ["cpulimit -l 50 -- make -j2", "cpulimit -p 1234 -l 25"],
  },
  // glibc's catchsegv (a shell script): `--help`/`--version` (any prefix), else the program.
  catchsegv: {
    options: { options: [HELP_LONG, VERSION_LONG] },
    mustMatch: [`catchsegv xdg-open ${U}`],
    mustNotMatch: ["catchsegv ./test-binary"],
  },
  // entr: the utility runs directly (`/_` is the changed file), or `-s` hands one string to $SHELL.
  entr: {
    options: {
      abbreviations: false,
      options: [flag("-a", "-c", "-d", "-n", "-p", "-r", "-z", "-x"), role("shell-follows", "none", "-s")],
    },
    dataMark: "/_",
    mustMatch: [`ls | entr xdg-open ${U}`, `ls | entr -rn xdg-open /_`, `ls | entr -s 'xdg-open ${U}'`],
    mustNotMatch: ["ls *.ts | entr -c npm test", "ls | entr -s 'make test'"],
  },
  // daemontools (and runit's compatibility names): single letters, no permutation.
  setuidgid: {
    options: { options: [], abbreviations: false },
    operands: 1,
    mustMatch: [`setuidgid nobody xdg-open ${U}`],
    mustNotMatch: ["setuidgid nobody make"],
  },
  envuidgid: {
    options: { options: [], abbreviations: false },
    operands: 1,
    mustMatch: [`envuidgid nobody xdg-open ${U}`],
    mustNotMatch: ["envuidgid nobody ./server"],
  },
  pgrphack: {
    options: { options: [], abbreviations: false },
    mustMatch: [`pgrphack xdg-open ${U}`],
    mustNotMatch: ["pgrphack ./server"],
  },
  setlock: {
    options: { options: [flag("-n", "-N", "-x", "-X")], abbreviations: false },
    operands: 1,
    mustMatch: [`setlock -n /tmp/l xdg-open ${U}`],
    mustNotMatch: ["setlock /tmp/build.lock make"],
  },
  softlimit: {
    options: {
      options: [val("-m", "-a", "-d", "-s", "-l", "-f", "-c", "-o", "-p", "-r", "-t")],
      abbreviations: false,
    },
    mustMatch: [`softlimit -m 100000000 xdg-open ${U}`],
    mustNotMatch: ["softlimit -m 100000000 ./server"],
  },
};

const SU = BASE_WRAPPERS.su!;

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  ...BASE_WRAPPERS,
  ...UTILITY_WRAPPERS,
  // runuser is su's code (util-linux su-common.c) plus -u, which runs the operands directly.
  runuser: {
    ...SU,
    options: { ...SU.options, options: [...SU.options.options, val("-u", "--user")] },
    mustMatch: [
      `runuser -u alice -- xdg-open ${U}`,
      `runuser alice -c 'xdg-open ${U}'`,
      `runuser -u alice xdg-open ${U}`,
    ],
    mustNotMatch: ["runuser -u nobody -- ls", "runuser nobody -c ls"],
  },
};

/** Names that run the command words after them but are spelled differently (`linux64 cmd`). */
export const WRAPPER_ALIASES: Readonly<Record<string, string>> = {
  linux32: "setarch",
  linux64: "setarch",
  i386: "setarch",
  x86_64: "setarch",
  uname26: "setarch",
  toybox: "busybox",
  proxychains: "proxychains4",
};

/** Shells whose `-c` string (or here-document on stdin) is parsed again and checked. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "ksh93",
  "mksh",
  "pdksh",
  "oksh",
  "lksh",
  "ash",
  "rbash",
  "fish",
  "yash",
  "posh",
  "tcsh",
  "csh",
  "elvish",
  "nu",
  "xonsh",
  "ion",
  "rc",
  "es",
]);
