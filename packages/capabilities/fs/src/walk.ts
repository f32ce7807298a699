import type { Dirent } from "node:fs";
import { sep } from "node:path";
import { type HiddenPath, hiddenPathAt, readDirectory } from "@capgate/workspace";
import { type GitignoreRules, SKIPPED_DIRS } from "./gitignore.js";
import { relTo } from "./paths.js";

export interface WalkedFile {
  /** Real absolute path. */
  abs: string;
  /** Workspace-relative path with `/`. */
  rel: string;
}

export interface WalkOptions {
  /** Real workspace root. */
  root: string;
  /** Real directory to start from (inside root). */
  start: string;
  /** .gitignore rules to honour, or null to list everything. */
  rules: GitignoreRules | null;
  signal: AbortSignal;
  /** Called for each directory before descending; false prunes it. */
  enterDir?: (rel: string) => boolean;
  /** Secrets and the state dir inside the workspace (`workspaceHiddenPaths`): never listed, never entered. */
  hidden?: readonly HiddenPath[];
}

/**
 * Every regular file under `start`, depth first in name order. Never follows symbolic
 * links (neither to files nor to directories, so nothing outside the workspace and no link
 * loop is reached), never enters node_modules or .git, and prunes directories the
 * .gitignore rules ignore instead of listing them and filtering afterwards, and skips the
 * hidden paths (~/.ssh & co., the state dir) entirely, names included. Unreadable
 * directories are skipped and counted.
 */
export async function* walkFiles(
  options: WalkOptions,
  stats: { unreadableDirs: number } = { unreadableDirs: 0 },
): AsyncGenerator<WalkedFile> {
  // Relative paths are built by concatenation: path.relative per entry costs more than the walk.
  const hidden = options.hidden?.length ? options.hidden : undefined;
  const stack: Pending[] = [pending(options.start, relTo(options.root, options.start), true)];
  while (stack.length > 0) {
    if (options.signal.aborted) return;
    const next = stack.pop()!;
    const entries = await (next.listing ?? list(next.abs));
    if (entries === null) {
      stats.unreadableDirs++;
      continue;
    }
    const { abs: dir, rel: dirRel } = next;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    await options.rules?.prepare(dirRel, entries);
    const subdirs: Pending[] = [];
    for (const entry of entries) {
      const abs = dir.endsWith(sep) ? dir + entry.name : `${dir}${sep}${entry.name}`;
      const rel = dirRel === "." ? entry.name : `${dirRel}/${entry.name}`;
      if (hidden && hiddenPathAt(hidden, abs)) continue;
      if (entry.isDirectory()) {
        if (SKIPPED_DIRS.has(entry.name)) continue;
        if (options.rules?.ignoredInWalk(rel, true)) continue;
        if (options.enterDir && !options.enterDir(rel)) continue;
        // Start reading the first few subdirectories now: readdir through the thread pool
        // is the walk's main cost, and overlapping it is what makes fast globbers fast.
        subdirs.push(pending(abs, rel, subdirs.length < PREFETCH_DIRS));
      } else if (entry.isFile()) {
        if (options.rules?.ignoredInWalk(rel, false)) continue;
        yield { abs, rel };
      }
    }
    // Reverse so the stack pops them in name order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}

/** Subdirectories of one directory whose listing is requested ahead of time. */
const PREFETCH_DIRS = 16;

interface Pending {
  abs: string;
  rel: string;
  listing?: Promise<Dirent[] | null>;
}

function pending(abs: string, rel: string, prefetch: boolean): Pending {
  return prefetch ? { abs, rel, listing: list(abs) } : { abs, rel };
}

/**
 * A directory's entries, read through the directory held open: one swapped for a link
 * since it was listed in its parent (a background command can) is not read — its
 * listing would be of wherever the link points.
 */
function list(dir: string): Promise<Dirent[] | null> {
  return readDirectory(dir);
}
