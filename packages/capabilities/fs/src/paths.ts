import { basename, dirname, isAbsolute, join, normalize, relative, sep } from "node:path";
import { CapgateError, closestMatch } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";
import {
  hiddenPathAt,
  isInside,
  type NotRegularFileError,
  type ResolveInWorkspaceOptions,
  readDirectory,
  realWorkspace,
  resolveInWorkspace,
  workspaceHiddenPaths,
} from "@capgate/workspace";

/** A path checked by the shared guard: `abs` is the real path to operate on, `rel` is for messages. */
export interface Resolved {
  root: string;
  abs: string;
  rel: string;
}

/** Workspace-relative path with `/` separators ("." for the root), as the model should send it back. */
export function relTo(root: string, abs: string): string {
  const rel = relative(root, abs);
  if (rel === "") return ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/**
 * Resolve a tool's path argument through the shared guard (`resolveInWorkspace`): escapes
 * throw `policy_denied`, a missing path throws `not_found` unless `allowMissing`.
 */
export async function resolvePath(
  ctx: ToolContext,
  userPath: string,
  options: ResolveInWorkspaceOptions = {},
): Promise<Resolved> {
  const root = await realWorkspace(ctx.workspace);
  const abs = await resolveInWorkspace(ctx, userPath, options);
  return { root, abs, rel: relTo(root, abs) };
}

/**
 * The location of the last component itself, without following it if it is a symlink
 * (for fs.stat, which reports links as links). The parent goes through the shared guard,
 * so only the final name is taken as is; the caller must still have passed the full
 * path through the guard (the policy does) so a link pointing outside is refused.
 */
export async function resolveLinkLocation(ctx: ToolContext, userPath: string): Promise<Resolved> {
  const root = await realWorkspace(ctx.workspace);
  const text = isAbsolute(userPath) ? userPath : join(root, userPath);
  const lexical = normalize(text);
  const rootAlias = isInside(root, lexical) ? root : normalize(ctx.workspace);
  const inner = relative(rootAlias, lexical);
  if (inner === "") return { root, abs: root, rel: "." };
  const parent = await resolveInWorkspace(ctx, dirname(inner) || ".", { property: "path" });
  const abs = join(parent, basename(inner));
  return { root, abs, rel: relTo(root, abs) };
}

/** A failed ToolResult: what went wrong, and that nothing changed when that matters. */
export function failure(summary: string, data?: unknown): ToolResult {
  return data === undefined ? { success: false, summary } : { success: false, summary, data };
}

/** True for `openRegularFile`'s refusal of a directory, FIFO, socket or device (works across package copies). */
export function isNotRegularFile(error: unknown): error is NotRegularFileError {
  return CapgateError.isInstance(error) && error.code === "not_a_regular_file";
}

/** True for the shared guard's "does not exist" error. */
export function isNotFound(error: unknown): error is CapgateError {
  return CapgateError.isInstance(error) && error.code === "not_found";
}

/**
 * A failure for a path that does not exist, with a did-you-mean from the nearest existing
 * directory ("src/indx.ts" → "src/index.ts").
 */
export async function notFoundResult(
  ctx: ToolContext,
  userPath: string,
  error: CapgateError,
): Promise<ToolResult> {
  const hint = await suggestSibling(ctx, userPath);
  const message = error.message.replace(/\.$/, "");
  return failure(`${message}.${hint ? ` Did you mean '${hint}'?` : ""}`, {
    code: "not_found",
    path: userPath,
  });
}

async function suggestSibling(ctx: ToolContext, userPath: string): Promise<string | undefined> {
  try {
    const root = await realWorkspace(ctx.workspace);
    const parentText = dirname(userPath);
    const parent = await resolveInWorkspace(ctx, parentText === "" ? "." : parentText);
    const hidden = await workspaceHiddenPaths(ctx);
    // Read through the directory held open (not a directory swapped in for it meanwhile).
    const entries = await readDirectory(parent);
    if (!entries) return undefined;
    const names = entries.map((e) => e.name).filter((name) => !hiddenPathAt(hidden, join(parent, name)));
    const guess = closestMatch(basename(userPath), names);
    return guess === undefined ? undefined : relTo(root, join(parent, guess));
  } catch {
    return undefined;
  }
}

/** Runs `fn`, turning the guard's `not_found` into a friendly failure; escapes still throw (rejections). */
export async function withExisting(
  ctx: ToolContext,
  userPath: string,
  fn: () => Promise<ToolResult>,
): Promise<ToolResult> {
  try {
    return await fn();
  } catch (error) {
    if (isNotFound(error)) return notFoundResult(ctx, userPath, error);
    throw error;
  }
}

/** "1.2 KB"-style size for summaries; exact bytes go in `data`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
