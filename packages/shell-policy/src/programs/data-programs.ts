/**
 * More programs whose arguments are data (docs/shell-policy.md §12), added in order of how
 * often they were typed in public shell histories and how often tldr's pages show them, each
 * with what was checked: its manual's options, subcommands and input, for anything that runs
 * a program, a shell command or code. A program that has such an option or subcommand has a
 * reader here that asks about exactly that part; one that could not be checked with
 * certainty is left out (it stays an unknown program, asked about), with the reason in
 * LEFT_OUT below so the next reader does not redo the work.
 *
 * Installing packages runs the packages' own install scripts (`apt install`, `brew install`,
 * `pip install` runs setup.py, `npm install` lifecycle scripts): that is code from files the
 * package brings, like a Makefile target (§8), not from the command line, and it is treated
 * the same way for every package manager.
 */
import type { ResolvedCommand } from "./resolved-command.js";

/** Why capgate cannot read completely what a command runs, or undefined. */
type Reader = (cmd: ResolvedCommand) => string | undefined;

/** Programs with nothing that runs a program among their options, subcommands and input: the manual checked for each. */
export const DATA_PROGRAM_NOTES: Readonly<Record<string, string>> = {
  // coreutils, util-linux, procps, psmisc and friends
  rev: "util-linux rev: reverses lines of files; options -h/-V/-0 only",
  pstree: "psmisc pstree: prints the process tree; display options only",
  lsusb: "usbutils lsusb: lists devices; -v/-t/-s/-d/-D display options only",
  lspci: "pciutils lspci: lists devices; -i/-p name data files, no program",
  lsmod: "kmod lsmod: prints /proc/modules; no options",
  dmesg: "util-linux dmesg: prints or clears the kernel ring buffer; no option runs a program",
  blkid: "util-linux blkid: prints block device attributes; -c names a cache file",
  findmnt: "util-linux findmnt: lists mounts; -F names a fstab file, no program",
  lsns: "util-linux lsns: lists namespaces; display options only",
  getent: "glibc getent: prints database entries; -s names a service (NSS module from nsswitch), no program",
  envsubst: "gettext envsubst: substitutes $VAR in its input; the text is data",
  ncal: "ncal: prints a calendar",
  sensors: "lm-sensors sensors: prints readings; -c names a config file (data)",
  xrandr: "xrandr: queries or sets X outputs; no option runs a program",
  // system state (systemd and friends): units' commands come from unit files (§8)
  systemctl:
    "systemctl: unit commands come from unit files (§8); `edit` runs $SYSTEMD_EDITOR/$EDITOR, program variables checked where set; -H runs ssh to reach a host",
  journalctl:
    "journalctl: prints the journal; the pager is $SYSTEMD_PAGER/$PAGER, program variables checked where set",
  hostnamectl: "hostnamectl: prints or sets the host name",
  timedatectl: "timedatectl: prints or sets the clock",
  localectl: "localectl: prints or sets the locale",
  loginctl: "loginctl: lists or controls sessions",
  networkctl: "networkctl: lists or controls links",
  resolvectl: "resolvectl: queries DNS",
  service: "service NAME ACTION runs the init script /etc/init.d/NAME — a file on the system, §8",
  reboot: "reboot: no option runs a program",
  poweroff: "poweroff: no option runs a program",
  shutdown: "shutdown: the wall message is data",
  halt: "halt: no option runs a program",
  nmcli: "nmcli: NetworkManager client; dispatcher scripts are files (§8), no option runs a program",
  // package managers: installing runs the packages' own scripts (see the file comment)
  "apt-cache": "apt-cache: queries the package cache; no command runs a program",
  "apt-mark": "apt-mark: marks packages",
  "dpkg-query": "dpkg-query: queries the package database; --showformat is a format",
  pacman:
    "pacman: installs packages (their install scripts, as every package manager's); hooks and XferCommand come from pacman.conf (a file, §8)",
  virtualenv:
    "virtualenv: creates an environment; --prompt, --python name an interpreter to copy (not run on arguments)",
  // binary inspection (binutils): they read files; ldd is left out, it may run the program
  objdump: "binutils objdump: disassembles and dumps files; no option runs a program",
  readelf: "binutils readelf: prints ELF structures",
  nm: "binutils nm: lists symbols; --plugin names a shared library loaded as a plugin (a file, §8)",
  size: "binutils size: prints section sizes",
  "c++filt": "binutils c++filt: demangles names in its input",
  addr2line: "binutils addr2line: maps addresses to lines",
  // archives and images
  "7za": "7-Zip: as 7z; no option runs a program",
  "7zz": "7-Zip: as 7z",
  crane:
    "go-containerregistry crane: copies and edits images in registries; credentials come from docker's config (its helpers are §8)",
  gcrane: "gcrane: crane for Google registries",
  tofu: "OpenTofu: as terraform; providers and external data sources come from the configuration files (§8)",
  // toys people type
  sl: "sl: draws a train",
  cmatrix: "cmatrix: draws falling characters",
  // clipboard and terminal helpers
  pbcopy: "pbcopy: copies its input to the clipboard",
  pbpaste: "pbpaste: prints the clipboard",
  xclip: "xclip: copies to and from the X clipboard; no option runs a program",
  xsel: "xsel: copies to and from the X selection; no option runs a program",
  "wl-copy": "wl-copy: copies its input or arguments to the Wayland clipboard",
  tldr: "tldr clients print pages; --update fetches them",
  whois: "whois: queries a whois server; -h names a host",
  mtr: "mtr: traceroute and ping; no option runs a program",
};

