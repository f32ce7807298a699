import { lstatSync } from "node:fs";
import { join } from "node:path";

/**
 * The entries of a repository's `.git` (GIT_DIR) that make git run a program, or read
 * config, hooks or another repository from elsewhere — enumerated from
 * gitrepository-layout(5) and git's setup/path code. A sandboxed command can write none of
 * them (`sandboxCommand` makes each a read-only mount point for the command's lifetime, a
 * placeholder where it is missing), and @capgate/git-guard's repository check refuses what
 * git itself never writes there. Everything else under GIT_DIR is data (objects, refs,
 * logs, index, HEAD, info/exclude, …); docs/security.md says why each of those is harmless.
 */
export interface GitMetadataEntry {
  /** Path under GIT_DIR, with `/`. */
  path: string;
  /** What git expects there (a placeholder of this kind stands in while it is missing). */
  kind: "file" | "dir";
  /** What git does with it: why a command must not write it. */
  why: string;
}

export const PROTECTED_GIT_ENTRIES: readonly GitMetadataEntry[] = [
  {
    path: "config",
    kind: "file",
    why: "the repository's config, which names programs git runs (core.fsmonitor, core.hooksPath, core.sshCommand, filter and diff drivers, aliases)",
  },
  {
    path: "config.worktree",
    kind: "file",
    why: "per-worktree config, read on top of config when extensions.worktreeConfig is set",
  },
  { path: "hooks", kind: "dir", why: "programs git runs on commit, checkout, merge, rebase and push" },
  {
    path: "commondir",
    kind: "file",
    why: "names the directory git takes config, hooks, objects and refs from instead of this one",
  },
  {
    path: "worktrees",
    kind: "dir",
    why: "the linked worktrees' metadata (their commondir, gitdir and config.worktree), which git run in those worktrees trusts",
  },
  {
    path: "modules",
    kind: "dir",
    why: "the submodules' repositories, each with its own config and hooks, which the superproject's git status enters",
  },
  {
    path: "objects/info/alternates",
    kind: "file",
    why: "other object stores git reads objects from",
  },
  {
    path: "remotes",
    kind: "dir",
    why: "legacy remote definitions: URLs a later `git fetch <name>` or `git pull <name>` contacts",
  },
  {
    path: "branches",
    kind: "dir",
    why: "legacy remote shorthands: URLs a later `git fetch <name>` contacts",
  },
];

/**
 * The names git's discovery looks for to take a directory for a repository directory
 * (GIT_DIR) itself — a bare repository, or a `.git` by another name (setup.c's
 * is_git_directory): a `HEAD`, and either `objects` and `refs` beside it, or a `commondir`
 * naming the directory that holds them (how a linked worktree's GIT_DIR works). Whoever can
 * create such a set in a directory makes the user's plain `git` there read a `config` and
 * run `hooks` of their choosing.
 */
export const REPOSITORY_LAYOUT: readonly string[] = ["HEAD", "objects", "refs", "commondir"];

/**
 * Whether a directory holding the REPOSITORY_LAYOUT names in `present` is one git would
 * take for a repository directory: HEAD, and commondir or both objects and refs.
 */
export function isRepositoryLayout(present: ReadonlySet<string>): boolean {
  return present.has("HEAD") && (present.has("commondir") || (present.has("objects") && present.has("refs")));
}

/**
 * Whether `dir` holds a repository layout (isRepositoryLayout). Judged more broadly than git
 * does (any kind of entry, a link or a dangling link included; no file's text is read), so
 * nothing git would accept is missed.
 */
export function hasRepositoryLayout(dir: string): boolean {
  const present = new Set<string>();
  for (const name of REPOSITORY_LAYOUT) {
    try {
      lstatSync(join(dir, name));
      present.add(name);
    } catch (error) {
      // Only a name that is not there is absent: one that cannot be looked at may be there.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") present.add(name);
    }
  }
  return isRepositoryLayout(present);
}
