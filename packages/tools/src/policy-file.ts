import { randomBytes } from "node:crypto";
import { renameSync } from "node:fs";
import { join } from "node:path";
import { lstatOrUndefined, realOrUndefined } from "./fs-probe.js";
import { isInside } from "./path-within.js";

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
  args: string[];
  /** After the command: a policy file it created is renamed aside; returns the notice, if any. */
  release(): string | undefined;
}

/**
 * An existing policy file (and, when it is a link, the file it leads to inside the
 * workspace) is bound read-only for the command's lifetime: it can be neither changed nor
 * renamed nor deleted. A missing one cannot be pinned without creating a file in the user's
 * tree, so one the command creates is renamed aside when it ends (nothing deleted), and the
 * command's output says so.
 */
export function protectPolicyFile(workspace: string): PolicyFileProtection {
  const path = join(workspace, POLICY_FILE_NAME);
  const st = lstatOrUndefined(path);
  if (st) {
    const args = ["--ro-bind", path, path];
    const real = st.isSymbolicLink() ? realOrUndefined(path) : undefined;
    if (real && real !== path && isInside(workspace, real)) args.push("--ro-bind", real, real);
    return { args, release: () => undefined };
  }
  return {
    args: [],
    release() {
      if (!lstatOrUndefined(path)) return undefined;
      const name = `${POLICY_FILE_NAME}.capgate-disabled-${randomBytes(6).toString("hex")}`;
      try {
        renameSync(path, join(workspace, name));
      } catch {
        return `The command created ${POLICY_FILE_NAME} in the workspace root, capgate's own policy file, and capgate could not rename it aside: remove it before you run capgate here again.`;
      }
      return `The command created ${POLICY_FILE_NAME} in the workspace root: that is capgate's own policy file, which the model never writes, so capgate renamed it to ${name}. Edit the policy yourself if you want it.`;
    },
  };
}