/** apt-get/apt: `-o` sets configuration (APT::Update::Pre-Invoke, DPkg::Pre-Invoke are commands), `-c` reads a configuration file. */
const APT_DATA_OPTIONS =
  /^(APT::Get::(Assume-Yes|Fix-Broken|Show-Versions|Only-Source|Download-Only|Purge|Install-Recommends|Install-Suggests|AutomaticRemove|Upgrade-Allow-New)|APT::(Install-Recommends|Install-Suggests|Default-Release|Architecture|Color)|Acquire::(Retries|ForceIPv4|ForceIPv6|Languages|Check-Valid-Until|http::Timeout|https::Timeout|AllowInsecureRepositories)|Dpkg::Use-Pty|Debug::[\w:-]+|quiet)=/i;
const DPKG_FORCE_CONF = /^Dpkg::Options::=--force-conf(old|new|def|miss)$/i;

const apt: Reader = (cmd) => {
  const { argv } = cmd;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return `an argument of ${cmd.name} is only known at run time`;
    if (a === "--") break;
    const value =
      a === "-o" || a === "--option"
        ? argv[++i]
        : /^-o./.test(a)
          ? a.slice(2)
          : /^--option=/.test(a)
            ? a.slice(9)
            : null;
    if (value !== null) {
      if (value === undefined) return `the ${cmd.name} -o value is only known at run time`;
      if (!APT_DATA_OPTIONS.test(value) && !DPKG_FORCE_CONF.test(value))
        return `${cmd.name} -o ${value.replace(/=.*$/s, "")} sets configuration that may name a command apt runs (Pre-Invoke, Post-Invoke hooks)`;
      continue;
    }
    if (/^(-c|--config-file)(=|$)/.test(a) || /^-c./.test(a))
      return `${cmd.name} -c reads configuration from a file, which may name commands apt runs`;
  }
  return undefined;
};

/** dpkg's own options that run shell commands around its actions. */
const dpkg: Reader = (cmd) => {
  const hit = cmd.argv.find(
    (a) => a === undefined || /^--(pre-invoke|post-invoke|status-logger)(=|$)/.test(a),
  );
  if (hit === undefined && cmd.argv.includes(undefined))
    return `an argument of dpkg is only known at run time`;
  return hit === undefined ? undefined : `dpkg ${hit.replace(/=.*$/s, "")} runs a shell command`;
};

/** The first word that is not an option (a program whose options come first and take no value). */
function subcommandOf(cmd: ResolvedCommand, valueOptions: RegExp = /^$/): string | null | undefined {
  const { argv } = cmd;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return undefined;
    if (a === "--") return argv[i + 1] ?? null;
    if (a.startsWith("-")) {
      if (valueOptions.test(a)) i++;
      continue;
    }
    return a;
  }
  return null;
}

/**
 * A program whose subcommands are checked against a list: a subcommand outside it may be an
 * external `tool-foo` program, a plugin or a launcher, and is asked about.
 */
function subcommands(
  tool: string,
  known: string,
  why: Readonly<Record<string, string>> = {},
  valueOptions?: RegExp,
): Reader {
  const set = new Set(known.split(" "));
  return (cmd) => {
    const sub = subcommandOf(cmd, valueOptions);
    if (sub === null) return undefined;
    if (sub === undefined) return `the ${tool} command is only known at run time`;
    if (Object.hasOwn(why, sub)) return why[sub];
    if (!set.has(sub))
      return `\`${tool} ${sub}\` is not a ${tool} command capgate knows (it may be a plugin or an external command)`;
    return undefined;
  };
}

