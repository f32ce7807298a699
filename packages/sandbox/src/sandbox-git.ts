import {
  chmodSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { CapgateError } from "@capgate/schema";
import {
  hasRepositoryLayout,
  isInside,
  lstatOrUndefined,
  PROTECTED_GIT_ENTRIES,
  realOrUndefined,
  renameAside,
} from "@capgate/workspace";

/** Bubblewrap arguments that keep a workspace's git metadata out of a command's reach, and their undo. */
export interface GitProtection {
  args: string[];
  /**
   * Call once the command has exited: removes links it planted under `.git` and the
   * placeholders made for it (once no other sandbox of this process uses them), and breaks
   * a repository layout it assembled at the workspace root. Returns what was done that the
   * command's caller should hear (one sentence each), usually nothing.
   */
  release(): string[];
}

/**
 * Placeholders this process has put in place (empty files and directories bubblewrap
 * created as mount points), with how many running sandboxes use each. A second sandbox
 * started while one is there must treat it as the placeholder it is — not as an existing
 * entry (a `.git` placeholder taken for a real repository would be bound writable).
 */
const placeholders = new Map<string, { text: string | undefined; users: number }>();
/**
 * What a missing file's placeholder holds. Empty, except `commondir`: git dies on an empty
 * one, while "." names the repository itself (what no commondir means).
 */
const PLACEHOLDER_TEXT: Readonly<Record<string, string>> = { commondir: ".\n" };

let sourceDir: string | undefined;
const sources = new Map<string, string>();

/**
 * A directory (`text` undefined) or read-only regular file with `text` to bind a
 * placeholder from. Not /dev/null: a device node bound into the sandbox cannot be opened
 * there (EACCES), and git must be able to read a placeholder `config` or `commondir`.
 */
function placeholderSource(text: string | undefined): string {
  const key = text ?? "/";
  let source = sources.get(key);
  if (!source) {
    sourceDir ??= mkdtempSync(join(tmpdir(), "capgate-empty-"));
    source = join(sourceDir, `${sources.size}`);
    if (text === undefined) mkdirSync(source, { mode: 0o555 });
    else writeFileSync(source, text, { mode: 0o444 });
    sources.set(key, source);
  }
  return source;
}

function refuse(workspace: string, path: string, what: string): CapgateError {
  const rel = relative(workspace, path);
  return new CapgateError(
    "unsafe_repository",
    `'${rel}' is a symbolic link, so the sandbox cannot keep a command from replacing it with a ${what} of its own that your git would then trust (a mount cannot pin a link); the command was refused and nothing ran. Replace the link with the file or directory itself (\`cp -rL ${rel} ${rel}.tmp && rm ${rel} && mv ${rel}.tmp ${rel}\`).`,
    { property: "workspace" },
  );
}

/**
 * Make `.git` safe from a command: every entry of PROTECTED_GIT_ENTRIES becomes a
 * read-only mount point — the entry itself when it exists, an empty placeholder file or
 * directory when it does not, so the command can neither change nor
 * create it — and `.git` plus every directory on the way to a protected entry is bound
 * onto itself, because a mount point cannot be renamed or removed while a plain directory
 * holding one can (`mv .git/objects aside` would take the protected alternates along).
 *
 * Without any `.git`, an empty read-only `.git` stands in, so the command cannot create a
 * repository whose hooks and config someone else's git would trust. A `.git` *file*
 * (`gitdir:` pointer) is pinned read-only, and the directory it names is protected the
 * same way when it lies inside the workspace (outside, everything is read-only anyway). A
 * `.git` that is a symbolic link, or a symbolic link at a protected name, is refused:
 * a mount follows the link, so the link itself could still be replaced.
 *
 * Placeholders are removed again when the last sandbox of this process using them ends
 * (an empty file only while it is still empty, a directory only while it is empty).
 * @throws CapgateError `unsafe_repository` (nothing ran) for a link that cannot be pinned.
 */
export function protectGit(workspace: string): GitProtection {
  if (hasRepositoryLayout(workspace)) {
    throw new CapgateError(
      "unsafe_repository",
      `The workspace root holds a HEAD with objects and refs (or with a commondir) beside it, which makes git take the workspace itself for a repository directory (a bare repository) whose config and hooks it trusts; a command could change them, so it was refused and nothing ran. Work in a checkout of the repository (\`git clone <this dir> <new dir>\`), or move those entries out of the workspace root.`,
      { property: "workspace" },
    );
  }
  const made: string[] = [];
  const afterwards: (() => string | undefined)[] = [];
  const notices: string[] = [];
  // A command can chmod the workspace root or .git (`chmod 0300 .git`, `chmod 000 .`) so the
  // checks below could not look inside; their modes from before are put back first.
  const modes = [workspace, join(workspace, ".git")].map((path) => ({ path, mode: dirMode(path) }));
  const release = (): string[] => {
    for (const { path, mode } of modes) restoreMode(path, mode);
    for (const check of afterwards.splice(0)) {
      const notice = check();
      if (notice) notices.push(notice);
    }
    for (const path of made.splice(0)) releasePlaceholder(path);
    const notice = disableRootRepository(workspace);
    if (notice) notices.push(notice);
    return notices.splice(0);
  };
  try {
    const args = protectDotGit(workspace, made, afterwards);
    return { args, release };
  } catch (error) {
    release();
    throw error;
  }
}

/** The permission bits of a real directory (not a link), or undefined. */
function dirMode(path: string): number | undefined {
  const st = lstatOrUndefined(path);
  return st?.isDirectory() ? st.mode & 0o7777 : undefined;
}

/** Put a directory's permission bits back as they were before the command, if it changed them. */
function restoreMode(path: string, mode: number | undefined): void {
  if (mode === undefined) return;
  try {
    const st = lstatSync(path);
    if (st.isDirectory() && (st.mode & 0o7777) !== mode) chmodSync(path, mode);
  } catch {
    // gone, or not ours
  }
}

/** Give the owner read, write and search on a directory of the workspace; false when it cannot be done. */
function ownerRwx(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return false;
    chmodSync(dir, (st.mode & 0o7777) | 0o700);
    return true;
  } catch {
    return false;
  }
}

