import { constants, rmSync } from "node:fs";
import { lstat, mkdir, mkdtemp, open, readdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { currentOwner, ownerGone, type ProcessOwner, parseOwner } from "@capgate/sandbox";
import { MAX_SOCKET_PATH, PROXY_SOCKET_NAME } from "./network-namespace.js";

/**
 * Chromium's temporary profiles: one directory per browser under a private root — by default
 * `<stateDir>/browser`, the host's state directory, which sandboxed commands cannot see and
 * the file tools refuse. The root must be outside the workspace (a state directory that is
 * the workspace, or inside it unhidden, would let the model plant, read or change a profile,
 * or the script that starts Chromium), a real directory of this user that no one else may
 * write (nor its parent), and short enough for the proxy's unix socket inside a profile.
 * When the state directory's root is not, a private directory in the OS temp directory is
 * used under the same checks; when neither is, the browser does not start, and says why.
 * Each profile is removed when its browser closes, at exit, and — when its process was killed
 * before either — by the next process that opens a browser under the same root.
 */

/** Profiles in a root: `p-XXXXXX` (short: the proxy's socket path must fit in 107 bytes). */
const PROFILE_PREFIX = "p-";
/** A file in each profile saying which process made it, so a later one can tell a profile left behind. */
const OWNER_FILE = "capgate-owner";
/** An owner file is a few hundred bytes at most; anything larger is not one of ours. */
const OWNER_MAX_BYTES = 512;
/** What a root's path is followed by in the relay's socket path, which must fit in `MAX_SOCKET_PATH`. */
const SOCKET_SUFFIX = `/${PROFILE_PREFIX}XXXXXX/${PROXY_SOCKET_NAME}`;
/** The sticky bit: in such a directory (/tmp) only an entry's owner may rename or remove it. */
const STICKY = 0o1000;

/** Profiles of browsers not yet closed: removed at exit too (a signal ends the CLI through process.exit). */
const liveProfiles = new Set<string>();
let exitHook = false;
/** Profile roots already swept by this process. */
const swept = new Set<string>();

/**
 * Remove the profiles under `root` whose owner is gone (`ownerGone`): directories named
 * `p-*`, of this user, not symbolic links, whose owner file is a small regular file (opened
 * without following links or blocking) naming an owner. Anything else is left alone.
 * Returns what was removed.
 */
export async function sweepStaleProfiles(
  root: string,
  self: ProcessOwner = currentOwner(),
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

/**
 * The root profiles go under, as a real path: `<stateDir>/browser`, else a private
 * `capgate-browser-<uid>` in the OS temp directory, else a fresh private directory there
 * (when another user took that name), whichever passes `checkRoot` first.
 * @throws Error naming why none can be used.
 */
export async function profileRoot(stateDir: string, workspace: string): Promise<string> {
  const uid = process.getuid?.();
  const candidates: Array<() => Promise<string>> = [
    async () => join(stateDir, "browser"),
    async () => join(tmpdir(), `capgate-browser-${uid ?? "user"}`),
    () => mkdtemp(join(tmpdir(), "capgate-browser-")),
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    let root: string;
    try {
      root = await candidate();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      continue;
    }
    const checked = await checkRoot(root, workspace);
    if ("root" in checked) return checked.root;
    problems.push(`${root}: ${checked.problem}`);
  }
  throw new Error(
    `the browser has no private directory for its profile (${problems.join("; ")}); set a state directory outside the workspace that only this user can write (config "stateDir" or $CAPGATE_HOME)`,
  );
}

/**
 * `root` (made if missing) as a real path when it can hold profiles: a real directory of this
 * user that no one else may read or write; every directory above it this user's or root's and
 * not writable by others unless sticky (whoever may write one may rename what is below it and
 * put another in its place — checked up to /, as OpenSSH checks the directories of its keys);
 * not the workspace nor inside it (by device and inode, so neither a bind mount nor a link is a
 * way around); short enough for the proxy's socket. Otherwise why not.
 */
async function checkRoot(root: string, workspace: string): Promise<{ root: string } | { problem: string }> {
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });
  } catch (error) {
    return { problem: `cannot be made (${error instanceof Error ? error.message : String(error)})` };
  }
  const uid = process.getuid?.();
  const info = await lstat(root);
  if (info.isSymbolicLink() || !info.isDirectory())
    return { problem: "is not a directory (a symbolic link is not followed)" };
  if (uid !== undefined && info.uid !== uid) return { problem: "belongs to another user" };
  if ((info.mode & 0o077) !== 0)
    return { problem: `may be read or written by others (mode ${(info.mode & 0o777).toString(8)})` };
  const real = await realpath(root);
  if (Buffer.byteLength(real + SOCKET_SUFFIX) > MAX_SOCKET_PATH)
    return { problem: `too long for the proxy's socket path (${MAX_SOCKET_PATH} bytes)` };
  const space = await stat(workspace).catch(() => undefined);
  for (let dir = real; ; dir = dirname(dir)) {
    const d = await stat(dir);
    if (space && d.dev === space.dev && d.ino === space.ino)
      return { problem: `is inside the workspace ${workspace}` };
    if (dir !== real) {
      const shared = (d.mode & 0o022) !== 0 && (d.mode & STICKY) === 0;
      if ((uid !== undefined && d.uid !== uid && d.uid !== 0) || shared)
        return { problem: `${dir} above it may be changed by another user` };
    }
    if (dirname(dir) === dir) break;
  }
  return { root: real };
}

/** A fresh, private profile directory under `root` (`profileRoot`) holding `preferences` and its owner. */
export async function newProfile(root: string, preferences: unknown): Promise<string> {
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
  await writeFile(join(profile, OWNER_FILE), `${JSON.stringify(currentOwner())}\n`, {
    mode: 0o600,
    flag: "wx",
  });
  await mkdir(join(profile, "Default"), { mode: 0o700 });
  await writeFile(join(profile, "Default", "Preferences"), JSON.stringify(preferences), {
    mode: 0o600,
    flag: "wx",
  });
  return profile;
}

/** Remove a profile directory; a Chromium helper still exiting may write into it, so retried. */
export async function removeProfile(profile: string): Promise<void> {
  liveProfiles.delete(profile);
  await rm(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
}

/** The owner a profile's owner file names, or undefined for anything that is not a small regular file holding one. */
async function readOwner(path: string): Promise<ProcessOwner | undefined> {
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
    return parseOwnerText(buffer.subarray(0, bytesRead).toString("utf8"));
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function parseOwnerText(text: string): ProcessOwner | undefined {
  try {
    return parseOwner(JSON.parse(text));
  } catch {
    return undefined;
  }
}