/** Programs with a reader: what was checked, and the reader that asks about the parts that run something. */
export const DATA_PROGRAM_READERS: Readonly<Record<string, { note: string; read: Reader }>> = {
  apt: {
    note: "apt: -o keys and -c files can name hook commands (asked unless the key is known data); install runs the packages' scripts; edit-sources runs $EDITOR",
    read: apt,
  },
  "apt-get": { note: "apt-get: as apt", read: apt },
  dpkg: {
    note: "dpkg: --pre-invoke/--post-invoke/--status-logger run shell commands (asked); -i runs the package's maintainer scripts",
    read: dpkg,
  },
  brew: {
    note: "brew: `sh`, `ruby`, `irb`, `bundle`, `exec`… and external `brew-foo` commands run code: only the listed package commands",
    read: subcommands(
      "brew",
      "install reinstall uninstall remove rm upgrade update list ls info search outdated cleanup doctor config deps uses leaves autoremove link unlink pin unpin tap untap tap-info fetch desc missing options formulae casks commands --prefix --cellar --cache --repository --version --env shellenv analytics completions log cat",
      {
        services: "brew services starts and runs formulae's service commands",
      },
    ),
  },
  snap: {
    note: "snap: `run` starts an application with its arguments (asked); install runs the snap's hooks (package scripts)",
    read: subcommands(
      "snap",
      "install remove refresh revert list info find search connections connect disconnect interfaces services logs start stop restart enable disable version changes change tasks aliases alias unalias set get help",
      { run: "snap run starts an application with the arguments given" },
    ),
  },
  composer: {
    note: "composer: `exec` runs a vendor binary and `run-script` a script of composer.json (a file); plugins are package code",
    read: subcommands(
      "composer",
      "install i update u upgrade require r remove rm dump-autoload dumpautoload show info outdated search init validate config diagnose self-update selfupdate clear-cache clearcache create-project depends why prohibits why-not licenses fund audit status archive check-platform-reqs about bump reinstall run-script run list help",
      {
        exec: "composer exec runs the program named in its arguments",
        global: "composer global runs a composer command in the global project, including exec",
      },
    ),
  },
  bundle: {
    note: "bundler: `exec` runs a command and `console` a Ruby REPL; gemspecs and the Gemfile are Ruby files (§8)",
    read: subcommands(
      "bundle",
      "install update add remove list show outdated check config info init lock platform version doctor clean binstubs package cache pristine help",
      {
        exec: "bundle exec runs the command given in its arguments",
        console: "bundle console reads Ruby code from its input",
      },
    ),
  },
  rails: {
    note: "rails: `runner` takes Ruby code, `console`/`dbconsole` read code or SQL (with shell escapes) from input; generators and tasks are project files",
    read: subcommands(
      "rails",
      "new server s generate g destroy d routes test t about credentials encrypted secret stats notes assets:precompile db:migrate db:create db:drop db:seed db:setup db:reset db:rollback db:prepare db:schema:load middleware restart initializers version help",
      {
        runner: "rails runner runs the Ruby code given in its arguments",
        r: "rails runner runs the Ruby code given in its arguments",
        console: "rails console reads Ruby code from its input",
        c: "rails console reads Ruby code from its input",
        dbconsole: "rails dbconsole starts a database shell, whose escapes run commands",
        db: "rails dbconsole starts a database shell, whose escapes run commands",
      },
    ),
  },
  flask: {
    note: "flask: `shell` reads Python from its input; --app names a module of the project (a file); custom commands are project code",
    read: subcommands(
      "flask",
      "run routes db --version --help",
      { shell: "flask shell reads Python code from its input" },
      /^(-A|--app|-e|--env-file)$/,
    ),
  },
  jupyter: {
    note: "jupyter: `jupyter foo` runs an external jupyter-foo program; console reads code; notebooks are files",
    read: subcommands(
      "jupyter",
      "notebook lab nbconvert kernelspec server troubleshoot labextension nbextension --version --paths --help",
    ),
  },
  dotnet: {
    note: "dotnet: `exec`, `tool run` and external dotnet-foo commands run programs; project builds are files (§8)",
    read: subcommands(
      "dotnet",
      "build test run restore new add remove list publish pack clean format sln nuget msbuild workload sdk --version --info --list-sdks --list-runtimes help",
      {
        exec: "dotnet exec runs the assembly given in its arguments",
        tool: "dotnet tool installs or runs tools named in its arguments",
      },
    ),
  },
  helm: {
    note: "helm: --post-renderer runs a program; `helm foo` may be a plugin; `test` runs test pods in the cluster",
    read: (cmd) => {
      if (cmd.argv.some((a) => a === undefined || /^--post-renderer(=|$)/.test(a)))
        return "helm --post-renderer names a program helm runs";
      return subcommands(
        "helm",
        "install upgrade uninstall delete list ls status history rollback repo search show pull push template lint package dependency dep get version env create verify registry completion",
        { test: "helm test runs the chart's test pods, which run commands in the cluster" },
        /^(-n|--namespace|--kube-context|--kubeconfig)$/,
      )(cmd);
    },
  },
  bat: {
    note: "bat: --pager names a program bat runs (asked); $BAT_PAGER/$PAGER are program variables checked where set",
    read: (cmd) =>
      cmd.argv.some((a) => a === undefined || /^--pager(=|$)/.test(a))
        ? "bat --pager names a program bat runs"
        : undefined,
  },
  fd: {
    note: "fd: -x/--exec and -X/--exec-batch run a command for the found files (asked)",
    read: (cmd) =>
      cmd.argv.some(
        (a) => a === undefined || /^(-x|-X|--exec|--exec-batch)(=|$)/.test(a) || /^-[a-zA-Z]*[xX]/.test(a),
      )
        ? "fd -x/--exec runs a command for each file it finds"
        : undefined,
  },
  ag: {
    note: "the silver searcher: --pager names a program it runs (asked)",
    read: (cmd) =>
      cmd.argv.some((a) => a === undefined || /^--pager(=|$)/.test(a))
        ? "ag --pager names a program ag runs"
        : undefined,
  },
  gem: {
    note: "RubyGems: `gem exec` runs a gem's executable; install builds native extensions (the package's scripts); plugins add commands",
    read: subcommands(
      "gem",
      "install uninstall list update search info env environment sources which contents cleanup build push fetch help outdated dependency owner pristine query specification unpack yank signin signout check rdoc lock mirror cert stale",
      { exec: "gem exec runs the executable of the gem named in its arguments" },
    ),
  },
  "wl-paste": {
    note: "wl-paste: -w/--watch runs a command on every clipboard change (asked)",
    read: (cmd) =>
      cmd.argv.some((a) => a === undefined || /^(-w|--watch)$/.test(a) || /^-[a-zA-Z]*w/.test(a))
        ? "wl-paste --watch runs a command on every clipboard change"
        : undefined,
  },
};

