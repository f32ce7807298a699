import { constants, existsSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, rename, rmdir, unlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { openedFileRefusal } from "./opened-file.js";

/**
 * Directories held open while a file tool changes what is in them, so that each change
 * lands in the directory the guard approved, whatever happens to the path meanwhile.
 *
 * The guard checks a path, then the tool acts on it by name; a directory on the way
 * swapped for a symbolic link in between (a background shell can do that in a loop) would
 * send a delete, a rename or a mkdir elsewhere — outside the workspace or under ~/.ssh.
 * Node has no `unlinkat` / `renameat` / `mkdirat`, but Linux gives the same guarantee
 * through `/proc/self/fd/N/<name>`: the kernel resolves `/proc/self/fd/N` to the very
 * directory open as N (not to a path it looks up again), and the final name is taken in
 * it without following a link. A directory is opened by its real path and checked with the
 * kernel's account of where the open landed (`openedFileRefusal`); each directory below it
 * is opened *through* its parent with O_NOFOLLOW, so no link is ever followed on the way.
 *
 * Where there is no /proc (other systems) the names are used as they are and the race of
 * docs/security.md stays open there.
 */

/** Deepest directory tree a removal walks (each level holds one open directory). */
export const MAX_REMOVE_DEPTH = 256;

const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

let procChecked: boolean | undefined;
function haveProcFd(): boolean {
  procChecked ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return procChecked;
}

/** A directory moved, replaced by a link, or removed while a file tool was working in it. */
export class DirectoryChangedError extends Error {
  readonly code = "directory_changed";
  constructor(what: string) {
    super(`${what} changed while it was being worked on (a directory replaced, moved or removed); stopped`);
    this.name = "DirectoryChangedError";
  }
}

/** One directory held open: `at(name)` names an entry in exactly this directory. */
export class PinnedDirectory {
  private constructor(
    private readonly handle: FileHandle | undefined,
    /** The directory's real path when it was opened (for messages and checks). */
    readonly real: string,
  ) {}

  /** Open the directory at `real` (an absolute real path the guard approved) and check where the open landed. */
  static async open(real: string): Promise<PinnedDirectory> {
    if (!haveProcFd()) return new PinnedDirectory(undefined, real);
    const handle = await openDirectory(real, real);
    const refusal = openedFileRefusal(handle.fd, real);
    if (refusal) {
      await handle.close();
      throw new DirectoryChangedError(real);
    }
    return new PinnedDirectory(handle, real);
  }

  /** Open the directory `name` inside this one, never through a link. */
  async child(name: string): Promise<PinnedDirectory> {
    const real = join(this.real, name);
    if (!this.handle) return new PinnedDirectory(undefined, real);
    return new PinnedDirectory(await openDirectory(this.at(name), real), real);
  }

  /** A path naming `name` in exactly this directory ("" for the directory itself). */
  at(name: string): string {
    if (name !== "" && (name === "." || name === ".." || name.includes("/") || name.includes("\0")))
      throw new Error(`not a single entry name: ${JSON.stringify(name)}`);
    if (!this.handle) return name === "" ? this.real : join(this.real, name);
    return name === "" ? `/proc/self/fd/${this.handle.fd}` : `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
  }
}

async function openDirectory(path: string, shown: string): Promise<FileHandle> {
  try {
    return await open(path, DIRECTORY_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A link (ELOOP) or a file (ENOTDIR) where the directory was: it was swapped.
    if (code === "ELOOP" || code === "ENOTDIR") throw new DirectoryChangedError(shown);
    throw error;
  }
}

/** Run `work` with the directory at `real` held open; it is closed after. */
export async function withPinnedDirectory<T>(
  real: string,
  work: (dir: PinnedDirectory) => Promise<T>,
): Promise<T> {
  const dir = await PinnedDirectory.open(real);
  try {
    return await work(dir);
  } finally {
    await dir.close();
  }
}

/**
 * `mkdir -p` of `target` (an absolute path inside `root`, both real), each missing
 * directory created inside its parent held open from `root` down: a link put on the way
 * is never followed. Returns the deepest directory, open (the caller closes it), and
 * whether any directory was created.
 */
export async function makeDirectories(
  root: string,
  target: string,
): Promise<{ dir: PinnedDirectory; created: boolean }> {
  const rel = relative(root, target);
  if (rel.startsWith("..") || rel.startsWith(sep)) throw new Error(`${target} is not inside ${root}`);
  const names = rel === "" ? [] : rel.split(sep);
  let dir = await PinnedDirectory.open(root);
  let created = false;
  try {
    for (const name of names) {
      let next: PinnedDirectory;
      try {
        next = await dir.child(name);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        try {
          await mkdir(dir.at(name));
          created = true;
        } catch (mkdirError) {
          if ((mkdirError as NodeJS.ErrnoException).code !== "EEXIST") throw mkdirError;
        }
        next = await dir.child(name);
      }
      await dir.close();
      dir = next;
    }
    return { dir, created };
  } catch (error) {
    await dir.close();
    throw error;
  }
}

/** What a removal walk checks before it removes an entry (throw to stop). */
export type RemoveCheck = (relPath: string, isDirectory: boolean) => void;

/**
 * Remove the entry `name` of `parent` and, for a directory, everything in it: each
 * directory is opened through its parent without following links and emptied through its
 * own descriptor, so a directory swapped for a link mid-way stops the walk (its link alone
 * would be removed, never what it points to). Returns how many entries were inside.
 */
export async function removeEntry(
  parent: PinnedDirectory,
  name: string,
  check?: RemoveCheck,
): Promise<{ inside: number }> {
  const counter = { inside: 0 };
  await removeIn(parent, name, name, 0, counter, check);
  return counter;
}

async function removeIn(
  parent: PinnedDirectory,
  name: string,
  rel: string,
  depth: number,
  counter: { inside: number },
  check: RemoveCheck | undefined,
): Promise<void> {
  const info = await lstat(parent.at(name));
  if (!info.isDirectory()) {
    // unlink never follows the name: a link is removed, not its target.
    await unlink(parent.at(name));
    return;
  }
  if (depth >= MAX_REMOVE_DEPTH)
    throw new Error(
      `${rel} is nested more than ${MAX_REMOVE_DEPTH} directories deep; remove its inner parts first`,
    );
  const dir = await parent.child(name);
  try {
    // A few passes: entries created while the walk runs are removed too, or it stops.
    for (let pass = 0; pass < 3; pass++) {
      const entries = await readdir(dir.at(""));
      if (entries.length === 0) break;
      for (const entry of entries) {
        const entryRel = `${rel}/${entry}`;
        const entryInfo = await lstat(dir.at(entry)).catch(() => undefined);
        if (!entryInfo) continue;
        check?.(entryRel, entryInfo.isDirectory());
        counter.inside++;
        await removeIn(dir, entry, entryRel, depth + 1, counter, check);
      }
    }
  } finally {
    await dir.close();
  }
  await rmdir(parent.at(name));
}

/** Rename `fromName` in `from` to `toName` in `to` (rename never follows either name). */
export async function renameEntry(
  from: PinnedDirectory,
  fromName: string,
  to: PinnedDirectory,
  toName: string,
): Promise<void> {
  await rename(from.at(fromName), to.at(toName));
}
