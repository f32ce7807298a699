import type { ProcessResult } from "@capgate/tools";
import { UnsafeRepositoryError } from "./repo-guard.js";
import { gitFailure, type TreeGitCall } from "./tree-git.js";

/** Anything that runs git in one repository with the hardened options: `treeGit`, `trustedRepoGit`. */
export interface GitRunner {
  run(args: readonly string[], call?: TreeGitCall): Promise<ProcessResult>;
}

/** A gitlink: a path whose entry is a commit of another repository (mode 160000). */
export interface Gitlink {
  path: string;
  oid: string;
}

/** Listings of whole indexes and trees are machine-read: room for very large repositories. */
const LISTING_BYTES = 64 * 1024 * 1024;

async function listing(git: GitRunner, args: readonly string[], input?: string): Promise<string> {
  const r = await git.run(args, { maxOutputBytes: LISTING_BYTES, ...(input === undefined ? {} : { input }) });
  if (r.exitCode !== 0) throw gitFailure(args, r);
  if (r.truncated) {
    throw new UnsafeRepositoryError(
      `git ${args[0]} listed more than ${LISTING_BYTES / 1024 / 1024} MiB, too much to check for gitlinks; nothing was published unchecked.`,
    );
  }
  return r.stdout;
}

/** The gitlinks of a tree-ish (`ls-tree -r`), by path. */
async function treeGitlinks(git: GitRunner, treeish: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const text = await listing(git, ["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", treeish]);
  for (const record of text.split("\0")) {
    // "<mode> <type> <oid>\t<path>"
    const tab = record.indexOf("\t");
    if (tab === -1 || !record.startsWith("160000 ")) continue;
    out.set(record.slice(tab + 1), record.slice(0, tab).split(" ")[2] ?? "");
  }
  return out;
}

/**
 * Index entries of mode 160000 that `base` (a commit; undefined when there is none) does
 * not hold with the same object: gitlinks the model's tree brought in — a nested
 * repository staged as a submodule, or one planted with `git update-index --cacheinfo
 * 160000,…`. A gitlink the base already had, unchanged, is the user's own submodule.
 */
export async function newGitlinks(git: GitRunner, base: string | undefined): Promise<Gitlink[]> {
  const staged: Gitlink[] = [];
  for (const record of (await listing(git, ["ls-files", "-s", "-z"])).split("\0")) {
    // "<mode> <oid> <stage>\t<path>"
    const tab = record.indexOf("\t");
    if (tab === -1 || !record.startsWith("160000 ")) continue;
    staged.push({ path: record.slice(tab + 1), oid: record.slice(0, tab).split(" ")[1] ?? "" });
  }
  if (staged.length === 0) return [];
  const known = base === undefined ? new Map<string, string>() : await treeGitlinks(git, base);
  return staged.filter((g) => known.get(g.path) !== g.oid);
}

/** Take `links` out of the index (the work tree is not touched). */
export async function unstageGitlinks(git: GitRunner, links: readonly Gitlink[]): Promise<void> {
  if (links.length === 0) return;
  const args = ["update-index", "--force-remove", "-z", "--stdin"];
  await listing(git, args, `${[...new Set(links.map((l) => l.path))].join("\0")}\0`);
}

/** Something a published history must not carry, with the commit that brought it. */
export interface HistoryProblem {
  commit: string;
  path: string;
  /** `gitlink`: a submodule entry the base did not have; `dotgit`: a path with a `.git` component (any case). */
  why: "gitlink" | "dotgit";
}

/** A full object id as git prints it (SHA-1 or SHA-256). */
export function isObjectId(text: string): boolean {
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(text);
}

const hasDotGit = (path: string) => path.split("/").some((part) => part.toLowerCase() === ".git");

/**
 * What the commits in `base..tip` bring that the base did not have: a gitlink (mode 160000)
 * other than one of the base's own, unchanged, or any path with a `.git` component (git
 * never writes one; a crafted tree does, and checking it out would write into a
 * repository's metadata). Every commit is compared with each of its parents (`-m`), so a
 * merge cannot hide one; a root commit with nothing (`--root`). Run it where the metadata
 * is trusted — the repository being published to — so nothing the model wrote decides it.
 */
export async function historyProblems(
  git: GitRunner,
  base: string | undefined,
  tip: string,
): Promise<HistoryProblem[]> {
  for (const oid of [base, tip]) {
    if (oid !== undefined && !isObjectId(oid))
      throw new TypeError(`historyProblems: not an object id: ${oid}`);
  }
  const commits = await listing(git, ["rev-list", tip, ...(base === undefined ? [] : [`^${base}`]), "--"]);
  if (commits.trim() === "") return [];
  const known = base === undefined ? new Map<string, string>() : await treeGitlinks(git, base);
  const raw = await listing(
    git,
    [
      "diff-tree",
      "--stdin",
      "-r",
      "-m",
      "--root",
      "--raw",
      "-z",
      "--no-renames",
      "--no-abbrev",
      "--ignore-submodules=none",
    ],
    commits,
  );
  const problems: HistoryProblem[] = [];
  const records = raw.split("\0");
  let commit = "";
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (!record.startsWith(":")) {
      if (record !== "") commit = record;
      continue;
    }
    // ":<old mode> <new mode> <old oid> <new oid> <status>", then the path.
    const [, newMode, , newOid, status] = record.slice(1).split(" ");
    const path = records[++i] ?? "";
    if (status === "D") continue;
    if (hasDotGit(path)) problems.push({ commit, path, why: "dotgit" });
    else if (newMode === "160000" && known.get(path) !== newOid)
      problems.push({ commit, path, why: "gitlink" });
  }
  return problems;
}
