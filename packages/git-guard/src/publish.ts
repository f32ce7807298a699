import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { openRegularFile } from "@capgate/tools";
import {
  type HistoryProblem,
  historyProblems,
  isObjectId,
  newGitlinks,
  unstageGitlinks,
} from "./gitlinks.js";
import { type StrippedEntry, stripNestedRepositories } from "./nested.js";
import { UnsafeRepositoryError } from "./repo-guard.js";
import type { TrustedRepoGit } from "./runners.js";
import { gitFailure, type TreeGit } from "./tree-git.js";

export interface Snapshot {
  /** The commit holding the tree as it is now: HEAD when nothing changed since, else a new commit on HEAD. */
  tip: string;
  /** What was taken out before staging (nested repositories, new gitlinks, special files). */
  stripped: StrippedEntry[];
}

/**
 * Record a model-written work tree as a commit, with nothing of the tree run and no
 * gitlink recorded: nested repositories and special files are stripped from the tree
 * (`stripNestedRepositories`), everything is staged (`add -A`), gitlinks the `base` did not
 * have are taken out of the index again (one planted with `update-index` too), and the
 * index is written as a tree with plumbing (`write-tree`, `commit-tree`: no hook, editor
 * or commit config can act). When the tree equals HEAD's, HEAD is the tip. Destructive
 * to the tree (see `stripNestedRepositories`): for a checkout about to be thrown away.
 * @param base the commit the work started from (its gitlinks are the user's own), if any.
 */
export async function snapshotTree(
  git: TreeGit,
  options: { base: string | undefined; message: string },
): Promise<Snapshot> {
  const stripped = await stripNestedRepositories(git.root);
  await git.ok(["add", "-A"]);
  const links = await newGitlinks(git, options.base);
  await unstageGitlinks(git, links);
  for (const link of links) stripped.push({ path: link.path, kind: "gitlink" });
  const tree = (await git.ok(["write-tree"])).stdout.trim();
  // HEAD's commit and tree in one call; it fails on an unborn HEAD.
  const head = await git.run(["rev-parse", "HEAD^{commit}", "HEAD^{tree}"]);
  const [headOid, headTree] = head.exitCode === 0 ? head.stdout.trim().split("\n") : [];
  if (headOid !== undefined && headTree === tree) return { tip: headOid, stripped };
  const parent = headOid === undefined ? [] : ["-p", headOid];
  const tip = (
    await git.ok(["commit-tree", tree, ...parent, "-F", "-"], { input: options.message })
  ).stdout.trim();
  return { tip, stripped };
}

/** Where `exportCommits` writes its bundle: inside the tree's `.git` (never staged), which a sandboxed git may write. */
const BUNDLE_NAME = "capgate-publish.bundle";
const PUBLISH_REF = "refs/capgate/publish";

/**
 * Write the commits of `base..tip` of a model-written repository as a git bundle (data:
 * objects and one ref), so the repository they are published into fetches from that file
 * and never runs git — `upload-pack`, which reads the model's config — in the tree. Runs
 * through `git` (so in its sandbox, when it has one).
 * @returns the bundle's path, or undefined when `tip` is already reachable from `base` (nothing to carry).
 */
export async function exportCommits(
  git: TreeGit,
  options: { base: string | undefined; tip: string },
): Promise<string | undefined> {
  await git.ok(["update-ref", "--no-deref", PUBLISH_REF, options.tip]);
  const file = join(git.root, ".git", BUNDLE_NAME);
  const args = [
    "bundle",
    "create",
    "-q",
    file,
    PUBLISH_REF,
    ...(options.base === undefined ? [] : [`^${options.base}`]),
  ];
  const r = await git.run(args);
  // `tip` already reachable from `base`: there is nothing to carry.
  if (r.exitCode !== 0 && /empty bundle/i.test(r.stderr)) return undefined;
  if (r.exitCode !== 0) throw gitFailure(args, r);
  return file;
}

export interface ImportOptions {
  /** The bundle `exportCommits` wrote (inside the model's tree: copied out before git reads it). */
  bundle: string | undefined;
  /** The commit the work started from, in the trusted repository. */
  base: string | undefined;
  /** The commit to publish (as the model's tree reported it). */
  tip: string;
  /** Message of the single commit published instead when the history carries something it must not. */
  message: string;
}

export interface Imported {
  /** The commit that may be published: `tip`, or one commit of its tree on `base`. */
  commit: string;
  /** What the model's own commits carried that made capgate publish one commit instead. */
  replaced: HistoryProblem[];
}

/**
 * Bring the commits of a model's tree into a trusted repository and decide what may be
 * published, judged there (its metadata is the operator's, none of it the model's): the
 * bundle is copied out of the tree (as a regular file only: no link, pipe or device is
 * followed or opened), fetched with the hardened options (no ref is written), and
 * `base..tip` is checked with `historyProblems`. A history that brings a gitlink or a
 * `.git` path is replaced by one commit of `tip`'s tree on `base`; if that tree itself
 * carries one, nothing is published.
 * @throws UnsafeRepositoryError naming the path when even the tree cannot be published.
 */
export async function importCommits(trusted: TrustedRepoGit, options: ImportOptions): Promise<Imported> {
  for (const oid of [options.base, options.tip]) {
    if (oid !== undefined && !isObjectId(oid)) throw new TypeError(`importCommits: not an object id: ${oid}`);
  }
  if (options.bundle !== undefined) {
    const scratch = await mkdtemp(join(tmpdir(), "capgate-bundle-"));
    try {
      const copy = join(scratch, BUNDLE_NAME);
      const opened = await openRegularFile(options.bundle, { shown: BUNDLE_NAME, property: "bundle" });
      try {
        await pipeline(
          opened.handle.createReadStream(),
          createWriteStream(copy, { flags: "wx", mode: 0o600 }),
        );
      } finally {
        await opened.handle.close().catch(() => undefined);
      }
      // A local file is a transport git must be allowed to use for this one call.
      await trusted.ok(["fetch", "-q", "--no-tags", "--no-write-fetch-head", copy, PUBLISH_REF], {
        settings: ["protocol.file.allow=always"],
      });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
  await trusted.ok(["cat-file", "-e", `${options.tip}^{commit}`]);
  const problems = await historyProblems(trusted, options.base, options.tip);
  if (problems.length === 0) return { commit: options.tip, replaced: [] };
  const tree = (await trusted.ok(["rev-parse", "--verify", `${options.tip}^{tree}`])).stdout.trim();
  const parent = options.base === undefined ? [] : ["-p", options.base];
  const commit = (
    await trusted.ok(["commit-tree", tree, ...parent, "-F", "-"], { input: options.message })
  ).stdout.trim();
  const left = await historyProblems(trusted, options.base, commit);
  if (left.length > 0) {
    const first = left[0]!;
    throw new UnsafeRepositoryError(
      `the run's tree carries ${first.why === "gitlink" ? "a gitlink (a submodule entry)" : "a path inside a '.git' directory"} at '${first.path}', which is never published; nothing was published.`,
    );
  }
  return { commit, replaced: problems };
}
