import { randomBytes } from "node:crypto";
import { type Dirent, mkdirSync, readdirSync, realpathSync, writeSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { killMarkedProcesses, SANDBOX_MARK_VAR } from "@capgate/process-group";
import { CapgateError } from "@capgate/schema";
import type { ShellNetwork, ShellPolicyConfig, WebPolicyConfig } from "@capgate/tools";
import {
  hiddenPathsOf,
  isInside,
  lstatOrUndefined,
  protectPolicyFile,
  realOrUndefined,
} from "@capgate/workspace";
import { protectGit } from "./sandbox-git.js";
import { BWRAP_BASE_ARGS, DEFAULT_BWRAP, findSystemBinary, probeBwrap, systemBash } from "./sandbox-host.js";
import { journalSandbox, recoverInterruptedSandboxes } from "./sandbox-journal.js";
import { egressProxy } from "./sandbox-proxy.js";
import { assertStateDirPlacement, stateDirFor, wouldLieInWorkspace } from "./state-dir.js";

/** Directories that get a private, empty tmpfs: no host /tmp (X11 and other sockets), no /run (D-Bus, $XDG_RUNTIME_DIR). */
const PRIVATE_TMPFS = ["/tmp", "/var/tmp", "/run", "/dev/shm"];

/**
 * Variables never passed into a command (or to the browser panel's Chromium): the display and
 * session buses, agent sockets, sound servers (a page's AudioContext logs in to
 * `$PULSE_SERVER`), a TLS key log, shell start-up files.
 */
export const SCRUBBED_ENV: readonly string[] = [
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "WAYLAND_SOCKET",
  "XAUTHORITY",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "XDG_RUNTIME_DIR",
  "BROWSER",
  "SESSION_MANAGER",
  "SSH_AUTH_SOCK",
  "GPG_AGENT_INFO",
  "PULSE_SERVER",
  "PULSE_COOKIE",
  "PIPEWIRE_REMOTE",
  // Where TLS libraries (OpenSSL, NSS, Chromium) write session keys: whoever reads it decrypts the traffic.
  "SSLKEYLOGFILE",
  "BASH_ENV",
  "ENV",
];

/** Inside the sandbox the proxy's unix socket is bridged to this loopback port. */
export const SANDBOX_PROXY_PORT = 3128;
const PROXY_SOCKET_INSIDE = "/run/capgate/proxy.sock";

export interface SandboxOptions {
  /** The workspace: the only place a command may write (its real path). */
  workspace: string;
  /** The host's state directory ($CAPGATE_HOME: traces, memory, tokens) — unreadable inside. */
  stateDir?: string;
  /** Working directory (inside the workspace). */
  cwd: string;
  /** The command's environment (ctx.env); desktop variables are removed from it. */
  env: Record<string, string | undefined>;
  /** `sandbox`, `network`, `bwrap` come from here (ctx.policy.shell). */
  shell?: ShellPolicyConfig;
  /** `allowHosts` for the guarded network (ctx.policy.web). */
  web?: WebPolicyConfig;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  env: Record<string, string | undefined>;
  /** False only when the operator turned the sandbox off. */
  sandboxed: boolean;
  /**
   * Call once the process has exited (removes placeholders made for it, undoes a repository
   * it assembled at the workspace root). Returns notices for the command's output.
   */
  release(): string[];
  /**
   * Set on every process of this sandbox through bubblewrap's environment (as
   * `CAPGATE_SANDBOX_MARK`; unset for the command itself), so a stop can find and kill
   * them whoever their parent is (`killMarkedProcesses`). Absent when unsandboxed.
   */
  mark?: string;
}

/** The argv that runs a command line the way the policy parsed it: bash, no profile, no rc files. */
export function bashArgv(command: string): string[] {
  return [systemBash(), "--noprofile", "--norc", "-c", command];
}

/** The environment a command gets: `env` without desktop, bus and agent variables, nor BASH_ENV/ENV. */
export function scrubEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !SCRUBBED_ENV.includes(key)) out[key] = value;
  }
  return out;
}

/** The sandbox mode in effect for a shell policy ("on" unless the operator wrote "off"). */
export function sandboxMode(shell: ShellPolicyConfig | undefined): "on" | "off" {
  return shell?.sandbox === "off" ? "off" : "on";
}

/** The network mode in effect (default "guarded"). */
export function networkMode(shell: ShellPolicyConfig | undefined): ShellNetwork {
  return shell?.network ?? "guarded";
}

