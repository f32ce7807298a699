import { lstat } from "node:fs/promises";
import { join } from "node:path";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { resolveInWorkspace } from "@capgate/workspace";
import { failure, withExisting } from "./paths.js";
import { compileGlob, globBase, relativeTo, resolveScope } from "./scope.js";
import { walkFiles } from "./walk.js";

export interface GlobArgs {
  pattern: string;
  path?: string;
}

/** Most paths one fs.glob call returns. */
export const MAX_GLOB_RESULTS = 1000;

/**
 * fs.glob: files under `path` whose path relative to `path` matches `pattern` (picomatch
 * syntax, dot files included; a pattern without `/` matches names at any depth). The walk
 * starts at the pattern's fixed prefix, prunes gitignored directories, node_modules and
 * .git, and never follows symlinks. Results are workspace-relative and sorted.
 */
export async function globFiles(args: GlobArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path ?? ".", async () => {
    const scope = await resolveScope(ctx, args.path);
    if (scope.isFile) return failure(`${scope.startRel} is a file; \`path\` must be a directory to glob in.`);
    const matches = compileGlob(args.pattern);
    const base = globBase(args.pattern);
    const walkRoot = base === "" ? scope.start : await existingDir(ctx, join(scope.start, base));
    const found: string[] = [];
    let more = false;
    if (walkRoot) {
      for await (const file of walkFiles({
        root: scope.root,
        start: walkRoot,
        rules: scope.rules,
        signal: ctx.signal,
        hidden: scope.hidden,
      })) {
        if (!matches(relativeTo(scope.startRel, file.rel))) continue;
        if (found.length >= MAX_GLOB_RESULTS) {
          more = true;
          break;
        }
        found.push(file.rel);
      }
    }
    found.sort();
    const where = scope.startRel === "." ? "the workspace" : `${scope.startRel}/`;
    const note = scope.startIgnored
      ? ` (${scope.startRel} is gitignored, so .gitignore was not applied)`
      : "";
    if (found.length === 0) {
      return {
        success: true,
        summary: `No files under ${where} match ${JSON.stringify(args.pattern)}${note}. .gitignore'd files, node_modules and .git are skipped.`,
        data: { pattern: args.pattern, files: [], truncated: false },
      };
    }
    const head = more
      ? `The first ${found.length} files under ${where} matching ${JSON.stringify(args.pattern)} (more exist; use a narrower pattern or path)${note}:`
      : `${found.length} file${found.length === 1 ? "" : "s"} under ${where} match${found.length === 1 ? "es" : ""} ${JSON.stringify(args.pattern)}${note}:`;
    return {
      success: true,
      summary: [head, ...found].join("\n"),
      data: { pattern: args.pattern, files: found, truncated: more },
    };
  });
}

/** The pattern's fixed prefix as a real directory inside the workspace, or null when there is none. */
async function existingDir(ctx: ToolContext, abs: string): Promise<string | null> {
  try {
    if (!(await lstat(abs)).isDirectory()) return null;
    // Through a symlink on the way the walk would not be under `path`: the walk never follows links.
    const real = await resolveInWorkspace(ctx, abs, { property: "pattern" });
    return real === abs ? real : null;
  } catch {
    return null;
  }
}
