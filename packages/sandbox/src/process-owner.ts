import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Which process left something behind (a browser profile, a sandbox journal entry), recorded
 * so a later process can tell, for certain, that it is gone: a pid alone means something only
 * on its own machine, in its own boot and pid namespace, and until it is reused.
 */
export interface ProcessOwner {
  pid: number;
  /** Which machine (`/etc/machine-id` and the host name; cloned images share an id): a state directory may be shared between machines. */
  machine?: string;
  /** The kernel's boot id: after a reboot of the same machine every earlier process is gone. */
  boot?: string;
  /** The pid namespace (`/proc/self/ns/pid`'s target): a pid means something only within it. */
  pidNamespace?: string;
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22): tells a reused pid. */
  start?: string;
}

let cached: ProcessOwner | undefined;

/**
 * This process as an owner record. On Linux the pid namespace and start time are recorded
 * only when /proc is this process's own (`/proc/self` is our pid): under a pid namespace
 * without its own /proc they would describe another process. Read once per process.
 */
export function currentOwner(): ProcessOwner {
  if (cached?.pid === process.pid) return { ...cached };
  const owner: ProcessOwner = { pid: process.pid };
  const id = readProc(() => readFileSync("/etc/machine-id", "utf8").trim());
  const host = readProc(() => hostname());
  const machine = id || host ? `${id ?? ""}@${host ?? ""}` : undefined;
  const boot = readProc(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  if (machine) owner.machine = machine;
  if (boot) owner.boot = boot;
  if (readProc(() => readlinkSync("/proc/self")) === String(process.pid)) {
    const pidNamespace = readProc(() => readlinkSync("/proc/self/ns/pid"));
    const start = startTime("self");
    if (pidNamespace) owner.pidNamespace = pidNamespace;
    if (start) owner.start = start;
  }
  cached = owner;
  return { ...owner };
}

/**
 * Whether an owner is gone for certain. Only an owner on this machine: after another boot;
 * or in the same boot and the same pid namespace (on Linux, where both are known), when its
 * pid no longer exists or belongs to a process started at another time. Anything else —
 * another machine, another or unknown pid namespace, this very process — is not gone
 * (whatever it left stays untouched: fail closed).
 */
export function ownerGone(
  owner: ProcessOwner,
  self: ProcessOwner = currentOwner(),
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (owner.machine === undefined || owner.machine !== self.machine) return false;
  if (owner.boot !== self.boot) return owner.boot !== undefined && self.boot !== undefined;
  if (owner.pid === self.pid && owner.pidNamespace === self.pidNamespace) return false;
  if (platform === "linux" && (owner.pidNamespace === undefined || self.pidNamespace === undefined))
    return false;
  if (owner.pidNamespace !== self.pidNamespace) return false;
  if (!processExists(owner.pid)) return true;
  if (owner.start === undefined || self.start === undefined) return false;
  const start = startTime(String(owner.pid));
  return start !== undefined && start !== owner.start;
}

/**
 * Whether an owner is running for certain: this machine, boot and pid namespace (all known),
 * its pid alive and started when the record says. The opposite of `ownerGone` only where
 * both can tell; anything else (another machine, an unknown start time) is neither.
 */
export function ownerRunning(owner: ProcessOwner, self: ProcessOwner = currentOwner()): boolean {
  if (owner.machine === undefined || owner.machine !== self.machine) return false;
  if (owner.boot === undefined || owner.boot !== self.boot) return false;
  if (owner.pidNamespace === undefined || owner.pidNamespace !== self.pidNamespace) return false;
  if (owner.start === undefined || !processExists(owner.pid)) return false;
  return owner.pid === self.pid ? owner.start === self.start : startTime(String(owner.pid)) === owner.start;
}

/**
 * An owner record from untrusted JSON (a file another process wrote): a positive safe-integer
 * pid and, when present, string fields of at most 100 characters; undefined otherwise.
 */
export function parseOwner(value: unknown): ProcessOwner | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const pid = fields.pid;
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const owner: ProcessOwner = { pid };
  for (const key of ["machine", "boot", "pidNamespace", "start"] as const) {
    const v = fields[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.length > 100) return undefined;
    owner[key] = v;
  }
  return owner;
}

/** Whether a pid exists here (EPERM: it does, as another user's). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time (field 22 of /proc/<pid>/stat, after the parenthesised command name), or undefined. */
function startTime(pid: string): string | undefined {
  return readProc(() => {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields from the third (state) on: the start time, field 22, is the 20th of them.
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  });
}

function readProc(read: () => string | undefined): string | undefined {
  try {
    const value = read();
    return value === undefined || value === "" ? undefined : value;
  } catch {
    return undefined;
  }
}
