import type { ResolvedCommand } from "../programs/resolved-command.js";
import { commandName } from "../programs/shell-commands.js";
import { codeSources, PYTHON, powershellText, sourceOpensBrowser } from "../programs/shell-interpreters.js";

/** What a matching rule makes of the whole command line. */
export type ShellRuleDecision = "deny" | "ask";

/**
 * A shell policy rule: data plus a matcher over one resolved command (after wrappers were
 * peeled), with examples that must and must not match. The examples are whole command
 * lines run through the full policy when the rules load; a rule whose examples disagree
 * with it stops the load with an error.
 */
export interface ShellRule {
  readonly id: string;
  readonly decision: ShellRuleDecision;
  /** Said to the model (deny) or the approver (ask) after the command text. */
  readonly reason: string;
  readonly match: (cmd: ResolvedCommand) => boolean;
  readonly mustMatch: readonly string[];
  readonly mustNotMatch: readonly string[];
}

/** The hint every GUI-opener denial carries. */
export const BROWSER_PANEL_HINT = "Use browser_panel.open to open web pages (never the shell).";

const GUI = `opens a GUI program; GUI openers are never run from the shell. ${BROWSER_PANEL_HINT}`;

const named =
  (...names: string[]) =>
  (cmd: ResolvedCommand): boolean =>
    names.includes(cmd.name);

/** First argument that is not an option, lower-cased. */
function firstOperand(cmd: ResolvedCommand): string | undefined {
  for (let i = 1; i < cmd.argv.length; i++) {
    const a = cmd.argv[i];
    if (a === undefined) return undefined;
    if (!a.startsWith("-")) return a.toLowerCase();
  }
  return undefined;
}

export const BROWSER_BINARIES: readonly string[] = [
  "google-chrome",
  "google-chrome-stable",
  "google-chrome-beta",
  "google-chrome-unstable",
  "google-chrome-canary",
  "google chrome",
  "chrome",
  "chromium",
  "chromium-browser",
  "firefox",
  "firefox-esr",
  "firefox-developer-edition",
  "safari",
  "microsoft-edge",
  "microsoft-edge-stable",
  "microsoft-edge-beta",
  "microsoft-edge-dev",
  "microsoft edge",
  "msedge",
  "brave",
  "brave-browser",
  "brave browser",
  "opera",
  "vivaldi",
  "epiphany",
  "konqueror",
  "falkon",
  "midori",
  "qutebrowser",
  "librewolf",
  "waterfox",
  "iceweasel",
  "seamonkey",
  "firefox-nightly",
  "firefox-beta",
  "chromium-freeworld",
  "ungoogled-chromium",
  "thorium-browser",
  "brave-browser-stable",
  "brave-browser-beta",
  "brave-browser-nightly",
  "opera-beta",
  "opera-developer",
  "vivaldi-stable",
  "vivaldi-snapshot",
  "epiphany-browser",
  "gnome-web",
  "palemoon",
  "basilisk",
  "floorp",
  "zen",
  "zen-browser",
  "icecat",
  "yandex-browser",
  "yandex-browser-stable",
  "tor-browser",
  "torbrowser-launcher",
  "mullvad-browser",
  "dillo",
  "netsurf",
  "netsurf-gtk",
  "otter-browser",
  "surf",
  "luakit",
  "nyxt",
  "min",
  "badwolf",
  "iexplore",
  "safari technology preview",
];

/** `python -m webbrowser`, `python3 -c 'import webbrowser…'`, runner modules, or such code on stdin. */
function pythonOpensBrowser(cmd: ResolvedCommand): boolean {
  if (!PYTHON.test(cmd.name)) return false;
  const sources = codeSources(cmd);
  return Array.isArray(sources) && sources.some((s) => sourceOpensBrowser(cmd, s));
}

/** node/perl/ruby/R… code naming their URL-opener module or function. */
function interpreterOpensBrowser(cmd: ResolvedCommand): boolean {
  if (PYTHON.test(cmd.name)) return false;
  const sources = codeSources(cmd);
  return Array.isArray(sources) && sources.some((s) => sourceOpensBrowser(cmd, s));
}