/**
 * Wrap `argv` (program and arguments) so it runs inside the OS sandbox: bubblewrap with
 * new user, pid, network, ipc, uts namespaces; the workspace read-write, everything else
 * read-only, secrets and the state dir hidden, private /tmp and /run, the git metadata that
 * makes git run programs or look elsewhere (`PROTECTED_GIT_ENTRIES`: hooks, config,
 * commondir, worktrees, modules, …) read-only; the network per `shell.network`; the whole
 * sandbox killed with its parent. With `"sandbox": "off"` the argv is returned as is (env
 * still scrubbed).
 * @throws CapgateError `sandbox_unavailable` (nothing ran) when the sandbox cannot start
 *   here; `unsafe_repository` when the workspace's `.git` (or an entry of it) is a
 *   symbolic link the sandbox cannot pin.
 */
export async function sandboxCommand(
  argv: readonly string[],
  options: SandboxOptions,
): Promise<SandboxedCommand> {
  const [file, ...rest] = argv;
  if (file === undefined) throw new TypeError("sandboxCommand: argv is empty");
  const env = scrubEnv(options.env);
  if (sandboxMode(options.shell) === "off") {
    return { file, args: rest, env, sandboxed: false, release: () => [] };
  }
  // Before anything is recovered from or written to the journal: a state directory the
  // command could reach would let it forge what the next sandbox's recovery acts on. Both
  // journals count: the configured one and the default one ($CAPGATE_HOME, ~/.capgate) that
  // a record is mirrored to and every config loader recovers from. Each is created here,
  // before the hide list is built: one that does not exist yet would not be hidden, and the
  // journal record written below would create it in the command's reach.
  const journals: string[] = [];
  if (options.stateDir) {
    const own = resolve(options.stateDir);
    const fallback = resolve(stateDirFor(undefined, options.cwd));
    for (const dir of fallback === own ? [own] : [own, fallback]) {
      assertStateDirPlacement(options.workspace, dir);
      try {
        mkdirSync(join(dir, "sandboxes"), { recursive: true, mode: 0o700 });
        journals.push(dir);
      } catch {
        // The default one is best effort (it may be unwritable where a config names its own
        // state directory for that reason) — unless it would lie in the workspace: it could
        // not be hidden, and the command could create it with a journal of its own. The
        // configured one must be writable, and its journal record says so below if it is not.
        if (dir === own) journals.push(dir);
        else if (wouldLieInWorkspace(options.workspace, dir))
          throw new CapgateError(
            "invalid_workspace",
            `capgate's default state directory '${dir}' ($CAPGATE_HOME, else ~/.capgate) cannot be created, and it would lie in the workspace, where the command could create it with records of its own; the command was refused and nothing ran. Set CAPGATE_HOME to a directory outside the workspace.`,
            { property: "stateDir" },
          );
      }
    }
  }
  const bwrap = options.shell?.bwrap ?? DEFAULT_BWRAP;
  await probeBwrap(bwrap);
  const network = networkMode(options.shell);

  const args: string[] = [...BWRAP_BASE_ARGS];
  // Also inside, whatever environment the spawner adds (an MCP client merges its own): none of these exist there.
  for (const name of SCRUBBED_ENV) args.push("--unsetenv", name);
  // The kernel's resolution (`..` in a link's target after the link): the JS one differs.
  const workspace = realpathSync.native(options.workspace);
  // Programs the host put on the command's PATH under /tmp & co. stay callable (read-only).
  const shown = [...pathDirsUnderTmpfs(env.PATH, workspace), ...programDirsUnderTmpfs(argv, workspace)];
  const hidden = hiddenPaths(options, workspace, shown);
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  for (const dir of PRIVATE_TMPFS) args.push("--tmpfs", dir);
  for (const dir of shown) args.push("--ro-bind", dir, dir);
  // Secrets that contain the workspace are hidden first, so the workspace bind shows through them.
  // (Their tmpfs stays writable: bubblewrap must create the workspace's mount point in it; writes there vanish.)
  for (const h of hidden.filter((p) => isInside(p.path, workspace))) args.push(...hide(h, false));
  args.push("--bind", workspace, workspace);
  // What a capgate process killed mid-command (SIGKILL, the OOM killer) left undone is done
  // first, before this command's checks judge the workspace.
  const recovered = options.stateDir ? recoverInterruptedSandboxes(options.stateDir) : [];
  const policyFile = protectPolicyFile(workspace);
  const pinned = new Set<string>();
  // The directories leading to the working directory's policy file, pinned before any mount
  // inside them (binding a directory later would cover the mounts already made below it).
  for (const dir of policyFile.pins) {
    pinned.add(dir);
    args.push("--bind", dir, dir);
  }
  // One hidden path inside another is hidden with it (and pinning its parents would bind the
  // outer one's content back over its tmpfs).
  const others = hidden.filter((p) => !isInside(p.path, workspace));
  const outermost = others.filter((h) => !others.some((o) => o !== h && isInside(o.path, h.path)));
  const dotGit = join(workspace, ".git");
  const underGit = outermost.filter((h) => isInside(dotGit, h.path));
  for (const h of outermost.filter((p) => !underGit.includes(p))) {
    // A secret inside the workspace (~/.config/gcloud with the workspace at ~): every
    // directory between the workspace and it is bound onto itself first, because a plain
    // directory holding a mount point can be renamed (`mv .config .config2` would carry the
    // hiding tmpfs along and leave the secret under a name the next command does not hide).
    if (isInside(workspace, h.path)) {
      for (const dir of ancestorsBelow(workspace, h.path)) {
        if (pinned.has(dir)) continue;
        pinned.add(dir);
        args.push("--bind", dir, dir);
      }
    }
    args.push(...hide(h, true));
  }
  const gitProtection = protectGit(workspace);
  const git = {
    args: gitProtection.args,
    release: (): string[] => {
      const notices = [...recovered.splice(0), ...gitProtection.release()];
      const notice = policyFile.release();
      return notice ? [...notices, notice] : notices;
    },
  };
  args.push(...policyFile.args, ...git.args);
  // A hidden path under .git (a state dir configured there) is hidden after the repository's
  // own mounts, which bind the host's .git and would cover an earlier tmpfs. Its parents are
  // not re-bound: that would undo the read-only git entries.
  for (const h of underGit) args.push(...hide(h, true));

  let inner = [file, ...rest];
  if (network !== "none") {
    const socat = findSystemBinary("socat");
    if (!socat) {
      git.release();
      throw new CapgateError(
        "sandbox_unavailable",
        `The sandbox's network bridge needs socat, which is not installed, so the command was refused and nothing ran. Install it (\`apt-get install socat\`), or set "shell": { "network": "none" } in capgate.config.json for commands without network.`,
      );
    }
    let proxy: Awaited<ReturnType<typeof egressProxy>>;
    try {
      proxy = await egressProxy(network, options.web?.allowHosts ?? []);
    } catch (error) {
      git.release();
      throw error;
    }
    args.push("--bind", proxy.socketPath, PROXY_SOCKET_INSIDE);
    for (const [name, value] of Object.entries(proxyEnv(network, options.web?.allowHosts ?? []))) {
      env[name] = value;
      args.push("--setenv", name, value);
    }
    inner = [
      systemBash(),
      "--noprofile",
      "--norc",
      "-c",
      bridgeScript(socat),
      "capgate-sandbox",
      file,
      ...rest,
    ];
  }
  const mark = randomBytes(12).toString("hex");
  args.push("--unsetenv", SANDBOX_MARK_VAR, "--chdir", options.cwd, "--", ...inner);
  let unjournal = (): void => undefined;
  if (options.stateDir) {
    const entry = { workspace, missingPolicyFiles: [...policyFile.missing] };
    try {
      const own = journalSandbox(options.stateDir, mark, entry);
      // Also where a capgate process with another config (no stateDir, or another one) looks
      // first, $CAPGATE_HOME or ~/.capgate: its config loader must see this sandbox too. Best
      // effort: that directory may be unwritable where a config names its own for that reason.
      const fallback = stateDirFor(undefined, options.cwd);
      let shared = (): void => undefined;
      if (journals.includes(resolve(fallback)) && resolve(fallback) !== resolve(options.stateDir)) {
        try {
          shared = journalSandbox(fallback, mark, entry);
        } catch {
          // the configured state directory still holds the record
        }
      }
      unjournal = () => {
        own();
        shared();
      };
    } catch (error) {
      git.release();
      throw new CapgateError(
        "sandbox_unavailable",
        `The sandbox could not record the command in the state directory ${options.stateDir} (${error instanceof Error ? error.message : String(error)}), so a crash could not be cleaned up after; the command was refused and nothing ran. Make the state directory writable.`,
      );
    }
  }
  const release = (): string[] => {
    active.delete(mark);
    const notices = git.release();
    unjournal();
    return notices;
  };
  active.set(mark, release);
  watchExit();
  return {
    file: bwrap,
    args,
    env: { ...env, [SANDBOX_MARK_VAR]: mark },
    sandboxed: true,
    release,
    mark,
  };
}

