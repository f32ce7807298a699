import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { type HiddenPath, hiddenPathAt } from "./hidden-paths.js";
import { isInside } from "./path-within.js";
import { isPolicyFile } from "./policy-file.js";

/**
 * Most entries looked at before a tool moves, deletes or replaces a directory (fs.move,
 * fs.delete, git.checkout). A bigger tree is refused (the message says to name narrower
 * paths) rather than changed unchecked.
 */
export const MAX_POLICY_SCAN_ENTRIES = 100_000;

/** What a scan of a directory tree found: the first policy file (real path), or that it stopped early. */
export type PolicyScan =
  | { kind: "clean"; entries: number }
  | { kind: "found"; path: string }
  | { kind: "too_large"; entries: number }
  | { kind: "unreadable"; path: string; reason: string };

/**
 * Look through the tree at `dir` (a real path inside `root`) for an entry named
 * capgate.config.json, of any kind and letter case: a file, a directory, a link, a FIFO.
 * Symbolic links to directories inside the workspace are followed (each real directory is
 * entered once), since moving the tree moves the name through which that policy file is
 * read; links leading out of the workspace are never followed, nor into a `hidden` path
 * (~/.ssh & co. inside the workspace: what is there is never looked at, named or counted).
 * At most `limit` entries are looked at. A directory that cannot be listed is reported,
 * never taken for empty.
 */
export async function scanForPolicyFile(
  root: string,
  dir: string,
  limit = MAX_POLICY_SCAN_ENTRIES,
  hidden: readonly HiddenPath[] = [],
): Promise<PolicyScan> {
  const seen = new Set<string>([dir]);
  const queue = [dir];
  let entries = 0;
  while (queue.length > 0) {
    const current = queue.shift() as string;
    let dirents: Dirent[];
    try {
      dirents = await readdir(current, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Gone since it was queued (or replaced by a file): nothing left there to carry along.
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      return { kind: "unreadable", path: current, reason: code ?? String(error) };
    }
    for (const entry of dirents) {
      const path = join(current, entry.name);
      if (hidden.length > 0 && hiddenPathAt(hidden, path)) continue;
      if (++entries > limit) return { kind: "too_large", entries: limit };
      if (isPolicyFile(entry.name)) return { kind: "found", path };
      if (entry.isDirectory()) {
        seen.add(path);
        queue.push(path);
      } else if (entry.isSymbolicLink()) {
        const target = await linkedDirectory(root, path);
        if (target !== undefined && !seen.has(target) && !hiddenPathAt(hidden, target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
  }
  return { kind: "clean", entries };
}

/** The real directory a link leads to, when it is one inside the workspace; else undefined. */
async function linkedDirectory(root: string, link: string): Promise<string | undefined> {
  try {
    const real = await realpath(link);
    if (!isInside(root, real)) return undefined;
    return (await stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined; // dangling or a loop: leads nowhere
  }
}
