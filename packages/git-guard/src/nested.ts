import type { Dirent } from "node:fs";
import { readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { isRepositoryLayout } from "@capgate/tools";
import { UnsafeRepositoryError } from "./repo-guard.js";

/**
 * What `stripNestedRepositories` removed from a tree, and why git must never see it:
 * - `repository`: a `.git` directory below the root — a repository of its own, whose
 *   config (core.fsmonitor, drivers) and hooks git obeys when it enters it, and which
 *   `git add` records as a gitlink instead of its files;
 * - `gitdir_file`: a `.git` file below the root (`gitdir: <anywhere>`), the same with a
 *   repository elsewhere;
 * - `gitdir_link`: a `.git` symbolic link below the root, the same again;
 * - `bare_repository`: a directory holding HEAD with objects and refs (or a commondir),
 *   which git takes for a repository directory when run inside it: its HEAD was removed;
 * - `special_file`: a FIFO, socket or device — git cannot record one, and opening a FIFO
 *   (a `.gitignore`, a `.gitattributes`) blocks git for good;
 * - `gitlink`: an index entry of mode 160000 (a submodule commit) the base did not have.
 */
export type StrippedKind =
  | "repository"
  | "gitdir_file"
  | "gitdir_link"
  | "bare_repository"
  | "special_file"
  | "gitlink";

export interface StrippedEntry {
  /** What was removed (`sub/.git`, `vendor/x/HEAD`, a gitlink's path), relative to the root, `/`-separated. */
  path: string;
  kind: StrippedKind;
}

/** Most entries looked at before the tree is refused as too large to check. */
export const MAX_TREE_ENTRIES = 2_000_000;

export interface StripOptions {
  /** Default MAX_TREE_ENTRIES. */
  maxEntries?: number;
}

const isDotGit = (name: string) => name.toLowerCase() === ".git";

function kindOf(entry: Dirent): StrippedKind | undefined {
  if (isDotGit(entry.name)) {
    if (entry.isDirectory()) return "repository";
    if (entry.isSymbolicLink()) return "gitdir_link";
    return "gitdir_file";
  }
  if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) {
    return "special_file";
  }
  return undefined;
}

/**
 * Make a tree safe to stage, by construction: remove every `.git` entry below the root (a
 * directory, a `gitdir:` file or a link, any letter case), break every directory git would
 * take for a bare repository (its HEAD is removed), and remove FIFOs, sockets and devices.
 * After it, no git started in the tree enters a repository but the root's own — so no
 * nested config, hook or driver can run — and `git add` records files, never a gitlink.
 * The root's own `.git` is left alone (checkRepository judges it).
 *
 * Destructive: for a tree about to be published and thrown away (a worker's checkout),
 * not for the user's workspace, where the git tools refuse instead. The walk lists
 * directories, never opens a file, never follows a symbolic link, and gives up (throws)
 * past `maxEntries`, so a huge tree is refused rather than staged unchecked.
 * @returns what was removed, sorted by path.
 * @throws UnsafeRepositoryError when the tree holds more than `maxEntries` entries.
 */
export async function stripNestedRepositories(
  root: string,
  options: StripOptions = {},
): Promise<StrippedEntry[]> {
  const max = options.maxEntries ?? MAX_TREE_ENTRIES;
  const out: StrippedEntry[] = [];
  const queue: string[] = [""];
  let seen = 0;
  while (queue.length > 0) {
    const rel = queue.pop() as string;
    const dir = rel === "" ? root : join(root, rel);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // gone, or not a directory any more
    }
    seen += entries.length;
    if (seen > max) {
      throw new UnsafeRepositoryError(
        `the tree holds more than ${max} entries, too many to check for nested repositories before staging; nothing was staged.`,
      );
    }
    const names = new Set(entries.map((e) => e.name));
    if (rel !== "" && isRepositoryLayout(names)) {
      await rm(join(dir, "HEAD"), { recursive: true, force: true });
      out.push({ path: `${rel}/HEAD`, kind: "bare_repository" });
    }
    for (const entry of entries) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (rel === "" && entry.name === ".git") continue;
      const kind = kindOf(entry);
      if (kind === "repository") await rm(join(root, path), { recursive: true, force: true });
      else if (kind !== undefined) await unlink(join(root, path)).catch(() => undefined);
      if (kind !== undefined) out.push({ path, kind });
      else if (entry.isDirectory()) queue.push(path);
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** One sentence for a result or a log: what was removed before staging, and why. */
export function describeStripped(entries: readonly StrippedEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const shown = (kinds: StrippedKind[]) => {
    const paths = entries.filter((e) => kinds.includes(e.kind)).map((e) => `'${e.path}'`);
    return paths.length > 5
      ? `${paths.slice(0, 5).join(", ")} and ${paths.length - 5} more`
      : paths.join(", ");
  };
  const parts: string[] = [];
  const repos = shown(["repository", "gitdir_file", "gitdir_link", "bare_repository"]);
  if (repos) {
    parts.push(
      `nested git repositories (${repos}: git would have entered them and run what their config names, and recorded a gitlink instead of their files)`,
    );
  }
  const links = shown(["gitlink"]);
  if (links) parts.push(`gitlinks, i.e. submodule entries (${links}: left out of the commit)`);
  const specials = shown(["special_file"]);
  if (specials)
    parts.push(`pipes, sockets or devices (${specials}: git cannot record them, and a pipe blocks it)`);
  return `Before publishing, capgate removed ${parts.join("; ")}.`;
}
