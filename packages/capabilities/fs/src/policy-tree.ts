import type { Dirent } from "node:fs";
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  isInside,
  isPolicyFile,
  POLICY_FILE_NAME,
  type PolicyCheck,
  PolicyDeniedError,
  type ToolContext,
} from "@capgate/tools";
import { type Resolved, relTo, resolvePath } from "./paths.js";

/**
 * Most entries looked at before a move or delete of a directory. A bigger tree is refused
 * (the message says to name narrower paths) rather than moved unchecked.
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
 * read; links leading out of the workspace are never followed. At most `limit` entries are
 * looked at. A directory that cannot be listed is reported, never taken for empty.
 */
export async function scanForPolicyFile(
  root: string,
  dir: string,
  limit = MAX_POLICY_SCAN_ENTRIES,
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
      if (++entries > limit) return { kind: "too_large", entries: limit };
      const path = join(current, entry.name);
      if (isPolicyFile(entry.name)) return { kind: "found", path };
      if (entry.isDirectory()) {
        seen.add(path);
        queue.push(path);
      } else if (entry.isSymbolicLink()) {
        const target = await linkedDirectory(root, path);
        if (target !== undefined && !seen.has(target)) {
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

/**
 * A policy for fs.move / fs.delete: refuse before approval is asked (see assertNoPolicyFileIn).
 * A path the guard refuses or cannot find is left to the path policy and the handler.
 */
export function policyTreePolicy(property: string, tool: string): PolicyCheck {
  return async (args: Record<string, unknown>, ctx: ToolContext) => {
    const userPath = args[property];
    if (typeof userPath !== "string") return undefined;
    let resolved: Resolved;
    try {
      resolved = await resolvePath(ctx, userPath, { forWrite: true, property });
    } catch {
      return undefined;
    }
    await assertNoPolicyFileIn(resolved, userPath, property, tool);
    return undefined;
  };
}

/**
 * Refuse (`policy_denied`, naming `property`) to move or delete the directory at `abs`
 * when its tree holds a policy file — that would make one disappear from where capgate
 * reads it, or appear where it did not exist (`mv app old; mv evil app`) — or when the tree
 * is too large or unreadable to be sure. Files and missing paths pass: the path guard
 * already refuses a path named capgate.config.json itself.
 */
export async function assertNoPolicyFileIn(
  { root, abs }: Pick<Resolved, "root" | "abs">,
  userPath: string,
  property: string,
  tool: string,
  limit = MAX_POLICY_SCAN_ENTRIES,
): Promise<void> {
  const info = await lstat(abs).catch(() => null);
  if (!info?.isDirectory()) return;
  const shown = JSON.stringify(userPath);
  const scan = await scanForPolicyFile(root, abs, limit);
  if (scan.kind === "clean") return;
  const verb = tool === "fs.delete" ? "deleting" : "moving";
  if (scan.kind === "found") {
    throw new PolicyDeniedError(
      `${property} ${shown} contains '${relTo(root, scan.path)}', and ${POLICY_FILE_NAME} is capgate's own policy file (shell rules, MCP servers and their commands, approvals): no file tool makes one appear, disappear or change, and ${verb} ${shown} would take it along. Nothing was changed. ${tool === "fs.delete" ? "Delete" : "Move"} the other entries of ${shown} one by one instead; the policy file is the operator's to change.`,
      { property },
    );
  }
  if (scan.kind === "too_large") {
    throw new PolicyDeniedError(
      `${property} ${shown} holds more than ${scan.entries} entries, too many to check that none of them is ${POLICY_FILE_NAME} (capgate's policy file, which no file tool may carry along); nothing was changed. Use ${tool} on narrower paths (the directories inside ${shown} one at a time).`,
      { property },
    );
  }
  throw new PolicyDeniedError(
    `${property} ${shown} could not be checked for ${POLICY_FILE_NAME} (capgate's policy file, which no file tool may carry along): '${relTo(root, scan.path)}' cannot be listed (${scan.reason}); nothing was changed.`,
    { property },
  );
}
