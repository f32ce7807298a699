import type { ResolvedCommand } from "./shell-commands.js";

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
];

const PYTHON = /^(python|pypy|py)(\d+(\.\d+)*)?w?$/;
const BROWSER_MODULES = new Set(["webbrowser", "antigravity"]);
const BROWSER_CODE = /\b(webbrowser|antigravity)\b/;

/** `python -m webbrowser`, `python3 -c 'import webbrowser…'`, or such code on stdin. */
function pythonOpensBrowser(cmd: ResolvedCommand): boolean {
  if (!PYTHON.test(cmd.name)) return false;
  const { argv } = cmd;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return false;
    if (a === "-") break;
    if (!a.startsWith("-")) return false; // a script file: its contents are not checked
    if (a.startsWith("--")) continue;
    if (a === "-W" || a === "-X") {
      i++;
      continue;
    }
    // Short options cluster (`-Im webbrowser`); -m and -c take the rest or the next word.
    const at = a.slice(1).search(/[mc]/);
    if (at === -1) continue;
    const letter = a[at + 1];
    const value = a.length > at + 2 ? a.slice(at + 2) : argv[i + 1];
    if (value === undefined) return false;
    return letter === "m" ? BROWSER_MODULES.has(value) : BROWSER_CODE.test(value);
  }
  return cmd.stdin.kind === "text" && BROWSER_CODE.test(cmd.stdin.text);
}

function windowsStart(cmd: ResolvedCommand): boolean {
  if (cmd.name === "explorer") return true;
  if (cmd.name === "rundll32")
    return cmd.argv.some((a) => a !== undefined && /url\.dll|shell32|FileProtocolHandler|ShellExec/i.test(a));
  if (cmd.name !== "cmd") return false;
  const at = cmd.argv.findIndex((a) => a !== undefined && /^\/[ck]$/i.test(a));
  if (at === -1) return false;
  const line = cmd.argv.slice(at + 1).join(" ");
  return /(^|[\s&|()^"])(start|explorer(\.exe)?|rundll32(\.exe)?)(?=[\s"]|$)/i.test(line);
}

function powershellStart(cmd: ResolvedCommand): boolean {
  if (cmd.name !== "powershell" && cmd.name !== "pwsh") return false;
  const line = cmd.argv.slice(1).join(" ");
  return /start-process|\bsaps\b|(^|[\s;&|({])start\s|invoke-item|(^|[\s;&|({])ii\s|::start\(|explorer(\.exe)?\b/i.test(
    line,
  );
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
    ),
    mustMatch: [
      "xdg-open https://example.com",
      "/usr/bin/xdg-open x",
      "x''dg-open x",
      "true && wslview https://example.com",
      "npx open-cli https://example.com",
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
    match: named("open"),
    mustMatch: [
      "open https://example.com",
      "open -a Safari https://example.com",
      "/usr/bin/open index.html",
      "ls; open .",
    ],
    mustNotMatch: [
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
      if (cmd.name === "gio") return ["open", "launch"].includes(firstOperand(cmd) ?? "");
      if (cmd.name.startsWith("kioclient") || cmd.name === "kfmclient") {
        return ["exec", "openurl", "newtab", "openprofile"].includes(firstOperand(cmd) ?? "");
      }
      return false;
    },
    mustMatch: [
      "gio open https://example.com",
      "gio launch app.desktop",
      "kioclient5 exec https://example.com",
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
    ],
    mustNotMatch: [
      "python3 -m http.server 8000",
      "python3 -m pytest -k webbrowser",
      "python3 script.py -m webbrowser",
      "python3 -c 'print(1)'",
      "grep webbrowser *.py",
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
    ],
    mustNotMatch: ["cmd /c dir", "echo start", "npm start", "cmd.exe /c echo started"],
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
    ],
    mustNotMatch: ["powershell Get-ChildItem", "pwsh -c 'Write-Output started'"],
  },
];
