import { readdirSync, readFileSync } from "node:fs";
import { onExit } from "signal-exit";

/** Default time between SIGTERM and SIGKILL when a process group is stopped. */
export const DEFAULT_KILL_GRACE_MS = 2000;

const POLL_MS = 25;
/** Tracked groups, each with the mark its processes carry (see `killMarkedProcesses`), if any. */
const live = new Map<number, string | undefined>();
let exitHookInstalled = false;

/**
 * Remember a process group so it is SIGKILLed if the host exits (normally or by a signal)
 * while the group still runs — and with it every process carrying `mark`, which a group
 * signal misses once they left the group (setsid). Children are spawned detached (their
 * own group) so they would otherwise outlive the host.
 */
export function trackGroup(pgid: number, mark?: string): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    onExit(() => {
      for (const [id, marked] of live) {
        signalGroup(id, "SIGKILL");
        if (marked) killMarkedProcesses(marked);
      }
    });
  }
  live.set(pgid, mark);
}

export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}

/** Process groups currently tracked (for diagnostics and tests). */
export function trackedGroups(): number[] {
  return [...live.keys()];
}

/** Send `signal` to every process of the group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while any process of the group is still running. Zombies (dead, waiting for a parent
 * that may never reap them) do not count, so an init that does not reap cannot stall a stop.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = groupMembers(pgid);
  return members === undefined || members.length > 0;
}

/**
 * PIDs of the running (non-zombie) processes in a group, read from /proc; undefined where
 * /proc is not available (macOS), in which case callers fall back to kill(-pgid, 0).
 */
export function groupMembers(pgid: number): number[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const members: number[] = [];
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid pgrp …" — comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") members.push(Number(name));
  }
  return members;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stop a whole process group: SIGTERM, wait up to `graceMs` for it to empty, then SIGKILL.
 * Resolves once the group is gone or SIGKILL was sent (a zombie nobody reaps may linger).
 */
export async function terminateGroup(pgid: number, graceMs = DEFAULT_KILL_GRACE_MS): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) {
    untrackGroup(pgid);
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(POLL_MS);
    if (!groupAlive(pgid)) {
      untrackGroup(pgid);
      return;
    }
  }
  signalGroup(pgid, "SIGKILL");
  // Give the kernel a moment to deliver it, so callers can rely on the group being gone.
  for (let i = 0; i < 20 && groupAlive(pgid); i++) await sleep(POLL_MS);
  untrackGroup(pgid);
}

/**
 * The environment variable that marks every process of one OS sandbox (see
 * `sandboxCommand`), and of one contained command where no pid namespace can be had (see
 * `containCommand`).
 */
export const SANDBOX_MARK_VAR = "CAPGATE_SANDBOX_MARK";

/**
 * SIGKILL every process whose environment carries `CAPGATE_SANDBOX_MARK=<mark>`. A sandbox
 * is started with its own mark in bubblewrap's environment, so its processes are found
 * whoever their parent is now: bubblewrap's child normally dies with bubblewrap
 * (`--die-with-parent`), but one stopped while it is still setting up leaves that child
 * running, re-parented to init. Killing the child — the sandbox's PID-namespace init —
 * ends everything inside. Returns how many were signalled; 0 where /proc is unreadable.
 */
export function killMarkedProcesses(mark: string): number {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return 0;
  }
  const needle = Buffer.from(`\0${SANDBOX_MARK_VAR}=${mark}\0`);
  const first = Buffer.from(`${SANDBOX_MARK_VAR}=${mark}\0`);
  let killed = 0;
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (environ.indexOf(needle) < 0 && environ.subarray(0, first.length).compare(first) !== 0) continue;
    try {
      process.kill(Number(name), "SIGKILL");
      killed++;
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}
