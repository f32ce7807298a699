import type { Dirent, Stats } from "node:fs";
import { cp, lstat, mkdir, readdir, readlink, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { describeFileType, type FileType, fileTypeOf, workspaceHiddenPaths } from "@capgate/workspace";
import {
  failure,
  formatBytes,
  isNotFound,
  type Resolved,
  resolveLinkLocation,
  resolvePath,
  withExisting,
} from "./paths.js";
import { assertNoPolicyFileIn } from "./policy-tree.js";

/** Entries counted before a delete, for the summary; beyond this the count says "at least". */
const COUNT_LIMIT = 10_000;

/** file, directory, symlink, fifo, socket, character-device or block-device: from lstat, never by opening. */
function kindOf(info: Stats): FileType {
  return fileTypeOf(info);
}

/**
 * fs.stat: answers for missing paths too (`exists: false`, a success) and reports a
 * symlink as a symlink, with its target (lstat; a link pointing outside the workspace was
 * already refused by the policy).
 */
export async function statPath(args: { path: string }, ctx: ToolContext): Promise<ToolResult> {
  // The guard first (it follows and checks the whole path), then lstat the name itself.
  let checked: Resolved;
  try {
    checked = await resolvePath(ctx, args.path, { allowMissing: true });
  } catch (error) {
    // e.g. "a.txt/child": a parent is a file, so the path cannot exist.
    if (isNotFound(error))
      return {
        success: true,
        summary: `${args.path} does not exist.`,
        data: { path: args.path, exists: false },
      };
    throw error;
  }
  const { abs, rel } = await resolveLinkLocation(ctx, args.path).catch(() => checked);
  const info = await lstat(abs).catch(() => null);
  if (!info) {
    return {
      success: true,
      summary: `${rel} does not exist.`,
      data: { path: rel, exists: false },
    };
  }
  const type = kindOf(info);
  const data: Record<string, unknown> = {
    path: rel,
    exists: true,
    type,
    size: info.size,
    mtime: info.mtime.toISOString(),
    mode: `0${(info.mode & 0o7777).toString(8)}`,
  };
  let what: string = type;
  if (type === "symlink") {
    const target = await readlink(abs);
    data.target = target;
    what = `symlink -> ${target}`;
  } else if (type === "file") what = `file, ${formatBytes(info.size)}`;
  else if (type !== "directory") what = `${type} (${describeFileType(type)}; the fs tools do not open it)`;
  return {
    success: true,
    summary: `${rel}: ${what}, modified ${data.mtime}, mode ${data.mode}.`,
    data,
  };
}

/**
 * fs.move: rename a file or directory, creating the parents of `to`; refuses when `to`
 * exists (never overwrites). Across file systems it copies then deletes the source.
 */
export async function movePath(args: { from: string; to: string }, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.from, async () => {
    const from = await resolvePath(ctx, args.from, { forWrite: true, property: "from" });
    const to = await resolvePath(ctx, args.to, { forWrite: true, allowMissing: true, property: "to" });
    // Neither side may carry a capgate.config.json along (checked again here, after the policy).
    const hidden = await workspaceHiddenPaths(ctx);
    await assertNoPolicyFileIn(from, args.from, "from", "fs.move", hidden);
    await assertNoPolicyFileIn(to, args.to, "to", "fs.move", hidden);
    const existing = await lstat(to.abs).catch(() => null);
    if (existing) {
      return failure(
        `\`to\` ${to.rel} already exists (${kindOf(existing)}); fs.move never overwrites. Delete it first or pick another name. Nothing was moved.`,
      );
    }
    if (to.abs.startsWith(`${from.abs}/`)) {
      return failure(`cannot move ${from.rel} into itself (${to.rel}); nothing was moved.`);
    }
    const info = await lstat(from.abs);
    await mkdir(dirname(to.abs), { recursive: true });
    try {
      await rename(from.abs, to.abs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      // Another file system: copy, and only remove the source once the copy is complete.
      try {
        await cp(from.abs, to.abs, {
          recursive: true,
          errorOnExist: true,
          force: false,
          verbatimSymlinks: true,
        });
      } catch (copyError) {
        await rm(to.abs, { recursive: true, force: true });
        throw copyError;
      }
      await rm(from.abs, { recursive: true });
    }
    return {
      success: true,
      summary: `Moved ${kindOf(info)} ${from.rel} to ${to.rel}.`,
      data: { from: from.rel, to: to.rel, type: kindOf(info) },
    };
  });
}

/**
 * fs.delete: a file, or a directory with everything in it. The guard refuses the
 * workspace root and symlinks (a delete is a write; remove links with the shell).
 */
export async function deletePath(args: { path: string }, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { root, abs, rel } = await resolvePath(ctx, args.path, { forWrite: true });
    const info = await lstat(abs);
    if (!info.isDirectory()) {
      await rm(abs);
      return {
        success: true,
        summary: `Deleted ${rel} (${formatBytes(info.size)}).`,
        data: { path: rel, type: kindOf(info) },
      };
    }
    await assertNoPolicyFileIn(
      { root, abs },
      args.path,
      "path",
      "fs.delete",
      await workspaceHiddenPaths(ctx),
    );
    const counted = await countTree(abs);
    await rm(abs, { recursive: true });
    const inside =
      counted.entries === 0
        ? "it was empty"
        : `with ${counted.capped ? "at least " : ""}${counted.entries} entr${counted.entries === 1 ? "y" : "ies"} inside`;
    return {
      success: true,
      summary: `Deleted directory ${rel}/ (${inside}).`,
      data: { path: rel, type: "directory", entries: counted.entries },
    };
  });
}

/** fs.mkdir: create a directory and its parents; an existing directory is a success. */
export async function makeDir(args: { path: string }, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { abs, rel } = await resolvePath(ctx, args.path, { forWrite: true, allowMissing: true });
    const existing = await lstat(abs).catch(() => null);
    if (existing?.isDirectory()) {
      return { success: true, summary: `${rel}/ already exists.`, data: { path: rel, created: false } };
    }
    if (existing) return failure(`${rel} exists and is a ${kindOf(existing)}, not a directory.`);
    await mkdir(abs, { recursive: true });
    return { success: true, summary: `Created directory ${rel}/.`, data: { path: rel, created: true } };
  });
}

async function countTree(dir: string): Promise<{ entries: number; capped: boolean }> {
  let entries = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let dirents: Dirent[];
    try {
      dirents = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of dirents) {
      entries++;
      if (entries >= COUNT_LIMIT) return { entries, capped: true };
      if (d.isDirectory()) stack.push(join(current, d.name));
    }
  }
  return { entries, capped: false };
}
