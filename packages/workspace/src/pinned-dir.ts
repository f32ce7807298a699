import { closeSync, constants, type Dirent, existsSync, openSync, readdirSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, rename, rmdir, unlink } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { PolicyDeniedError } from "@capgate/tools";
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

/**
 * A directory moved, replaced by a link, or removed while a file tool was working in it: a
 * refusal (`policy_denied`), as when the guard refuses a path — what was approved is no
 * longer there.
 */
export class DirectoryChangedError extends PolicyDeniedError {
  constructor(what: string) {
    super(
      `${what} changed while it was being worked on (a directory replaced by a link, moved or removed); nothing more was done there. Try again once it holds still.`,
    );
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
 * The entries of the directory at `real` (a real path the guard approved), read through the
 * directory held open: if a directory on the way was swapped for a link, the listing is not
 * of somewhere else — it is refused (null), as is a directory that cannot be read.
 */
export async function readDirectory(real: string): Promise<Dirent[] | null> {
  if (!haveProcFd()) return readdir(real, { withFileTypes: true }).catch(() => null);
  // Synchronous: four short system calls, where the thread pool's round trip for each would
  // cost more than the calls (a walk lists thousands of directories; measured 3–4× slower).
  let fd: number;
  try {
    fd = openSync(real, DIRECTORY_FLAGS);
  } catch {
    return null;
  }
  try {
    if (openedFileRefusal(fd, real)) return null;
    return readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true });
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** What went wrong with a file-system call, in words (the path it named is /proc/self/fd/…). */
export function fsReason(error: unknown): string {
  if (error instanceof DirectoryChangedError) return "a directory was replaced, moved or removed meanwhile";
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "EBUSY":
      return "it is a mount point or in use (EBUSY)";
    case "EACCES":
    case "EPERM":
      return `permission denied (${code})`;
    case "ENOTEMPTY":
      return "entries kept appearing in it (ENOTEMPTY)";
    case "ENOENT":
      return "it was removed meanwhile (ENOENT)";
    case "EROFS":
      return "the file system is read-only (EROFS)";
    case "ENOSPC":
      return "no space left on the device (ENOSPC)";
    case "EISDIR":
    case "ENOTDIR":
      return `it changed between a directory and a file meanwhile (${code})`;
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** A removal that stopped part-way: where, why, and how much was already removed. */
export class RemoveStoppedError extends Error {
  readonly code = "remove_stopped";
  constructor(
    /** The entry the walk stopped at (the caller's naming, e.g. workspace-relative). */
    readonly at: string,
    readonly reason: string,
    /** Entries inside the tree already removed when it stopped. */
    readonly removed: number,
    options?: { cause?: unknown },
  ) {
    super(
      `stopped at '${at}': ${reason}.${removed > 0 ? ` ${removed} entr${removed === 1 ? "y" : "ies"} inside had already been removed; the rest is as it was.` : " Nothing had been removed."}`,
      options,
    );
    this.name = "RemoveStoppedError";
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
  // ("..cache" is a name inside; ".." and "../x" are outside.)
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(`${target} is not inside ${root}`);
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
          if ((mkdirError as NodeJS.ErrnoException).code !== "EEXIST")
            throw new Error(`could not create ${join(dir.real, name)}: ${fsReason(mkdirError)}`, {
              cause: mkdirError,
            });
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
 * would be removed, never what it points to). `shown` names the entry in errors and in what
 * `check` gets (default: `name`). Returns how many entries were inside.
 * @throws RemoveStoppedError naming where it stopped, why, and how much was removed; or
 *   what `check` threw.
 */
export async function removeEntry(
  parent: PinnedDirectory,
  name: string,
  check?: RemoveCheck,
  shown = name,
): Promise<{ inside: number }> {
  const counter = { inside: 0 };
  try {
    await removeIn(parent, name, shown, 0, counter, check);
  } catch (error) {
    if (error instanceof WalkStop)
      throw new RemoveStoppedError(error.at, fsReason(error.cause), counter.inside, { cause: error.cause });
    throw error;
  }
  return counter;
}

/** A file-system failure inside the walk, with the entry it happened at. */
class WalkStop extends Error {
  constructor(
    readonly at: string,
    override readonly cause: unknown,
  ) {
    super(at);
  }
}

async function step<T>(at: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof WalkStop) throw error;
    throw new WalkStop(at, error);
  }
}

async function removeIn(
  parent: PinnedDirectory,
  name: string,
  rel: string,
  depth: number,
  counter: { inside: number },
  check: RemoveCheck | undefined,
): Promise<void> {
  const info = await step(rel, () => lstat(parent.at(name)));
  if (!info.isDirectory()) {
    // unlink never follows the name: a link is removed, not its target.
    await step(rel, () => unlink(parent.at(name)));
    return;
  }
  if (depth >= MAX_REMOVE_DEPTH)
    throw new WalkStop(
      rel,
      new Error(`nested more than ${MAX_REMOVE_DEPTH} directories deep; remove its inner parts first`),
    );
  const dir = await step(rel, () => parent.child(name));
  try {
    // A few passes: entries created while the walk runs are removed too, or it stops.
    for (let pass = 0; pass < 3; pass++) {
      const entries = await step(rel, () => readdir(dir.at("")));
      if (entries.length === 0) break;
      for (const entry of entries) {
        const entryRel = `${rel}/${entry}`;
        const entryInfo = await lstat(dir.at(entry)).catch(() => undefined);
        if (!entryInfo) continue;
        check?.(entryRel, entryInfo.isDirectory());
        await removeIn(dir, entry, entryRel, depth + 1, counter, check);
        counter.inside++;
      }
    }
  } finally {
    await dir.close();
  }
  await step(rel, () => rmdir(parent.at(name)));
}

/** Rename `fromName` in `from` to `toName` in `to` (rename never follows either name). */
export async function renameEntry(
  from: PinnedDirectory,
  fromName: string,
  to: PinnedDirectory,
  toName: string,
): Promise<void> {
  try {
    await rename(from.at(fromName), to.at(toName));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EXDEV is the caller's to handle (another file system); the rest say where, in words.
    if (code === "EXDEV") throw error;
    throw new Error(
      `could not rename ${join(from.real, fromName)} to ${join(to.real, toName)}: ${fsReason(error)}`,
      { cause: error },
    );
  }
}