/**
 * A repository the command assembled at the workspace root (`git init --bare .`, or HEAD,
 * objects and refs beside a `.git` whose HEAD it broke) would be the repository the user's
 * own `git log` there runs the pager, hooks and gpg.program of. The root cannot be pinned
 * against it without placing files in the user's tree, so the layout is broken once the
 * command ends instead: its `HEAD` is renamed aside (nothing is deleted), which git's
 * discovery then no longer accepts. The start refused a root that already had the layout.
 */
export function disableRootRepository(workspace: string): string | undefined {
  if (!hasRepositoryLayout(workspace)) return undefined;
  const what =
    "The command made the workspace root a git repository directory (a HEAD with objects and refs, or with a commondir, at its top), which your git would take for the repository and whose config and hooks it would trust";
  const name = renameAside(join(workspace, "HEAD"));
  if (name !== undefined) {
    return `${what}; capgate renamed HEAD to ${name} so that git no longer does. Use the git tools or a .git repository instead.`;
  }
  return `${what}, and capgate could not rename its HEAD aside. Do not run git in the workspace before you remove HEAD there; capgate refuses every further command in it until then.`;
}

function protectDotGit(
  workspace: string,
  made: string[],
  afterwards: (() => string | undefined)[],
): string[] {
  const dotGit = join(workspace, ".git");
  if (placeholders.has(dotGit)) return placeholder(dotGit, "dir", made);
  const st = lstatOrUndefined(dotGit);
  if (!st) return placeholder(dotGit, "dir", made);
  if (st.isSymbolicLink()) throw refuse(workspace, dotGit, "repository");
  if (st.isDirectory()) return protectGitDir(workspace, dotGit, made, afterwards);
  // A .git file (gitdir: pointer): the pointer itself must not change …
  const args = ["--ro-bind", dotGit, dotGit];
  const target = gitdirTarget(dotGit);
  if (!target) return args;
  const real = realOrUndefined(target);
  const inside = (p: string | undefined) => p !== undefined && isInside(workspace, p);
  // … it must not lead through a link or to a missing directory inside the workspace (the
  // command could swap the link, or create the directory, with config and hooks of its own) …
  if ((inside(target) || inside(real)) && (real === undefined || real !== target)) {
    throw new CapgateError(
      "unsafe_repository",
      `'.git' is a gitdir: pointer to '${relative(workspace, target)}', which ${real === undefined ? "does not exist" : `leads through a symbolic link (to '${real}')`} inside the workspace, so a command could put a repository of its own there that your git would then trust; the command was refused and nothing ran. Point .git at the repository's real directory (or move the repository into .git).`,
      { property: "workspace" },
    );
  }
  // … and a repository it names inside the workspace is as writable as the workspace.
  if (real && real !== workspace && inside(real) && lstatOrUndefined(real)?.isDirectory()) {
    args.push(...protectGitDir(workspace, real, made, afterwards));
  }
  return args;
}