/**
 * Frequent programs checked and left out — they stay unknown programs, asked about — with
 * why. Listed so that the question is not asked again without new facts.
 */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  patch: "hands ed-style diffs to ed; whether `!` lines are filtered depends on the installed version",
  mount: "mount.fuse runs the program named in a `TYPE#source` device through sh -c",
  yay: "--editor, --makepkg, --pacman, --git, --gpg, --sudo name programs it runs; PKGBUILDs are downloaded code",
  paru: "as yay",
  code: "VS Code installs and runs extensions (--install-extension), opens a desktop window, tunnels",
  ffmpeg: "a large option surface (filters, protocols, -filter_script); not checked to the end",
  magick: "ImageMagick reads a file name starting with `|` as a command to run, and runs delegates",
  convert: "ImageMagick, as magick",
  hg: "--config hooks.*/alias.* (`!` shell aliases), bisect --command, merge --tool, -e/--ssh name programs",
  svn: "--editor-cmd, --diff-cmd, --diff3-cmd, --config-option name programs",
  aws: "remote execution subcommands (ssm send-command, ecs execute-command) and shell aliases from its alias file",
  gcloud: "`compute ssh` runs commands on a host; `alpha`/`beta` surfaces not checked",
  az: "`vm run-command` runs commands on a host; extensions are programs",
  fzf: "--preview and --bind execute(…) run shell commands",
  busctl: "method calls such as systemd's StartTransientUnit run commands",
  telnet: "its command mode runs `!` shell escapes",
  "ssh-copy-id": "passes -o options to ssh (ProxyCommand)",
  "yt-dlp": "--exec runs a command after each download",
  nmap: "NSE scripts are Lua code; --script takes files and categories",
  pandoc: "--filter/--lua-filter run programs and code",
  vagrant: "`ssh -c` runs a command in the machine; Vagrantfiles are Ruby",
};