/** Sandboxes of this process not yet released, by mark. */
const active = new Map<string, () => string[]>();
let watchingExit = false;

/**
 * When the host process exits with sandboxes still running (`process.exit`, the CLI's
 * answer to Ctrl-C, SIGTERM and SIGHUP), their after-command steps must still happen: a
 * command the user interrupted must not leave planted links in .git or a repository it
 * assembled at the workspace root. Exit handlers run synchronously, as all of that is.
 */
function watchExit(): void {
  if (watchingExit) return;
  watchingExit = true;
  process.on("exit", () => {
    // The process is going: the notices can only go to stderr, written synchronously.
    for (const notice of releaseActiveSandboxes()) {
      try {
        writeSync(2, `[capgate] ${notice}\n`);
      } catch {
        // stderr closed
      }
    }
  });
}

/**
 * Stop every sandbox of this process that has not been released, then release each
 * (placeholders removed, planted links removed, a root repository disabled). Killed first,
 * so no command can undo the clean-up after it. Called on exit; safe to call any time.
 * @returns the notices the releases gave.
 */
export function releaseActiveSandboxes(): string[] {
  const notices: string[] = [];
  for (const [mark, release] of [...active]) {
    killMarkedProcesses(mark);
    notices.push(...release());
  }
  return notices;
}

