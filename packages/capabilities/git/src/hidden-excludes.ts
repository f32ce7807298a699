import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";
import type { ToolContext } from "@capgate/tools";
import { workspaceHiddenPaths } from "@capgate/workspace";

let dir: string | undefined;
const written = new Set<string>();

/** A gitignore pattern matching exactly `rel` (a path relative to the root), anchored there. */
function literalPattern(rel: string): string {
  const posix = sep === "/" ? rel : rel.split(sep).join("/");
  // Every character git's wildmatch or the ignore-file parser gives a meaning is escaped.
  return `/${posix.replace(/[\\*?[\]!# ]/g, (c) => `\\${c}`)}`;
}

/**
 * `-c` overrides that keep the workspace's hidden paths (`~/.ssh` & co. and the state dir,
 * when the workspace holds them: the sandbox's hide list) out of whole-tree git calls:
 * `core.excludesFile` names a file of anchored, literal patterns, so `git.status` does not
 * list them and `git.add .` does not stage them. (A path argument naming one is refused by
 * the path guard before git runs.) Empty — git's own `core.excludesFile=` stays — when
 * nothing hidden lies inside. The file lives in a private temp directory of this process,
 * named by its content. `hidden`: the paths from `hiddenRelativePaths`, computed once per call.
 */
export function hiddenPathExcludes(hidden: readonly string[]): string[] {
  const lines = new Set(hidden.map(literalPattern));
  if (lines.size === 0) return [];
  const text = `${[...lines].sort().join("\n")}\n`;
  dir ??= mkdtempSync(join(tmpdir(), "capgate-git-excludes-"));
  const file = join(dir, `${createHash("sha256").update(text).digest("hex").slice(0, 24)}.gitignore`);
  if (!written.has(file)) {
    writeFileSync(file, text, { mode: 0o600 });
    written.add(file);
  }
  return [`core.excludesFile=${file}`];
}

/** The workspace's hidden paths (the sandbox's hide list) relative to `root`, sorted; empty when none lies inside. */
export async function hiddenRelativePaths(ctx: ToolContext, root: string): Promise<string[]> {
  const out = new Set<string>();
  for (const h of await workspaceHiddenPaths(ctx)) {
    const rel = relative(root, h.path);
    if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
    out.add(sep === "/" ? rel : rel.split(sep).join("/"));
  }
  return [...out].sort();
}

/** The first of `paths` (repository-relative, `/`-separated) at or under a hidden path, with that hidden path. */
export function hiddenAmong(
  paths: readonly string[],
  hidden: readonly string[],
): { path: string; hidden: string } | undefined {
  for (const path of paths) {
    const h = hidden.find((x) => path === x || path.startsWith(`${x}/`));
    if (h !== undefined) return { path, hidden: h };
  }
  return undefined;
}
