import { dirname, join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { lstatOrUndefined, realOrUndefined } from "./fs-probe.js";
import { isInside } from "./path-within.js";
import { renameAside } from "./rename-aside.js";

/**
 * The file capgate reads its policy from (shell rules, MCP servers and their commands,
 * approvals, profiles) when it starts in a directory — usually the workspace root. A model
 * that could write it would choose its own rules for the next run, so no tool writes a file
 * by this name and no sandboxed command changes or creates the workspace root's.
 */
export const POLICY_FILE_NAME = "capgate.config.json";

/** Whether a workspace-relative path names a policy file (any depth, any letter case). */
export function isPolicyFile(relPath: string): boolean {
  const name = relPath.split(/[\\/]/).pop() ?? "";
  return name.toLowerCase() === POLICY_FILE_NAME;
}

/** Bubblewrap arguments that keep the workspace root's policy file as it is, and the check after the command. */
export interface PolicyFileProtection {
  /**
   * Directories strictly between the workspace and a protected policy file that is not in
   * the root (the working directory's), outermost first: the sandbox binds each onto itself
   * right after the workspace, because a plain directory holding a mount can be renamed or
   * removed (`mv app old && mkdir app` would carry the read-only file away and leave a new
   * policy where capgate looks next).
   */
  pins: string[];
  /** The read-only binds of the existing policy files (after every other workspace mount). */
  args: string[];
  /** Policy files that did not exist when the command started. */
  missing: readonly string[];
  /** After the command: a policy file it created is renamed aside; returns the notice, if any. */
  release(): string | undefined;
}

/**
 * The policy files capgate reads for a workspace (the real path): the root's, and the one in
 * this process's working directory when that lies inside the workspace (the CLI and the
 * server read `./capgate.config.json`, and a monorepo's app directory may be the one they
 * start in). The sandbox pins these; git.checkout refuses to change the way to them.
 */
export function policyFilePaths(workspace: string): string[] {
  const out = [join(workspace, POLICY_FILE_NAME)];
  const cwd = realOrUndefined(process.cwd());
  if (cwd && cwd !== workspace && isInside(workspace, cwd)) out.push(join(cwd, POLICY_FILE_NAME));
  return out;
}

/**
 * An existing policy file is bound read-only for the command's lifetime: it can be neither
 * changed nor renamed nor deleted. A missing one cannot be pinned without creating a file in
 * the user's tree, so one the command creates is renamed aside when it ends (nothing
 * deleted), and the command's output says so. A policy file that is a symbolic link is
 * refused before anything runs: a mount follows the link, so the link itself could be
 * replaced.
 * @throws CapgateError `unsafe_policy_file` (nothing ran) for a linked policy file.
 */
export function protectPolicyFile(workspace: string): PolicyFileProtection {
  const args: string[] = [];
  const missing: string[] = [];
  const pins: string[] = [];
  for (const path of policyFilePaths(workspace)) {
    for (let dir = dirname(path); dir !== workspace && isInside(workspace, dir); dir = dirname(dir)) {
      if (!pins.includes(dir)) pins.push(dir);
    }
    const st = lstatOrUndefined(path);
    if (st?.isSymbolicLink()) {
      throw new CapgateError(
        "unsafe_policy_file",
        `${path} is a symbolic link, so the sandbox cannot keep a command from replacing it with a policy of its own (a mount cannot pin a link); the command was refused and nothing ran. Replace the link with the file itself.`,
        { property: "workspace" },
      );
    }
    if (st) args.push("--ro-bind", path, path);
    else missing.push(path);
  }
  pins.sort((a, b) => a.length - b.length);
  return {
    pins,
    args,
    missing,
    release: () => releaseMissingPolicyFiles(missing),
  };
}

/**
 * Rename aside each of `paths` (policy files that were missing when a command started) that
 * exists now, giving the directory's owner write bit back if a command took it; the
 * notice of what was done, or undefined.
 */
export function releaseMissingPolicyFiles(paths: readonly string[]): string | undefined {
  const notices: string[] = [];
  for (const path of paths) {
    if (!lstatOrUndefined(path)) continue;
    const name = renameAside(path);
    notices.push(
      name !== undefined
        ? `The command created ${path}: that is capgate's own policy file, which the model never writes, so capgate renamed it to ${name}. Edit the policy yourself if you want it.`
        : `The command created ${path}, capgate's own policy file, and capgate could not rename it aside: remove it before you run capgate here again.`,
    );
  }
  return notices.length > 0 ? notices.join(" ") : undefined;
}
