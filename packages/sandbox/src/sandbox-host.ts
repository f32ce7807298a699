import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { CapgateError } from "@capgate/schema";

/** Where bubblewrap is looked for when the policy names no path (Debian's package installs /usr/bin/bwrap). */
export const DEFAULT_BWRAP = "/usr/bin/bwrap";

/** The fix named by every "sandbox unavailable" refusal. */
export const SANDBOX_OFF_HINT =
  'or, accepting that commands then run without an OS sandbox, set "shell": { "sandbox": "off" } in capgate.config.json';

const SEARCH_DIRS = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** An absolute path of `name` in the system directories (never $PATH, which the model may steer), or undefined. */
export function findSystemBinary(name: string): string | undefined {
  for (const dir of SEARCH_DIRS) {
    const candidate = `${dir}/${name}`;
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

let bashPath: string | undefined;

/**
 * bash's absolute path, found once. Commands run under `bash --noprofile --norc -c`, the
 * grammar the shell policy parses, never under /bin/sh (dash on Debian).
 * @throws CapgateError `sandbox_unavailable` when there is no bash.
 */
export function systemBash(): string {
  bashPath ??= findSystemBinary("bash");
  if (!bashPath) {
    throw new CapgateError(
      "sandbox_unavailable",
      "bash was not found in /usr/bin, /bin or /usr/local/bin; shell commands run under bash --noprofile --norc. Install bash (`apt-get install bash`).",
    );
  }
  return bashPath;
}

/**
 * The arguments bubblewrap gets in front of every sandbox (namespaces, lifetime). Kept in
 * one place so the probe tests exactly the options real commands use.
 */
export const BWRAP_BASE_ARGS: readonly string[] = [
  "--unshare-user",
  "--unshare-ipc",
  "--unshare-pid",
  "--unshare-net",
  "--unshare-uts",
  "--unshare-cgroup-try",
  // No nested user namespace: nothing inside can regain capabilities to undo our mounts.
  "--disable-userns",
  "--cap-drop",
  "ALL",
  "--die-with-parent",
  // setsid(): no TIOCSTI into the host's terminal, and the command is not in the host's session.
  "--new-session",
];

const probes = new Map<string, Promise<void>>();

/**
 * Check once per process (per bwrap path) that bubblewrap can start a sandbox here: the
 * binary exists and runs `true` with every namespace the real commands use. The result
 * (success or the refusal) is cached, so commands pay for it once.
 * @throws CapgateError `sandbox_unavailable` naming the fix.
 */
export function probeBwrap(bwrap: string = DEFAULT_BWRAP): Promise<void> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}

function runProbe(bwrap: string): Promise<void> {
  if (!bwrap.startsWith("/")) {
    return Promise.reject(
      new CapgateError(
        "sandbox_unavailable",
        `the sandbox's bubblewrap path must be absolute, got ${JSON.stringify(bwrap)}.`,
        { property: "shell.bwrap" },
      ),
    );
  }
  if (!executable(bwrap)) {
    return Promise.reject(
      new CapgateError(
        "sandbox_unavailable",
        `The OS sandbox cannot start: bubblewrap is not installed (no executable ${bwrap}), so the command was refused and nothing ran. Install it (\`apt-get install bubblewrap\`), ${SANDBOX_OFF_HINT}.`,
      ),
    );
  }
  const args = [...BWRAP_BASE_ARGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"];
  return new Promise((resolve, reject) => {
    execFile(bwrap, args, { timeout: 10_000, env: {} }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const detail = String(stderr).trim().split("\n").slice(-2).join(" ") || error.message;
      reject(
        new CapgateError(
          "sandbox_unavailable",
          `The OS sandbox cannot start: ${bwrap} failed its own check (${detail}), so the command was refused and nothing ran. bubblewrap needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0) and a bubblewrap of version 0.8 or newer (\`apt-get install bubblewrap\`), ${SANDBOX_OFF_HINT}.`,
          { cause: error },
        ),
      );
    });
  });
}

/** Forget cached probe results (tests that change the system underneath). */
export function resetSandboxProbes(): void {
  probes.clear();
}
