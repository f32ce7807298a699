import { isAbsolute, relative, resolve, sep } from "node:path";
import { CapgateError } from "@capgate/schema";
import { PolicyDeniedError, type ToolContext } from "@capgate/tools";
import { realWorkspace, resolveInWorkspace } from "@capgate/workspace";

/**
 * A path argument as git should see it: checked to stay inside the workspace (symlinks
 * resolved, `..` and absolute paths outside refused), then given to git as the path
 * relative to the workspace root — its last component not resolved, because git tracks a
 * symlink as a link, not as its target. Always passed after `--` with literal pathspecs.
 * @throws PolicyDeniedError when it escapes the workspace.
 */
export async function gitPath(ctx: ToolContext, userPath: string, property: string): Promise<string> {
  await resolveInWorkspace(ctx, userPath, { allowMissing: true, property });
  const root = await realWorkspace(ctx.workspace);
  for (const base of [root, resolve(ctx.workspace)]) {
    const rel = relative(base, resolve(base, userPath));
    if (rel === "") return ".";
    if (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) return rel;
  }
  throw new PolicyDeniedError(`${property} ${JSON.stringify(userPath)} is outside the workspace.`, {
    property,
  });
}

/**
 * Policy step for path arguments: an escape is a `policy_denied` rejection before anything
 * runs. Other path problems (a parent that is a file) are left to the handler, which reports
 * them as a failed call rather than a rejection.
 */
export function pathPolicy(property: "path" | "paths") {
  return async (args: { path?: string; paths?: string[] }, ctx: ToolContext): Promise<undefined> => {
    const value = property === "path" ? args.path : args.paths;
    if (value === undefined) return undefined;
    const list = Array.isArray(value) ? value : [value];
    for (const [i, item] of list.entries()) {
      try {
        await gitPath(ctx, item, Array.isArray(value) ? `${property}[${i}]` : property);
      } catch (error) {
        if (CapgateError.isInstance(error) && error.code === "policy_denied") throw error;
      }
    }
    return undefined;
  };
}