/** The directory a `.git` file's `gitdir:` line names, resolved against the file's directory. */
function gitdirTarget(file: string): string | undefined {
  let text: string;
  try {
    // A .git pointer is one short line; never read more than a few KiB of whatever is there.
    const st = lstatSync(file);
    if (!st.isFile() || st.size > 4096) return undefined;
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const target = /^gitdir:\s*(.*?)\s*$/m.exec(text)?.[1];
  if (!target) return undefined;
  return isAbsolute(target) ? resolve(target) : resolve(dirname(file), target);
}

function protectGitDir(
  workspace: string,
  gitDir: string,
  made: string[],
  afterwards: (() => string | undefined)[],
): string[] {
  // The user's git writes through symbolic links it finds in .git (COMMIT_EDITMSG is
  // rewritten, logs/HEAD appended to, loose objects created in a linked objects/<xx>), so a
  // link the command planted would make the user's next `git commit` overwrite a file
  // anywhere they can write. Links that appear during the command are removed afterwards.
  // So are FIFOs, sockets and devices: git opens the files of .git by name, and a FIFO at
  // .git/index made the user's next `git status` (and the git tools) block in open().
  const before = scanGit(gitDir);
  afterwards.push(() => removeNewEntries(workspace, gitDir, before));
  // Bound onto itself first: the command cannot move the repository aside and plant a fresh
  // .git with hooks and config of its own.
  const args: string[] = ["--bind", gitDir, gitDir];
  const pinned = new Set<string>([gitDir]);
  for (const entry of PROTECTED_GIT_ENTRIES) {
    const path = join(gitDir, ...entry.path.split("/"));
    // Every directory between .git and the entry becomes a mount point too.
    const parts = entry.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = join(gitDir, ...parts.slice(0, i));
      if (pinned.has(dir)) continue;
      const dirStat = lstatOrUndefined(dir);
      if (dirStat?.isSymbolicLink()) throw refuse(workspace, dir, "directory");
      // git init makes these (objects/info); an empty one is what git would have made.
      if (!dirStat) mkdirSync(dir, { mode: 0o755 });
      args.push("--bind", dir, dir);
      pinned.add(dir);
    }
    if (placeholders.has(path)) {
      args.push(...placeholder(path, entry.kind, made));
      continue;
    }
    const st = lstatOrUndefined(path);
    if (st?.isSymbolicLink()) throw refuse(workspace, path, entry.kind === "dir" ? "directory" : "file");
    if (st) {
      args.push("--ro-bind", path, path);
    } else if (entry.path === "hooks") {
      // A repository without hooks gets the empty directory git init would have made (kept).
      mkdirSync(path, { mode: 0o755 });
      args.push("--ro-bind", path, path);
    } else {
      args.push(...placeholder(path, entry.kind, made));
    }
  }
  return args;
}

/**
 * The directories under .git that git itself writes files into, scanned first, most exposed
 * first: `logs` (appended to on every commit) before the rest, `refs` last (git replaces a
 * ref by rename, so only a linked directory there matters). Every other real directory
 * under .git is scanned after them: a list of the directories git writes into is not a
 * guarantee (`git fsck --lost-found` writes into `lost-found/`, which was not on it).
 */
const WRITTEN_DIRS = [
  "logs",
  "objects",
  "rebase-merge",
  "rebase-apply",
  "sequencer",
  "rr-cache",
  "info",
  "refs",
];
/** Most entries looked at per scan, so a tree the command filled cannot stall the host for long. */
const MAX_SCANNED = 200_000;

/** What a scan of `.git` found: symbolic links (path → link text) and special files (path → type and inode). */
interface GitScan {
  links: Map<string, string>;
  specials: Map<string, string>;
}

/** FIFO, socket or device: what git would block on (a FIFO) or should never open. */
function isSpecial(entry: Dirent): boolean {
  return entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice();
}

/**
 * The symbolic links and special files under `gitDir`: its own entries, then (breadth
 * first) the directories git writes into, then every other real directory, and last the
 * loose-object folders `objects/<xx>` (git creates loose objects with O_EXCL and renames,
 * never writing through a name it finds there, but it opens them by name to read them, so a
 * FIFO there would block it). Links to directories are recorded, not followed.
 */