/**
 * The proxy variables. Loopback names bypass the proxy (so a server the same command
 * started is reached on the sandbox's own loopback) — except with `full`, or when an
 * `allowHosts` entry names a loopback host: then the operator wants the host's one, which
 * only the proxy can reach.
 */
function proxyEnv(network: ShellNetwork, allowHosts: readonly string[]): Record<string, string> {
  const http = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  const socks = `socks5h://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  const hostLoopback =
    network === "full" ||
    allowHosts.some((h) => /^(localhost\.?|127(\.\d{1,3}){3}|\[::1\]|::1)(:\d+)?$/i.test(h.trim()));
  const noProxy = hostLoopback ? "" : "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/**
 * Runs first inside the sandbox: bridge 127.0.0.1:3128 to the host proxy's socket, wait
 * until the port listens (read from /proc/net/tcp: no connection is made), then exec the
 * command. socat dies with the sandbox's pid namespace when the command ends.
 */
function bridgeScript(socat: string): string {
  const port = SANDBOX_PROXY_PORT.toString(16).toUpperCase().padStart(4, "0");
  return [
    `${socat} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${PROXY_SOCKET_INSIDE} </dev/null >/dev/null 2>&1 &`,
    "i=0",
    `while ! grep -q ': 0100007F:${port} 00000000:0000 0A' /proc/net/tcp; do`,
    '  i=$((i+1)); if [ "$i" -gt 1000 ]; then echo "capgate sandbox: the network bridge did not start" >&2; exit 125; fi',
    "  sleep 0.002",
    "done",
    'exec "$@"',
  ].join("\n");
}

interface HiddenMount {
  path: string;
  directory: boolean;
}

/** Existing secret paths and the state dir, by real path too (the one list of hidden-paths.ts). */
function hiddenPaths(options: SandboxOptions, workspace: string, shown: readonly string[]): HiddenMount[] {
  const out = new Map<string, HiddenMount>();
  const scope = { env: options.env, ...(options.stateDir ? { stateDir: options.stateDir } : {}) };
  for (const { path } of hiddenPathsOf(scope)) {
    // The workspace itself cannot be hidden from its own command (a state dir equal to it is refused above).
    if (path === workspace) continue;
    // Under a private tmpfs it is empty already — unless the workspace bind brings it back
    // (a secret inside a workspace under /tmp) or must show through it.
    // A directory shown from under /tmp (a program's, see `shown`) brings back what it holds.
    if (
      PRIVATE_TMPFS.some((t) => isInside(t, path)) &&
      !isInside(path, workspace) &&
      !isInside(workspace, path) &&
      !shown.some((dir) => isInside(dir, path) || isInside(path, dir))
    )
      continue;
    const st = lstatOrUndefined(path);
    if (!st || st.isSymbolicLink()) continue;
    out.set(path, { path, directory: st.isDirectory() });
  }
  return [...out.values()];
}

/**
 * A program (or its script, argv[1]) installed under /tmp & co. — a checkout in /tmp, say —
 * must stay runnable with its siblings (node_modules): the top-level directory holding it
 * (`/tmp/<name>`) is shown read-only. Only for regular files, only a directory this user
 * owns, and never a dot-directory (`/tmp/.X11-unix` and the other socket directories), so a
 * command line cannot bring a desktop socket back.
 */
function programDirsUnderTmpfs(argv: readonly string[], workspace: string): string[] {
  const out = new Set<string>();
  for (const entry of argv.slice(0, 2)) {
    if (!entry?.startsWith("/")) continue;
    const real = realOrUndefined(entry);
    if (!real || isInside(workspace, real) || !lstatOrUndefined(real)?.isFile()) continue;
    // /run and /dev/shm hold runtime sockets (the session bus, the desktop's), never programs to show.
    const tmpfs = PROGRAM_TMPFS.find((t) => isInside(t, real) && real !== t);
    if (!tmpfs) continue;
    const top = real.slice(tmpfs.length + 1).split(sep)[0];
    if (!top) continue;
    const dir = join(tmpfs, top);
    // A socket in it (a bus or agent some program of the user's left there) would come back
    // with it: read-only does not stop a connect. Such a directory is not shown.
    if (!showableUnderTmpfs(dir)) continue;
    out.add(dir);
  }
  return [...out];
}

/**
 * Whether the sandbox may show `dir` (a real path) read-only from under a private tmpfs:
 * under /tmp or /var/tmp but not the mount itself, no dot-directory on the way
 * (`/tmp/.X11-unix`), a directory this user owns, holding no socket.
 */
function showableUnderTmpfs(dir: string): boolean {
  const tmpfs = PROGRAM_TMPFS.find((t) => isInside(t, dir) && dir !== t);
  if (!tmpfs) return false;
  if (
    dir
      .slice(tmpfs.length + 1)
      .split(sep)
      .some((part) => part.startsWith("."))
  )
    return false;
  const st = lstatOrUndefined(dir);
  if (!st?.isDirectory() || st.uid !== process.getuid?.()) return false;
  return !holdsSocket(dir);
}

/** The private tmpfs mounts a program's directory may be shown from. */
const PROGRAM_TMPFS = ["/tmp", "/var/tmp"];
/** Most entries looked at for a socket before a directory is judged unsafe to show. */
const SOCKET_SCAN_LIMIT = 50_000;

/**
 * Whether `dir` holds a socket anywhere below it — or is too large to tell (more than
 * SOCKET_SCAN_LIMIT entries, which counts as holding one). `node_modules` and `.git` trees
 * are not entered: package managers and git create no sockets there, and they are most of
 * a checkout's entries.
 */
function holdsSocket(dir: string): boolean {
  const queue = [dir];
  let seen = 0;
  while (queue.length > 0) {
    const current = queue.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > SOCKET_SCAN_LIMIT) return true;
      if (entry.isSocket()) return true;
      if (entry.isDirectory() && entry.name !== "node_modules" && entry.name !== ".git") {
        queue.push(join(current, entry.name));
      }
    }
  }
  return false;
}

/**
 * Real, existing directories of `PATH` that the private tmpfs mounts would otherwise hide,
 * shown read-only on the same terms as a program's directory (`showableUnderTmpfs`):
 * under /tmp or /var/tmp only (never /run or /dev/shm, where runtime sockets live), not the
 * tmpfs root itself, no dot-directory on the way (`/tmp/.X11-unix`), owned by this user,
 * and holding no socket. Otherwise `PATH=…:/tmp` would bring the X display's and the
 * session bus's sockets back into the sandbox.
 */
function pathDirsUnderTmpfs(path: string | undefined, workspace: string): string[] {
  const out = new Set<string>();
  for (const entry of (path ?? "").split(":")) {
    if (!entry.startsWith("/")) continue;
    const real = realOrUndefined(entry);
    if (!real || isInside(workspace, real)) continue;
    if (showableUnderTmpfs(real)) out.add(real);
  }
  return [...out];
}

/** The directories strictly between `top` and `path` (outermost first); `path` lies inside `top`. */
function ancestorsBelow(top: string, path: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(path); dir !== top && isInside(top, dir); dir = dirname(dir)) out.unshift(dir);
  return out;
}

function hide(h: HiddenMount, readOnly: boolean): string[] {
  if (!h.directory) return ["--ro-bind", "/dev/null", h.path];
  return readOnly ? ["--tmpfs", h.path, "--remount-ro", h.path] : ["--tmpfs", h.path];
}
