import { stat } from "node:fs/promises";
import { PolicyDeniedError, type ToolContext } from "@capgate/tools";
import { type FileType, fileTypeOf, type HiddenPath, workspaceHiddenPaths } from "@capgate/workspace";
import picomatch from "picomatch";
import { GitignoreRules } from "./gitignore.js";
import { compileGlobMatcher } from "./glob-match.js";
import { resolvePath } from "./paths.js";

/** Where fs.search or fs.glob looks, and with which ignore rules. */
export interface Scope {
  root: string;
  /** Real path of the directory (or, for fs.search, file) to look in. */
  start: string;
  startRel: string;
  isFile: boolean;
  /** What `start` is (fs.search refuses a FIFO, socket or device given as `path`). */
  type: FileType;
  /** Null when `path` itself is gitignored: naming an ignored directory explicitly searches it. */
  rules: GitignoreRules | null;
  startIgnored: boolean;
  /** Secrets and the state dir inside the workspace: the walk never lists anything at or under them. */
  hidden: HiddenPath[];
}

export async function resolveScope(ctx: ToolContext, userPath: string | undefined): Promise<Scope> {
  const { root, abs, rel } = await resolvePath(ctx, userPath ?? ".");
  const info = await stat(abs);
  const rules = new GitignoreRules(root);
  const startIgnored = await rules.ignored(rel, info.isDirectory());
  return {
    root,
    start: abs,
    startRel: rel,
    isFile: !info.isDirectory(),
    type: fileTypeOf(info),
    rules: startIgnored ? null : rules,
    startIgnored,
    hidden: await workspaceHiddenPaths(ctx),
  };
}

/**
 * `pattern` as a matcher: a pattern without `/` matches a file name at any depth ("*.ts").
 * Matched by `compileGlobMatcher` (time bounded by pattern × path), never by a regular
 * expression a crafted pattern could make backtrack.
 */
export function compileGlob(pattern: string, property = "pattern"): (relPath: string) => boolean {
  const clean = stripDotSlash(pattern);
  return compileGlobMatcher(clean.includes("/") ? clean : `**/${clean}`, property, pattern);
}

/** The fixed directory prefix of a pattern ("src" for "src/**\/*.ts"), to start walking there. */
export function globBase(pattern: string): string {
  const clean = stripDotSlash(pattern);
  if (!clean.includes("/")) return "";
  const { base, isGlob } = picomatch.scan(clean);
  // A pattern without wildcards names one path; walk its directory and let the matcher decide.
  if (!isGlob) return base.includes("/") ? base.slice(0, base.lastIndexOf("/")) : "";
  return base;
}

/** `rel` (workspace-relative, under `baseRel`) relative to `baseRel`, both with `/`. */
export function relativeTo(baseRel: string, rel: string): string {
  return baseRel === "." ? rel : rel.slice(baseRel.length + 1);
}

function stripDotSlash(pattern: string): string {
  let p = pattern;
  while (p.startsWith("./")) p = p.slice(2);
  return p;
}

/**
 * Glob patterns are relative to `path` and may not climb out of it: refuse absolute
 * patterns and `..` segments before anything is read (property names the argument).
 */
export function checkGlobPattern(pattern: string | undefined, property: string): void {
  if (pattern === undefined) return;
  if (pattern.startsWith("/") || /^[A-Za-z]:[\\/]/.test(pattern)) {
    throw new PolicyDeniedError(
      `${property} ${JSON.stringify(pattern)} is absolute; glob patterns are relative to \`path\` (e.g. "src/**/*.ts").`,
      { property },
    );
  }
  if (pattern.split(/[\\/]/).includes("..")) {
    throw new PolicyDeniedError(
      `${property} ${JSON.stringify(pattern)} contains '..'; glob patterns cannot leave \`path\`. Set \`path\` to the directory to search instead.`,
      { property },
    );
  }
  if (pattern.includes("\0")) {
    throw new PolicyDeniedError(`${property} contains a NUL byte.`, { property });
  }
  // Unsupported syntax (extglobs) or a brace explosion: refused before anything is read.
  compileGlob(pattern, property);
}
