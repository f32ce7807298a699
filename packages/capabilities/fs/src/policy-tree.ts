import { lstat } from "node:fs/promises";
import { type PolicyCheck, PolicyDeniedError, type ToolContext } from "@capgate/tools";
import {
  type HiddenPath,
  MAX_POLICY_SCAN_ENTRIES,
  POLICY_FILE_NAME,
  scanForPolicyFile,
  workspaceHiddenPaths,
} from "@capgate/workspace";
import { type Resolved, relTo, resolvePath } from "./paths.js";

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
    await assertNoPolicyFileIn(resolved, userPath, property, tool, await workspaceHiddenPaths(ctx));
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
  hidden: readonly HiddenPath[],
  limit = MAX_POLICY_SCAN_ENTRIES,
): Promise<void> {
  const info = await lstat(abs).catch(() => null);
  if (!info?.isDirectory()) return;
  const shown = JSON.stringify(userPath);
  const scan = await scanForPolicyFile(root, abs, limit, hidden);
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
