import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessResult } from "@capgate/tools";
import { UnsafeRepositoryError } from "./repo-guard.js";

/** Most bytes of `git ls-files -z` read; an index whose paths take more is refused, not half-checked. */
export const MAX_INDEX_LISTING_BYTES = 64 * 1024 * 1024;

/**
 * Why `path` (an index entry as `git ls-files -z --full-name` prints it) is not a path
 * inside the work tree, or undefined when it is one. By construction: a valid path is one
 * or more components separated by single `/`, none empty, `.` or `..`, none `.git` in any
 * letter case (git's own `verify_path` rule; on a case-insensitive file system `.GIT` is
 * `.git`), and no control characters. git 2.39 checks none of this when it *reads* an
 * index, so an entry `../../../root/.ssh/id_x` made git.diff print that file. Backslashes
 * are separators on Windows only, and judged as such there.
 */
export function invalidIndexPath(path: string): string | undefined {
  if (path === "") return "an empty path";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  const control = /[\u0000-\u001f\u007f]/.exec(path);
  if (control) {
    return `a control character (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")})`;
  }
  const separators = process.platform === "win32" ? /[\\/]/ : /\//;
  if (path.startsWith("/") || (process.platform === "win32" && /^([a-zA-Z]:|\\)/.test(path))) {
    return "an absolute path";
  }
  for (const part of path.split(separators)) {
    if (part === "") return "an empty component ('//' or a trailing '/')";
    if (part === "." || part === "..") return `a '${part}' component`;
    if (part.toLowerCase() === ".git") return "a '.git' component (git's own metadata)";
  }
  return undefined;
}

/** A path for a message: JSON-quoted (control characters visible), at most 300 characters. */
function shown(path: string): string {
  const quoted = JSON.stringify(path);
  return quoted.length > 300 ? `${quoted.slice(0, 300)}…"` : quoted;
}

/** Index files by `.git` directory → the stamp of the index (and shared indexes) last found clean. */
const checkedIndexes = new Map<string, string>();
const MAX_CACHED = 256;

/**
 * Identity of the files git reads the index from: `.git/index` and every split-index
 * `sharedindex.*` (the index names one by hash; a model could rewrite it in place, so all
 * count). inode, size, mtime and ctime in ns: ctime moves on every write or rename.
 * Undefined when there is no index (git then has no entries to read).
 */
async function indexStamp(gitDir: string): Promise<string | undefined> {
  const names: string[] = [];
  let entries: Dirent[];
  try {
    entries = await readdir(gitDir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (entry.name === "index" || entry.name.startsWith("sharedindex.")) names.push(entry.name);
  }
  if (!names.includes("index")) return undefined;
  const parts: string[] = [];
  for (const name of names.sort()) {
    const info = await lstat(join(gitDir, name), { bigint: true }).catch(() => null);
    if (info) parts.push(`${name}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`);
  }
  return parts.join("|");
}

const FIX = "Rebuild the index from HEAD outside capgate: `rm .git/index && git reset`";

/**
 * Refuse a repository whose index names a path that is not inside the work tree (see
 * `invalidIndexPath`): git would read and write the file it names wherever it lies.
 * `list` runs `git ls-files -z --cached --full-name` with the git tools' own options and
 * environment, so the index is read exactly as the tool's git will read it (split index
 * and sparse directories included). The result is cached by the index files' identity, so
 * an unchanged index costs a readdir and a few lstat calls.
 * @throws UnsafeRepositoryError naming the entry and the fix.
 */
export async function checkIndexPaths(gitDir: string, list: () => Promise<ProcessResult>): Promise<void> {
  const stamp = await indexStamp(gitDir);
  if (stamp === undefined) return;
  if (checkedIndexes.get(gitDir) === stamp) return;
  const result = await list();
  if (result.timedOut || result.aborted) {
    throw new UnsafeRepositoryError(
      `Reading the repository's index to check its paths ${result.timedOut ? "timed out" : "was aborted"}; the git tools do not run unchecked.`,
    );
  }
  if (result.exitCode !== 0) {
    throw new UnsafeRepositoryError(
      `The repository's index could not be read to check its paths (git ls-files: ${(result.stderr.trim() || `exit code ${result.exitCode}`).slice(0, 500)}); the git tools do not run unchecked. ${FIX}.`,
    );
  }
  if (result.truncated) {
    throw new UnsafeRepositoryError(
      `The repository's index lists more than ${MAX_INDEX_LISTING_BYTES / 1024 / 1024} MiB of paths, too many to check; the git tools do not run unchecked.`,
    );
  }
  const paths = result.stdout.split("\0");
  paths.pop(); // each path ends with NUL; what follows the last is ""
  for (const path of paths) {
    const why = invalidIndexPath(path);
    if (why === undefined) continue;
    const escapes = why.includes("..") || why.includes("absolute");
    throw new UnsafeRepositoryError(
      why.startsWith("a control")
        ? `The repository's index has an entry ${shown(path)}, whose name holds ${why}; the git tools refuse such names (they are not paths they can show or pass on safely). Rename the file outside capgate (\`git mv\`), or remove the entry (\`git rm --cached\`); if the index was crafted: ${FIX}.`
        : `The repository's index has an entry ${shown(path)}, which is not a path inside the work tree (${why}); git would read and write the file it names${escapes ? " outside the workspace" : ""}, so the git tools do not run. git never writes such an entry: the index was crafted. ${FIX}.`,
    );
  }
  if (checkedIndexes.size >= MAX_CACHED) checkedIndexes.delete(checkedIndexes.keys().next().value!);
  checkedIndexes.set(gitDir, stamp);
}