function scanGit(gitDir: string): GitScan {
  const links = new Map<string, string>();
  const specials = new Map<string, string>();
  const objects = join(gitDir, "objects");
  let scanned = 0;
  const list = (dir: string): Dirent[] => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      // A command can take the read bit off a directory under .git (chmod 0300 .git/logs);
      // git still writes through it, so the owner's bits are given back and it is scanned.
      if ((error as NodeJS.ErrnoException).code !== "EACCES" || !ownerRwx(dir)) return [];
      try {
        return readdirSync(dir, { withFileTypes: true });
      } catch {
        return [];
      }
    }
  };
  const record = (path: string, entry: Dirent): void => {
    try {
      if (entry.isSymbolicLink()) links.set(path, readlinkSync(path));
      else if (isSpecial(entry)) {
        const st = lstatSync(path);
        specials.set(path, `${st.mode & 0o170000}:${st.dev}:${st.ino}`);
      }
    } catch {
      // gone again
    }
  };
  const top = list(gitDir);
  for (const entry of top) {
    scanned++;
    record(join(gitDir, entry.name), entry);
  }
  // Only real directories: a linked `logs` is itself a new link (recorded above), and
  // following it would scan, and then clean, a directory outside the repository.
  const others = top
    .filter((e) => e.isDirectory() && !WRITTEN_DIRS.includes(e.name))
    .map((e) => e.name)
    .sort();
  const queue = [...WRITTEN_DIRS, ...others]
    .map((d) => join(gitDir, d))
    .filter((d) => lstatOrUndefined(d)?.isDirectory());
  // objects/<xx> come last, so a large loose-object store cannot use up the scan's budget
  // before refs, logs and the rest have been looked at.
  const looseObjectDirs: string[] = [];
  while ((queue.length > 0 || looseObjectDirs.length > 0) && scanned < MAX_SCANNED) {
    const dir = (queue.length > 0 ? queue.shift() : looseObjectDirs.shift()) as string;
    for (const entry of list(dir)) {
      scanned++;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (dir === objects && entry.name !== "info" && entry.name !== "pack") looseObjectDirs.push(path);
        else queue.push(path);
      } else record(path, entry);
    }
  }
  return { links, specials };
}

/**
 * Remove the links under `gitDir` that were not there (with the same text) before the
 * command, and the FIFOs, sockets and devices that were not there (the same inode) before.
 * Returns the notice for the special files removed (links go silently, as before).
 */
function removeNewEntries(workspace: string, gitDir: string, before: GitScan): string | undefined {
  const now = scanGit(gitDir);
  // Only an entry still there, in a directory reached without a link (a command still
  // running elsewhere could have swapped one in since the scan).
  const stillThere = (path: string, is: (st: Stats) => boolean): boolean => {
    try {
      return realpathSync(dirname(path)) === dirname(path) && is(lstatSync(path));
    } catch {
      return false;
    }
  };
  for (const [path, text] of now.links) {
    if (before.links.get(path) === text) continue;
    if (!stillThere(path, (st) => st.isSymbolicLink())) continue;
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
  const removed: string[] = [];
  for (const [path, identity] of now.specials) {
    if (before.specials.get(path) === identity) continue;
    const special = (st: Stats) =>
      st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice();
    if (!stillThere(path, special)) continue;
    try {
      unlinkSync(path);
      removed.push(relative(workspace, path));
    } catch {
      // already gone
    }
  }
  if (removed.length === 0) return undefined;
  removed.sort();
  const shown = removed
    .slice(0, 5)
    .map((p) => `'${p}'`)
    .join(", ");
  const index = removed.some((p) => /(^|\/)(index|sharedindex\.[^/]*)$/.test(p));
  return `The command left ${removed.length === 1 ? "a pipe, socket or device" : `${removed.length} pipes, sockets or devices`} in the repository's metadata (${shown}${removed.length > 5 ? ", …" : ""}); git opens those files by name and would block on a pipe, so your own git would hang. capgate removed ${removed.length === 1 ? "it" : "them"}.${index ? " The index was one of them: rebuild it from HEAD with `git reset`." : ""}`;
}

/**
 * A read-only empty file or directory at `path` for one sandbox. bubblewrap creates the
 * mount point on the host (the surrounding directory is a bind of the host's); it is
 * removed again when its last user here releases it.
 */
function placeholder(path: string, kind: "file" | "dir", made: string[]): string[] {
  const text = kind === "file" ? (PLACEHOLDER_TEXT[basename(path)] ?? "") : undefined;
  const held = placeholders.get(path);
  if (held) held.users++;
  else {
    placeholders.set(path, { text, users: 1 });
    // A placeholder with text is written on the host first: bubblewrap would make an empty
    // mount point, and the user's git, which reads the host's file while the command runs
    // (or after a kill -9 left it behind), dies on an empty commondir.
    if (text) {
      try {
        writeFileSync(path, text, { flag: "wx", mode: 0o444 });
      } catch {
        // there already (another process's placeholder): bound over as it is
      }
    }
  }
  made.push(path);
  return ["--ro-bind", placeholderSource(text), path];
}

function releasePlaceholder(path: string): void {
  const held = placeholders.get(path);
  if (!held) return;
  held.users--;
  if (held.users > 0) return;
  placeholders.delete(path);
  try {
    if (held.text === undefined) {
      rmdirSync(path); // only while it is still the empty mount point bubblewrap made
      return;
    }
    // Only the placeholder bubblewrap made (empty; git's own "." for commondir once the host
    // saw it): anything else, such as a config the user wrote meanwhile, stays.
    const st = lstatSync(path);
    if (!st.isFile() || st.size > 16) return;
    const now = readFileSync(path, "utf8");
    if (now === "" || now === held.text) unlinkSync(path);
  } catch {
    // gone, or not empty: leave it
  }
}
