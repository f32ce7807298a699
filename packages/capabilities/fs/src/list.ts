import type { Dirent } from "node:fs";
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { hiddenPathAt, withPinnedDirectory, workspaceHiddenPaths } from "@capgate/workspace";
import { SKIPPED_DIRS } from "./gitignore.js";
import { failure, relTo, resolvePath, withExisting } from "./paths.js";

export interface ListArgs {
  path?: string;
  depth?: number;
}

export const DEFAULT_LIST_DEPTH = 1;
/** Most entries one fs.list call returns. */
export const MAX_LIST_ENTRIES = 1000;

export interface ListEntry {
  /** Workspace-relative path; directories end with "/". */
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  size?: number;
  /** For symlinks: the link text (never followed). */
  target?: string;
  /** For type "other": fifo, socket, character-device or block-device (listed, never opened). */
  special?: string;
  /** node_modules and .git are shown but not expanded. */
  notExpanded?: boolean;
}

/**
 * fs.list: the entries of a directory, breadth first down to `depth` (so a cap cuts deep
 * levels, not whole top-level entries), shown sorted as workspace-relative paths the
 * model can pass straight back. Directories end with "/", symlinks show their target and
 * are never followed, node_modules and .git appear but are not expanded. .gitignore is not
 * applied: a listing shows what is there (fs.search and fs.glob apply it).
 */
export async function listDir(args: ListArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path ?? ".", async () => {
    const { root, abs, rel } = await resolvePath(ctx, args.path ?? ".");
    if (!(await stat(abs)).isDirectory()) {
      return failure(`${rel} is a file, not a directory; use fs.read to read it or fs.stat for its size.`);
    }
    const depth = args.depth ?? DEFAULT_LIST_DEPTH;
    const entries: ListEntry[] = [];
    let truncated = false;
    let unreadable = 0;
    let withheld = 0;
    // Secrets and the state dir inside the workspace are left out, names and all.
    const hidden = await workspaceHiddenPaths(ctx);
    let level: string[] = [abs];
    for (let d = 1; d <= depth && level.length > 0 && !truncated; d++) {
      const next: string[] = [];
      for (const dir of level) {
        // Each directory read through itself held open: one swapped for a link since it
        // was listed in its parent (a background command can) is not read at all.
        try {
          await withPinnedDirectory(dir, async (pinned) => {
            const dirents = await readdir(pinned.at(""), { withFileTypes: true });
            for (const dirent of dirents) {
              if (entries.length >= MAX_LIST_ENTRIES) {
                truncated = true;
                break;
              }
              const full = join(dir, dirent.name);
              if (hidden.length > 0 && hiddenPathAt(hidden, full)) {
                withheld++;
                continue;
              }
              const entry = await describe(root, full, pinned.at(dirent.name), dirent);
              entries.push(entry);
              if (entry.type === "dir" && !entry.notExpanded) next.push(full);
            }
          });
        } catch {
          // Unreadable, or not the directory it was when its parent was listed.
          unreadable++;
        }
        if (truncated) break;
      }
      level = next;
    }
    entries.sort((a, b) => comparePaths(a.path, b.path));

    const where = rel === "." ? "." : `${rel}/`;
    if (entries.length === 0) {
      const empty =
        withheld > 0
          ? `${where} holds nothing to show: its ${withheld} entr${withheld === 1 ? "y is" : "ies are"} hidden (credentials under HOME and capgate's state directory are never listed).`
          : `${where} is empty.`;
      return { success: true, summary: empty, data: { path: rel, entries, truncated } };
    }
    const head = `${where} — ${counts(entries)} (depth ${depth}):`;
    const budget = ctx.limits.outputBytes - 1024;
    const lines: string[] = [];
    let used = 0;
    for (const entry of entries) {
      const line = show(entry);
      used += Buffer.byteLength(line) + 1;
      if (used > budget) {
        truncated = true;
        break;
      }
      lines.push(line);
    }
    const notes: string[] = [];
    if (truncated) {
      notes.push(
        `[listing stopped at ${lines.length} entries; list a subdirectory or use a smaller depth, or fs.glob to find files by name]`,
      );
    }
    if (withheld > 0)
      notes.push(
        `[${withheld} hidden entr${withheld === 1 ? "y" : "ies"} not shown: credentials under HOME and capgate's state directory are never listed]`,
      );
    if (unreadable > 0)
      notes.push(`[${unreadable} director${unreadable === 1 ? "y" : "ies"} could not be read]`);
    return {
      success: true,
      summary: [head, ...lines, ...notes].join("\n"),
      data: { path: rel, entries: entries.slice(0, lines.length), truncated },
    };
  });
}

/** One entry: `full` names it for the listing, `at` reaches it in its directory held open. */
async function describe(root: string, full: string, at: string, dirent: Dirent): Promise<ListEntry> {
  const path = relTo(root, full);
  if (dirent.isSymbolicLink()) {
    const target = await readlink(at).catch(() => "?");
    return { path, type: "symlink", target };
  }
  if (dirent.isDirectory()) {
    return SKIPPED_DIRS.has(dirent.name)
      ? { path: `${path}/`, type: "dir", notExpanded: true }
      : { path: `${path}/`, type: "dir" };
  }
  if (dirent.isFile()) {
    const size = await lstat(at).then(
      (s) => s.size,
      () => undefined,
    );
    return size === undefined ? { path, type: "file" } : { path, type: "file", size };
  }
  const special = dirent.isFIFO()
    ? "fifo"
    : dirent.isSocket()
      ? "socket"
      : dirent.isCharacterDevice()
        ? "character-device"
        : dirent.isBlockDevice()
          ? "block-device"
          : undefined;
  return special ? { path, type: "other", special } : { path, type: "other" };
}

function counts(entries: ListEntry[]): string {
  const n = (type: ListEntry["type"]) => entries.filter((e) => e.type === type).length;
  const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const parts = [plural(n("file"), "file", "files"), plural(n("dir"), "directory", "directories")];
  if (n("symlink") > 0) parts.push(plural(n("symlink"), "symlink", "symlinks"));
  if (n("other") > 0) parts.push(plural(n("other"), "special file", "special files"));
  return parts.join(", ");
}

function show(entry: ListEntry): string {
  if (entry.type === "symlink") return `${entry.path} -> ${entry.target} (symlink, not followed)`;
  if (entry.notExpanded) return `${entry.path} (not expanded)`;
  if (entry.type === "other")
    return `${entry.path} (special file${entry.special ? `: ${entry.special}` : ""}, not opened)`;
  return entry.path;
}

/** Compare path segment by segment, so a directory's children follow it directly. */
function comparePaths(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x !== y) {
      // "src/" splits into ["src", ""]: the directory itself sorts before its children.
      if (x === "") return -1;
      if (y === "") return 1;
      return x < y ? -1 : 1;
    }
  }
  return pa.length - pb.length;
}
