import type { Stats } from "node:fs";
import { lstat, readlink, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { PolicyDeniedError, type ToolContext, type ToolResult } from "@capgate/tools";
import {
  describeFileType,
  type FileType,
  fileTypeOf,
  isPolicyFile,
  makeDirectories,
  POLICY_FILE_NAME,
  RemoveStoppedError,
  removeEntry,
  renameEntry,
  withPinnedDirectory,
  workspaceHiddenPaths,
} from "@capgate/workspace";
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
  // The entry read in its directory held open: a directory on the way swapped for a link
  // meanwhile (a background command can) does not make this describe what is outside.
  const described = await withPinnedDirectory(dirname(abs), async (parent) => {
    const at = parent.at(basename(abs));
    const found = await lstat(at).catch(() => null);
    const link = found?.isSymbolicLink() ? await readlink(at) : undefined;
    return { info: found, link };
  }).catch(() => ({ info: null, link: undefined }));
  const info = described.info;
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
    const target = described.link ?? "?";
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
 * exists (never overwrites). Only renames: across file systems (EXDEV) it refuses.
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
    // Both directories held open (the target's parents made from the workspace root down),
    // so the rename lands where the guard approved whatever happens to the paths meanwhile.
    const target = await makeDirectories(to.root, dirname(to.abs));
    try {
      await withPinnedDirectory(dirname(from.abs), async (source) => {
        try {
          await renameEntry(source, basename(from.abs), target.dir, basename(to.abs));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
          // Another file system (a mount point inside the workspace). A copy then a delete
          // walks both trees by name, which a command swapping a directory for a link could
          // lead outside; fs.move only renames, which the kernel does in one step.
          throw new Error(
            `${from.rel} and the place of ${to.rel} are on different file systems (a mount point lies between them), and fs.move only renames within one; nothing was moved. Copy it with the shell, or move it to a place on the same file system.`,
          );
        }
      });
    } finally {
      await target.dir.close();
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
      // unlink in the parent held open: the name never leads through a swapped directory.
      await withPinnedDirectory(dirname(abs), (parent) => unlink(parent.at(basename(abs))));
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
    // Each directory of the tree is opened through its parent without following links and
    // emptied through its own descriptor: a directory swapped for a link mid-way stops the
    // walk instead of leading it outside the workspace.
    let inside: number;
    try {
      ({ inside } = await withPinnedDirectory(dirname(abs), (parent) =>
        removeEntry(parent, basename(abs), refusePolicyFile(args.path, "fs.delete"), rel),
      ));
    } catch (error) {
      if (!(error instanceof RemoveStoppedError)) throw error;
      return failure(`Deleting ${rel}/ ${error.message}`, {
        path: rel,
        stoppedAt: error.at,
        removed: error.removed,
      });
    }
    const what = inside === 0 ? "it was empty" : `with ${inside} entr${inside === 1 ? "y" : "ies"} inside`;
    return {
      success: true,
      summary: `Deleted directory ${rel}/ (${what}).`,
      data: { path: rel, type: "directory", entries: inside },
    };
  });
}

/**
 * The removal walk's check: a policy file that appeared in the tree after the scan before
 * the delete (only a race does that) stops the walk there.
 */
function refusePolicyFile(userPath: string, tool: string) {
  return (relPath: string) => {
    if (isPolicyFile(relPath))
      throw new PolicyDeniedError(
        `${tool} stopped at '${relPath}': ${POLICY_FILE_NAME} (capgate's policy file) appeared in ${JSON.stringify(userPath)} while it was being changed; the entries before it were already removed.`,
        { property: tool === "fs.move" ? "from" : "path" },
      );
  };
}

/** fs.mkdir: create a directory and its parents; an existing directory is a success. */
export async function makeDir(args: { path: string }, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { root, abs, rel } = await resolvePath(ctx, args.path, { forWrite: true, allowMissing: true });
    const existing = await lstat(abs).catch(() => null);
    if (existing?.isDirectory()) {
      return { success: true, summary: `${rel}/ already exists.`, data: { path: rel, created: false } };
    }
    if (existing) return failure(`${rel} exists and is a ${kindOf(existing)}, not a directory.`);
    const made = await makeDirectories(root, abs);
    await made.dir.close();
    return { success: true, summary: `Created directory ${rel}/.`, data: { path: rel, created: true } };
  });
}