/** cmd.exe's own reading: `^` escapes, `"` quotes, `&`/`|`/`(` separate commands. */
function cmdLineOpens(line: string): boolean {
  const plain = line.replace(/\^(.)/g, "$1").replace(/"/g, " ");
  // %VAR% and !VAR! are expanded by cmd before it runs anything: the command could be anything.
  if (/%[^%\s]+%|![^!\s]+!/.test(line)) return true;
  for (const segment of plain.split(/[&|()<>\r\n]+/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .filter((w) => w !== "");
    while (words[0] !== undefined && /^(@|call|@call)$/i.test(words[0])) words.shift();
    if (words[0]?.startsWith("@")) words[0] = words[0].slice(1);
    const first = words[0] === undefined ? "" : commandName(words[0]);
    if (WINDOWS_OPENERS.has(first) || BROWSER_BINARIES.includes(first)) return true;
    if (/^[a-z][a-z0-9+.-]*:/i.test(words[0] ?? "") && !/^[a-z]:[\\/]/i.test(words[0] ?? "")) return true; // a URL or protocol handler
    if (first === "cmd" && cmdOpens(words.slice(1))) return true;
    if ((first === "powershell" || first === "pwsh") && powershellOpens(words.slice(1))) return true;
  }
  return false;
}

const WINDOWS_OPENERS = new Set([
  "start",
  "explorer",
  "rundll32",
  "mshta",
  "hh",
  "wslview",
  "msedge",
  "iexplore",
  "ms-settings",
]);

function cmdOpens(args: readonly (string | undefined)[]): boolean {
  const at = args.findIndex((a) => a !== undefined && /^\/[ckr]/i.test(a));
  if (at === -1) return false;
  if (args.slice(at).some((a) => a === undefined)) return true;
  const attached = args[at]!.slice(2);
  return cmdLineOpens([attached, ...args.slice(at + 1)].join(" "));
}

/**
 * `./start`, `bin/open x`: a relative path (no `..`) names the project's own script, not the
 * system's `start`/`open`, whose generic names are only the opener as a bare name looked up on
 * PATH or an absolute path. (Programs named like nothing else, `./xdg-open`, stay openers.)
 */
function projectScript(cmd: ResolvedCommand): boolean {
  const word = cmd.argv[0] ?? "";
  return (
    word.includes("/") && !word.startsWith("/") && !word.startsWith("~") && !word.split("/").includes("..")
  );
}

function windowsStart(cmd: ResolvedCommand): boolean {
  if (WINDOWS_OPENERS.has(cmd.name)) return !(cmd.name === "start" && projectScript(cmd));
  if (cmd.name !== "cmd") return false;
  return (
    cmdOpens(cmd.argv.slice(1)) ||
    (cmd.openArgs === true && !cmd.argv.slice(1).some((a) => a !== undefined && /^\/[ckr]/i.test(a)))
  );
}

const PS_OPENS =
  /start-process|\bsaps\b|(^|[\s;&|({])start(\.exe)?(\s|$)|invoke-item|(^|[\s;&|({])ii\s|::start\s*\(|process\]::start|explorer(\.exe)?\b|\bmshta\b|rundll32|shellexecute|shell\.application|\bstart-\w*browser|\bopen\s+-a\b/i;

function powershellOpens(args: readonly (string | undefined)[]): boolean {
  const text = powershellText(args);
  return text === undefined || PS_OPENS.test(text);
}

function powershellStart(cmd: ResolvedCommand): boolean {
  if (cmd.name !== "powershell" && cmd.name !== "pwsh" && cmd.name !== "powershell_ise") return false;
  return powershellOpens(cmd.argv.slice(1)) || cmd.openArgs === true;
}

/** Method calls on the session bus reach the desktop (portal OpenURI, org.freedesktop.Application…). */
function sessionBusCall(cmd: ResolvedCommand): boolean {
  const args = cmd.argv.slice(1);
  const has = (re: RegExp) => args.some((a) => a !== undefined && re.test(a));
  const desktop = has(
    /org\.freedesktop\.(portal|Application|FileManager1|Notifications)|OpenURI|org\.gnome\.|org\.kde\./i,
  );
  switch (cmd.name) {
    case "gdbus":
      return (
        (firstOperand(cmd) === "call" || firstOperand(cmd) === "emit") && (!has(/^--system$|^-y$/) || desktop)
      );
    case "dbus-send":
      return !has(/^--system$/) || desktop;
    case "busctl":
      return has(/^--user$/) || desktop;
    case "qdbus":
    case "qdbus6":
    case "qdbus-qt5":
    case "qdbus-qt6":
      return true;
    default:
      return false;
  }
}

const DESKTOP_LAUNCHERS = new Set([
  "gtk-launch",
  "gtk4-launch",
  "dex",
  "kstart",
  "kstart5",
  "kstart6",
  "xdg-desktop-portal",
  "xdg-desktop-portal-gtk",
  "xdg-desktop-portal-gnome",
  "xdg-desktop-portal-kde",
  "flatpak-spawn",
  "xdotool",
  "ydotool",
  "wmctrl",
  "xte",
  "carbonyl",
  "browsh",
  "xlinks2",
  "handlr",
  "mimeo",
  "rifle",
]);

function desktopLaunch(cmd: ResolvedCommand): boolean {
  if (DESKTOP_LAUNCHERS.has(cmd.name)) return true;
  if (cmd.name === "flatpak" || cmd.name === "snap")
    return firstOperand(cmd) === "run" || (cmd.openArgs === true && firstOperand(cmd) === undefined);
  // links2 -g opens an X window; the text modes render in the terminal like curl.
  if (cmd.name === "links" || cmd.name === "links2")
    return cmd.argv.some((a) => a === "-g" || a === "-driver");
  return false;
}

/**
 * Programs whose whole point is a desktop window: dialogs and notifications (zenity
 * `--text-info --html --url` even renders a web page) and terminal emulators (`xterm -e
 * cmd` runs cmd in a new window, outside anything this process could watch). Denied
 * whatever follows — the command a terminal would run is never reached, so its option
 * tables are not needed. Only asking for the version or the help opens nothing.
 */
const DESKTOP_WINDOWS = new Set([
  "notify-send",
  "zenity",
  "yad",
  "kdialog",
  "xmessage",
  "gxmessage",
  "gdialog",
  "xdialog",
  "matedialog",
  "qarma",
  "xterm",
  "uxterm",
  "koi8rxterm",
  "lxterm",
  "x-terminal-emulator",
  "xdg-terminal-exec",
  "gnome-terminal",
  "gnome-console",
  "kgx",
  "ptyxis",
  "konsole",
  "xfce4-terminal",
  "mate-terminal",
  "lxterminal",
  "qterminal",
  "terminator",
  "tilix",
  "terminology",
  "sakura",
  "guake",
  "tilda",
  "yakuake",
  "alacritty",
  "kitty",
  "wezterm",
  "wezterm-gui",
  "foot",
  "footclient",
  "urxvt",
  "urxvtc",
  "rxvt",
  "rxvt-unicode",
  "aterm",
  "eterm",
  "cool-retro-term",
  "deepin-terminal",
  "hyper",
  "tabby",
  "contour",
  "warp-terminal",
  "ghostty",
]);

function desktopWindow(cmd: ResolvedCommand): boolean {
  if (!DESKTOP_WINDOWS.has(cmd.name)) return false;
  const args = cmd.argv.slice(1);
  return !(args.length === 1 && /^(--version|-v|--help|-h|-\?)$/.test(args[0] ?? ""));
}

const COPIERS = new Set(["cp", "ln", "link", "mv", "install", "rsync", "cat", "dd", "tee", "ditto", "scp"]);

/** `cp /usr/bin/xdg-open ./x`: an operand that is a path to a program some opener rule names. */
function openerCopy(cmd: ResolvedCommand): boolean {
  if (!COPIERS.has(cmd.name)) return false;
  for (const raw of cmd.argv.slice(1)) {
    const path = raw?.startsWith("if=") ? raw.slice(3) : raw;
    if (path === undefined || !path.includes("/") || path.startsWith("-") || path.endsWith("/")) continue;
    const probe: ResolvedCommand = {
      ...cmd,
      name: commandName(path),
      argv: [path],
      words: [],
      openArgs: false,
    };
    const named = BUILTIN_SHELL_RULES.some(
      (r) =>
        r.id !== "gui.opener-copy" && r.id.startsWith("gui.") && r.id !== "gui.doc-browser" && r.match(probe),
    );
    if (named) return true;
  }
  return false;
}

/** The built-in rules: GUI openers, hard-denied in every position. */
export const BUILTIN_SHELL_RULES: readonly ShellRule[] = [
  {
    id: "gui.xdg-open",
    decision: "deny",
    reason: GUI,
    match: named(
      "xdg-open",
      "gnome-open",
      "kde-open",
      "kde-open5",
      "kde-open6",
      "exo-open",
      "gvfs-open",
      "mimeopen",
      "xdg-email",
      "open-cli",
      "wslview",
      "see",
      "run-mailcap",
      "mimeopen-gui",
      "xdg-open.real",
      "gnome-www-browser",
    ),
    mustMatch: [
      "xdg-open https://example.com",
      "/usr/bin/xdg-open x",
      "x''dg-open x",
      "true && wslview https://example.com",
      "npx open-cli https://example.com",
      "see https://example.com",
      "run-mailcap --action=view x.html",
      "mimeopen -n x.html",
    ],
    mustNotMatch: [
      "echo xdg-open",
      "grep -r xdg-open src/",
      "man xdg-open",
      "command -v xdg-open",
      "cat xdg-open.txt",
    ],
  },
  {
    id: "gui.open",
    decision: "deny",
    reason: GUI,
    match: (cmd) => named("open")(cmd) && !projectScript(cmd),
    mustMatch: [
      "open https://example.com",
      "open -a Safari https://example.com",
      "/usr/bin/open index.html",
      "ls; open .",
      "../../usr/bin/open x",
    ],
    mustNotMatch: [
      "./open",
      "scripts/open --dry-run",
      "echo open",
      "openssl version",
      "cat open.txt",
      'git commit -m "open the door"',
      "type open",
    ],
  },
  {
    id: "gui.browser-launcher",
    decision: "deny",
    reason: GUI,
    match: named("sensible-browser", "x-www-browser", "www-browser", "gnome-www-browser"),
    mustMatch: ["sensible-browser https://example.com", "x-www-browser x", "nohup www-browser x &"],
    mustNotMatch: ["echo sensible-browser", "update-alternatives --display x-www-browser"],
  },
  {
    id: "gui.browser",
    decision: "deny",
    reason: GUI,
    match: (cmd) => BROWSER_BINARIES.includes(cmd.name),
    mustMatch: [
      "google-chrome https://example.com",
      "chromium --headless --screenshot https://example.com",
      "firefox x",
      "'/Applications/Google Chrome.app/Contents/MacOS/Google Chrome' https://example.com",
      "/Applications/Safari.app/Contents/MacOS/Safari",
      "msedge.exe https://example.com",
      "brave-browser x",
    ],
    mustNotMatch: ["echo chrome", "grep -r firefox docs/", "ls ~/.mozilla/firefox"],
  },
  {
    id: "gui.gio-open",
    decision: "deny",
    reason: GUI,
    match: (cmd) => {
      const sub = firstOperand(cmd);
      const open = sub === undefined && cmd.openArgs === true;
      if (cmd.name === "gio") return open || ["open", "launch"].includes(sub ?? "");
      if (cmd.name.startsWith("kioclient") || cmd.name === "kfmclient") {
        return open || ["exec", "openurl", "newtab", "openprofile", "openproperties"].includes(sub ?? "");
      }
      return false;
    },
    mustMatch: [
      "gio open https://example.com",
      "gio launch app.desktop",
      "kioclient5 exec https://example.com",
      "kioclient openURL https://example.com",
      "kfmclient newTab https://example.com",
    ],
    mustNotMatch: ["gio info file.txt", "gio list .", "echo gio open"],
  },
  {
    id: "gui.python-webbrowser",
    decision: "deny",
    reason: GUI,
    match: pythonOpensBrowser,
    mustMatch: [
      "python -m webbrowser https://example.com",
      "python3 -m webbrowser -t https://example.com",
      "python3 -mwebbrowser x",
      "python3.12 -I -m webbrowser x",
      "python3 -c 'import webbrowser; webbrowser.open(\"https://example.com\")'",
      "python3 - <<'EOF'\nimport webbrowser\nwebbrowser.open('x')\nEOF",
      "uv run python -m webbrowser x",
      "python3 -Wignore -m webbrowser x",
      "python3 -W ignore -X dev -m webbrowser x",
      "python3 -m cProfile -m webbrowser x",
      "python3 -m pdb -m webbrowser x",
      "python3 -m timeit -s 'import webbrowser' 'webbrowser.open(1)'",
      "python3 -m antigravity",
      "python3 //dev/stdin <<'EOF'\nimport webbrowser\nEOF",
    ],
    mustNotMatch: [
      "python3 -m http.server 8000",
      "python3 -m pytest -k webbrowser",
      "python3 script.py -m webbrowser",
      "python3 -c 'print(1)'",
      "grep webbrowser *.py",
      "python3 -Wmodule script.py",
      "python3 -m cProfile script.py",
    ],
  },
  {
    id: "gui.osascript",
    decision: "deny",
    reason: GUI,
    match: named("osascript"),
    mustMatch: [
      `osascript -e 'tell application "Safari" to open location "https://example.com"'`,
      "osascript x.scpt",
    ],
    mustNotMatch: ["echo osascript", "which osascript"],
  },
  {
    id: "gui.windows-start",
    decision: "deny",
    reason: GUI,
    match: windowsStart,
    mustMatch: [
      "cmd /c start https://example.com",
      "cmd.exe /c start https://example.com",
      'cmd.exe /C "start https://example.com"',
      "explorer.exe https://example.com",
      "rundll32 url.dll,FileProtocolHandler https://example.com",
      "cmd /c st^art https://example.com",
      'cmd /c "echo x & start https://example.com"',
      "cmd /s /c start https://example.com",
      "cmd /c https://example.com",
      "cmd /c %COMSPEC% /c start x",
      "mshta https://example.com/x.hta",
      "mshta.exe 'vbscript:Close(Execute(1))'",
      "start https://example.com",
      "cmd.exe /c explorer https://example.com",
    ],
    mustNotMatch: [
      "cmd /c dir",
      "echo start",
      "npm start",
      "./start",
      "bin/start --port 3000",
      "cmd.exe /c echo started",
      "cmd /c dir C:\\x",
      "systemctl start x",
    ],
  },
  {
    id: "gui.powershell-start",
    decision: "deny",
    reason: GUI,
    match: powershellStart,
    mustMatch: [
      "powershell Start-Process https://example.com",
      "powershell.exe -Command \"Start-Process 'https://example.com'\"",
      "pwsh -c 'saps https://example.com'",
      "powershell -c start https://example.com",
      `pwsh -EncodedCommand ${Buffer.from("Start-Process https://example.com", "utf16le").toString("base64")}`,
      `powershell -enc ${Buffer.from("saps x", "utf16le").toString("base64")}`,
      "pwsh -c '[Diagnostics.Process]::Start(\"https://example.com\")'",
    ],
    mustNotMatch: [
      "powershell Get-ChildItem",
      "pwsh -c 'Write-Output started'",
      `pwsh -enc ${Buffer.from("Get-Date", "utf16le").toString("base64")}`,
    ],
  },
  {
    id: "gui.interpreter-opener",
    decision: "deny",
    reason: GUI,
    match: interpreterOpensBrowser,
    mustMatch: [
      "node -e \"require('open')('https://example.com')\"",
      "node --eval=\"import('open').then(m => m.default('x'))\"",
      'ruby -e \'require "launchy"; Launchy.open("x")\'',
      "perl -MBrowser::Open -e 'open_browser(1)'",
      "ruby -rlaunchy -e 'Launchy.open(1)'",
      "node -r open -e 1",
      "Rscript -e 'browseURL(\"https://example.com\")'",
    ],
    mustNotMatch: [
      "node -e \"console.log('open')\"",
      "perl -e 'print 1'",
      "ruby -e 'puts 1'",
      "Rscript -e 'print(1)'",
    ],
  },
  {
    id: "gui.session-bus",
    decision: "deny",
    reason: `calls the desktop session bus (a portal OpenURI or an application can open anything from there). ${BROWSER_PANEL_HINT}`,
    match: sessionBusCall,
    mustMatch: [
      "gdbus call --session --dest org.freedesktop.portal.Desktop --object-path /org/freedesktop/portal/desktop --method org.freedesktop.portal.OpenURI.OpenURI '' https://example.com {}",
      "dbus-send --session --dest=org.freedesktop.portal.Desktop --type=method_call /org/freedesktop/portal/desktop org.freedesktop.portal.OpenURI.OpenURI string: string:https://example.com dict:string:string:",
      "dbus-send --print-reply --dest=org.mozilla.firefox /x org.freedesktop.Application.Open array:string:x dict:string:variant:",
      "gdbus call -e -d org.gnome.Epiphany -o /org/gnome/Epiphany -m org.freedesktop.Application.Activate {}",
      "busctl --user call org.freedesktop.portal.Desktop /org/freedesktop/portal/desktop org.freedesktop.portal.OpenURI OpenURI ssa{sv} '' x 0",
      "qdbus org.kde.klauncher5 /KLauncher exec_blind x",
    ],
    mustNotMatch: [
      "gdbus introspect --system --dest org.freedesktop.login1 --object-path /org/freedesktop/login1",
      "busctl list",
      "dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames",
    ],
  },
  {
    id: "gui.opener-copy",
    decision: "deny",
    reason: `copies or links a GUI opener's program (running it under another name is still running it). ${BROWSER_PANEL_HINT}`,
    match: openerCopy,
    mustMatch: [
      "cp /usr/bin/xdg-open ./x",
      "ln -s /usr/bin/firefox ff",
      "install -m 755 /usr/bin/chromium bin/c",
      "cat /usr/bin/xdg-open > x",
      "dd if=/usr/bin/xdg-open of=x",
    ],
    mustNotMatch: [
      "cp xdg-open.txt notes/",
      "ln -s ../src/open.ts x",
      "cat docs/xdg-open.md",
      "cp -r src/ out/",
    ],
  },
  {
    id: "gui.doc-browser",
    decision: "deny",
    reason: GUI,
    match: (cmd) => {
      const args = cmd.argv.slice(1);
      if (cmd.name === "man") return args.some((a) => a !== undefined && /^-[a-zA-Z]*H|^--html/.test(a));
      if (cmd.name !== "git") return false;
      // Global options with a value may come first (`git -C dir help -w`): look at every word.
      if (args.some((a) => a === "web--browse" || a === "instaweb")) return true;
      return args.includes("help") && args.some((a) => a === "-w" || a === "--web");
    },
    mustMatch: [
      "git web--browse https://example.com",
      "git instaweb",
      "git help --web log",
      "man -Hfirefox ls",
      "man --html ls",
    ],
    mustNotMatch: ["git help log", "man ls", "git log --web"],
  },
  {
    id: "gui.desktop-launch",
    decision: "deny",
    reason: GUI,
    match: desktopLaunch,
    mustMatch: [
      "gtk-launch firefox.desktop",
      "dex /usr/share/applications/firefox.desktop",
      "flatpak run org.mozilla.firefox https://example.com",
      "flatpak-spawn --host xdg-open x",
      "xdotool key ctrl+t",
      "links -g https://example.com",
      "kstart5 firefox",
    ],
    mustNotMatch: [
      "flatpak list",
      "links -dump https://example.com",
      "lynx -dump https://example.com",
      "w3m -dump https://example.com",
    ],
  },
  {
    id: "gui.desktop-window",
    decision: "deny",
    reason: `opens a desktop window, dialog or notification (a GUI program); GUI programs are never run from the shell. ${BROWSER_PANEL_HINT}`,
    match: desktopWindow,
    mustMatch: [
      "notify-send 'build done'",
      "notify-send -A open=Open -w 'title' 'body'",
      "zenity --text-info --html --url https://example.com",
      "zenity --info --text hi",
      "kdialog --msgbox hi",
      "xterm -e xdg-open https://example.com",
      "xterm -hold -e 'ls; bash'",
      "gnome-terminal -- bash -c 'echo hi'",
      "x-terminal-emulator -e top",
      "konsole -e vim",
      "alacritty -e sh",
      "make && notify-send done",
    ],
    mustNotMatch: [
      "echo notify-send",
      "zenity --version",
      "xterm -v",
      "man xterm",
      "TERM=xterm-256color tput colors",
      "tput -T xterm colors",
      "command -v gnome-terminal",
      "apt-cache show zenity",
    ],
  },
];
