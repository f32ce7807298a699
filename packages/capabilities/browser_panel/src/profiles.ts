import { constants, readFileSync, readlinkSync, rmSync } from "node:fs";
import { lstat, mkdir, mkdtemp, open, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Chromium's temporary profiles: one directory per browser, under `<stateDir>/browser` —
 * the host's state directory, which sandboxed commands cannot see and the file tools refuse,
 * so nothing the model drives can plant, read or change a profile (in the OS temp directory a
 * workspace that holds /tmp could). Each is removed when its browser closes, at exit, and —
 * when its process was killed before either — by the next process that opens a browser here.
 */

const PROFILE_PREFIX = "capgate-browser-";
/** A file in each profile saying which process made it, so a later one can tell a profile left behind. */
const OWNER_FILE = "capgate-owner";
/** An owner file is a few dozen bytes; anything larger is not one of ours. */
const OWNER_MAX_BYTES = 512;

/** Who made a profile: enough to tell, later, that this process is gone for certain. */
export interface ProfileOwner {
  pid: number;
  /** The pid namespace (`/proc/self/ns/pid`'s target): a pid means something only within it. */
  pidNamespace?: string;
  /** The kernel's boot id: after a reboot every earlier process is gone. */
  boot?: string;
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22): tells a reused pid. */
  start?: string;
}

/** Profiles of browsers not yet closed: removed at exit too (a signal ends the CLI through process.exit). */
const liveProfiles = new Set<string>();
let exitHook = false;
/** Profile roots already swept by this process. */
const swept = new Set<string>();

/** This process, as its profiles' owner file names it (Linux adds namespace, boot and start time). */
export function currentOwner(): ProfileOwner {
  const owner: ProfileOwner = { pid: process.pid };
  const pidNamespace = readProc(() => readlinkSyncSafe("/proc/self/ns/pid"));
  const boot = readProc(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  const start = startTime(process.pid);
  if (pidNamespace) owner.pidNamespace = pidNamespace;
  if (boot) owner.boot = boot;
  if (start) owner.start = start;
  return owner;
}

/**
 * Whether a profile's owner is gone for certain: another boot; or the same boot and pid
 * namespace, and its pid no longer exists or now belongs to a process started at another
 * time. An owner in another pid namespace (a container sharing the directory) is never
 * taken for gone, nor one this process cannot check.
 */
export function ownerGone(owner: ProfileOwner, self: ProfileOwner = currentOwner()): boolean {
  if (owner.pid === self.pid && owner.pidNamespace === self.pidNamespace && owner.boot === self.boot)
    return false;
  if (owner.boot !== undefined && self.boot !== undefined && owner.boot !== self.boot) return true;
  if (owner.pidNamespace !== self.pidNamespace || owner.boot !== self.boot) return false;
  if (!processExists(owner.pid)) return true;
  const start = startTime(owner.pid);
  return owner.start !== undefined && start !== undefined && start !== owner.start;
}

/**
 * Remove the profiles under `root` whose owner is gone (`ownerGone`): directories named
 * `capgate-browser-*`, of this user, not symbolic links, whose owner file is a small regular
 * file (opened without following links or blocking) holding an owner. Anything else is left
 * alone. Returns what was removed.
 */
export async function sweepStaleProfiles(
  root: string,
  self: ProfileOwner = currentOwner(),
): Promise<string[]> {
  const removed: string[] = [];
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(PROFILE_PREFIX)) continue;
    const dir = join(root, name);
    try {
      const info = await lstat(dir);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
      const owner = await readOwner(join(dir, OWNER_FILE));
      if (!owner || !ownerGone(owner, self)) continue;
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      removed.push(dir);
    } catch {
      // not a profile of ours, or already gone
    }
  }
  return removed;
}

/** A fresh, private profile directory under `<stateDir>/browser` holding `preferences` and its owner. */
export async function newProfile(stateDir: string, preferences: unknown): Promise<string> {
  const root = join(stateDir, "browser");
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new Error(
      `could not make the browser's profile directory ${root} (${error instanceof Error ? error.message : String(error)}); the state directory must be writable`,
    );
  }
  if (!swept.has(root)) {
    swept.add(root);
    await sweepStaleProfiles(root);
  }
  const profile = await mkdtemp(join(root, PROFILE_PREFIX));
  liveProfiles.add(profile);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const p of liveProfiles) {
        try {
          rmSync(p, { recursive: true, force: true, maxRetries: 3 });
        } catch {
          // best effort at exit
        }
      }
    });
  }
  await writeFile(join(profile, OWNER_FILE), `${JSON.stringify(currentOwner())}\n`, { mode: 0o600 });
  await mkdir(join(profile, "Default"), { mode: 0o700 });
  await writeFile(join(profile, "Default", "Preferences"), JSON.stringify(preferences), { mode: 0o600 });
  return profile;
}

/** Remove a profile directory; a Chromium helper still exiting may write into it, so retried. */
export async function removeProfile(profile: string): Promise<void> {
  liveProfiles.delete(profile);
  await rm(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
}

/** The owner a profile's owner file names, or undefined for anything that is not a small regular file holding one. */
async function readOwner(path: string): Promise<ProfileOwner | undefined> {
  // No link is followed and a FIFO does not block the open; then only a regular file is read.
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > OWNER_MAX_BYTES) return undefined;
    const buffer = Buffer.alloc(OWNER_MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > OWNER_MAX_BYTES) return undefined;
    return parseOwner(buffer.subarray(0, bytesRead).toString("utf8"));
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function parseOwner(text: string): ProfileOwner | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, pidNamespace, boot, start } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
  const owner: ProfileOwner = { pid: pid as number };
  for (const [key, v] of [
    ["pidNamespace", pidNamespace],
    ["boot", boot],
    ["start", start],
  ] as const) {
    if (v === undefined) continue;
    if (typeof v !== "string" || v.length > 100) return undefined;
    owner[key] = v;
  }
  return owner;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time (field 22 of /proc/<pid>/stat, after the parenthesised command name), or undefined. */
function startTime(pid: number): string | undefined {
  return readProc(() => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields from the third on: state is field 3, so start time (22) is at index 19.
    return fields[19];
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

function readlinkSyncSafe(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
