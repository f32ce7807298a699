import { cpSync, lstatSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import {
  describeStripped,
  exportCommits,
  type HistoryProblem,
  importCommits,
  type StrippedEntry,
  sandboxedRunner,
  snapshotTree,
  type TreeGit,
  type TrustedRepoGit,
  treeGit,
  trustedRepoGit,
} from "@capgate/git-guard";
import type { ShellPolicyConfig } from "@capgate/tools";

/**
 * What publishing left out or replaced, for whoever reads the result: `stripped` lists the
 * nested repositories, gitlinks and special files taken out before staging; `replaced` the
 * gitlinks or `.git` paths the run's own commits carried, for which one commit of the
 * final tree was published instead of that history; `notice` says both in a sentence.
 */
export interface PublishNotes {
  stripped?: StrippedEntry[];
  replaced?: HistoryProblem[];
  notice?: string;
}

/** Where a run's work went: a branch in the configured repository, a patch against the copied workspace, or nothing changed. */
export type RunResult =
  | ({ kind: "branch"; branch: string; commit: string; repository: string } & PublishNotes)
  | ({ kind: "patch"; patch: string; files: string[]; truncated: boolean } & PublishNotes)
  | ({ kind: "none"; error?: string } & PublishNotes);

export interface RunWorkspace {
  /** The checkout the run works in. */
  readonly dir: string;
  readonly mode: "clone" | "copy";
  /** Record the run's changes (a commit on its branch, or a patch) and remove the checkout. */
  publish(message: string): Promise<RunResult>;
  /** Remove the checkout without publishing. */
  discard(): Promise<void>;
}

export interface RunWorkspaceOptions {
  /** The environment git starts from (its PATH; GIT_* and config variables are dropped). Default: this process's. */
  env?: Record<string, string | undefined>;
  /**
   * The sandbox the publish steps' git runs in — the run's own: the operator's shell policy
   * (`sandbox: "off"` runs it on the host, still hardened) and the state directory to hide.
   */
  sandbox?: { shell?: ShellPolicyConfig; stateDir?: string };
  /** Per git process (default 10 minutes). */
  gitTimeoutMs?: number;
}

const MAX_PATCH_BYTES = 1024 * 1024;
/** A patch is read whole (up to this much) and then cut to MAX_PATCH_BYTES. */
const MAX_DIFF_READ_BYTES = 64 * 1024 * 1024;
const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;

const IDENTITY = {
  GIT_AUTHOR_NAME: "capgate",
  GIT_AUTHOR_EMAIL: "capgate@localhost",
  GIT_COMMITTER_NAME: "capgate",
  GIT_COMMITTER_EMAIL: "capgate@localhost",
};

/**
 * Runs on other workers of the same machine touch the same repository at once (objects,
 * refs); git refuses with "Unable to create '…lock': File exists" rather than waiting, so
 * such a refusal is retried — for up to 60 s by the clock, with a growing pause, not a fixed
 * number of tries: on a loaded machine each holder keeps a lock longer.
 */
const LOCK_RETRY_MS = 60_000;
const LOCKED = /\.lock'?:? File exists|Another git process|cannot lock ref|could not lock/i;

async function retryLocked<T>(step: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (Date.now() >= deadline || !LOCKED.test(error instanceof Error ? error.message : String(error)))
        throw error;
      const pause = Math.min(500, 50 * 1.5 ** Math.min(attempt, 10));
      await new Promise((r) => setTimeout(r, pause / 2 + Math.random() * pause));
    }
  }
}

/** The repository `dir` is the root of, or undefined (not a repository, or a subfolder of one: that would need a sparse checkout). */
async function repositoryRoot(git: TrustedRepoGit, dir: string): Promise<string | undefined> {
  const top = await git.run(["rev-parse", "--show-toplevel"]);
  if (top.exitCode !== 0) return undefined;
  return realpathSync(top.stdout.trim()) === realpathSync(dir) ? top.stdout.trim() : undefined;
}

const isDotGit = (name: string) => name.toLowerCase() === ".git";

/** What `publish` says it left out or replaced (nothing when there was nothing). */
function notes(stripped: StrippedEntry[], replaced: HistoryProblem[] = []): PublishNotes {
  const sentences: string[] = [];
  const strippedText = describeStripped(stripped);
  if (strippedText) sentences.push(strippedText);
  if (replaced.length > 0) {
    const first = replaced[0]!;
    sentences.push(
      `The run's own commits carried ${first.why === "gitlink" ? "a gitlink (a submodule entry)" : "a path inside a '.git' directory"} ('${first.path}' in ${first.commit.slice(0, 12)}${replaced.length > 1 ? `, and ${replaced.length - 1} more` : ""}), so one commit of the final tree was published instead of that history.`,
    );
  }
  return {
    ...(stripped.length > 0 ? { stripped } : {}),
    ...(replaced.length > 0 ? { replaced } : {}),
    ...(sentences.length > 0 ? { notice: sentences.join(" ") } : {}),
  };
}

/**
 * A fresh checkout for one run under `workRoot/<runId>`. When the workspace is a git
 * repository with a commit: a clone of it (its committed HEAD; uncommitted changes are not
 * part of it) on a new branch `capgate/run-<runId>`, published into the workspace
 * repository under that branch. Else a copy of the workspace with a baseline commit, so the
 * run's changes can be published as a patch.
 *
 * The checkout is a tree the model wrote, and publishing it runs git there; so publishing
 * goes through @capgate/git-guard and runs **nothing from the tree**: nested repositories,
 * special files and gitlinks the run brought are stripped before anything is staged (and
 * named in the result), the checkout's repository and index are checked before every git
 * call, git runs with hooks, fsmonitor, drivers, pagers, transports and every config
 * outside the checkout's own switched off, inside the run's sandbox (only the checkout
 * writable, no network, secrets and the state directory hidden), and the commits travel
 * to the workspace repository as a bundle — it never runs `upload-pack` in the checkout.
 * The workspace repository, the operator's own, judges the history there: a gitlink or a
 * `.git` path in the run's commits makes it publish one commit of the final tree instead.
 *
 * A clone, not a `git worktree`: a linked worktree shares `.git/worktrees/` with every other
 * run, and git's worktree commands read all of it — one worker's `worktree add` died on
 * another's half-made or just-removed entry ("failed to read …/commondir", "Invalid path
 * …/worktrees/<id>"). A clone shares nothing while the run works; the only shared step is
 * the fetch at the end. Its `.git` is a real directory inside the checkout, which the git
 * tools and the sandbox require. Objects are copied, not hard-linked: a hard-linked object
 * file is the same inode as the user's, and a command in the run could rewrite it in place.
 */
export async function prepareRunWorkspace(
  source: string,
  workRoot: string,
  runId: string,
  options: RunWorkspaceOptions = {},
): Promise<RunWorkspace> {
  mkdirSync(workRoot, { recursive: true, mode: 0o700 });
  const dir = join(workRoot, runId);
  const env = { ...(options.env ?? process.env), ...IDENTITY };
  const timeoutMs = options.gitTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const sourceGit = trustedRepoGit({ cwd: source, env, timeoutMs });
  const remove = async () => rmSync(dir, { recursive: true, force: true });
  // Publishing: the checkout's git, checked before every call, in the run's sandbox.
  const checkoutGit = (): TreeGit => {
    const root = realpathSync(dir);
    return treeGit({
      root,
      env,
      timeoutMs,
      run: sandboxedRunner({
        workspace: root,
        ...(options.sandbox?.stateDir ? { stateDir: options.sandbox.stateDir } : {}),
        ...(options.sandbox?.shell ? { shell: options.sandbox.shell } : {}),
      }),
    });
  };
  const repo = await repositoryRoot(sourceGit, source);
  const head = repo
    ? await sourceGit
        .run(["rev-parse", "--verify", "-q", "HEAD^{commit}"])
        .then((r) => (r.exitCode === 0 ? r.stdout.trim() : undefined))
    : undefined;
  if (repo && head) {
    const branch = `capgate/run-${runId}`;
    const repoGit = trustedRepoGit({ cwd: repo, env, timeoutMs });
    try {
      await retryLocked(() =>
        trustedRepoGit({ cwd: workRoot, env, timeoutMs }).ok(
          ["clone", "-q", "--no-hardlinks", "--no-checkout", "--", repo, dir],
          { settings: ["protocol.file.allow=always"] },
        ),
      );
      // Nothing of the model's is in the fresh clone yet: set up on the host.
      const fresh = treeGit({ root: realpathSync(dir), env, timeoutMs });
      // The run has no way back into the workspace repository but publish().
      await fresh.ok(["remote", "remove", "origin"]);
      await fresh.ok(["checkout", "-q", "-B", branch, head]);
    } catch (error) {
      await remove();
      throw error;
    }
    return {
      dir: realpathSync(dir),
      mode: "clone",
      async publish(message) {
        try {
          const git = checkoutGit();
          const snapshot = await snapshotTree(git, { base: head, message });
          // Nothing committed, by the run or here: nothing to publish.
          if (snapshot.tip === head) return { kind: "none", ...notes(snapshot.stripped) };
          const bundle = await exportCommits(git, { base: head, tip: snapshot.tip });
          const imported = await retryLocked(() =>
            importCommits(repoGit, { bundle, base: head, tip: snapshot.tip, message }),
          );
          await retryLocked(() => repoGit.ok(["update-ref", `refs/heads/${branch}`, imported.commit]));
          const published = (
            await repoGit.ok(["rev-parse", "--verify", `refs/heads/${branch}`])
          ).stdout.trim();
          if (published !== imported.commit)
            throw new Error(`branch ${branch} is at ${published}, not the run's commit ${imported.commit}`);
          return {
            kind: "branch",
            branch,
            commit: imported.commit,
            repository: repo,
            ...notes(snapshot.stripped, imported.replaced),
          };
        } finally {
          await remove();
        }
      },
      discard: remove,
    };
  }
  // A copy of the workspace with no repository in it: every `.git` (the workspace's own
  // when it has no commit yet, nested ones) stays behind, and so do pipes, sockets and
  // devices, which cannot be copied or recorded. git never enters a repository of the
  // user's from the copy, and the patch shows the files of nested repositories as files.
  cpSync(source, dir, {
    recursive: true,
    verbatimSymlinks: true,
    errorOnExist: true,
    force: false,
    filter: (from) => {
      if (from !== source && isDotGit(basename(from))) return false;
      const info = lstatSync(from);
      return !(info.isFIFO() || info.isSocket() || info.isCharacterDevice() || info.isBlockDevice());
    },
  });
  let baseline: string;
  try {
    // A baseline commit in the copy (made on the host: nothing of the model's is there yet).
    await trustedRepoGit({ cwd: dir, env, timeoutMs }).ok(["init", "-q"]);
    const fresh = treeGit({ root: realpathSync(dir), env, timeoutMs });
    await fresh.ok(["add", "-A"]);
    await fresh.ok(["commit", "-q", "--allow-empty", "--no-verify", "-m", "capgate baseline"]);
    baseline = (await fresh.ok(["rev-parse", "--verify", "HEAD^{commit}"])).stdout.trim();
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    dir: realpathSync(dir),
    mode: "copy",
    async publish(message) {
      try {
        const git = checkoutGit();
        const snapshot = await snapshotTree(git, { base: baseline, message });
        const left = snapshot.stripped;
        // The patch is exactly what the run changed since the baseline, committed or not.
        if (snapshot.tip === baseline) return { kind: "none", ...notes(left) };
        const range = [baseline, snapshot.tip];
        const files = (
          await git.ok(["diff", "--name-only", "-z", ...range], { maxOutputBytes: MAX_DIFF_READ_BYTES })
        ).stdout
          .split("\0")
          .filter(Boolean);
        if (files.length === 0) return { kind: "none", ...notes(left) };
        // Options that fix the patch's format whatever the checkout's config says.
        const format = [
          "--binary",
          "--no-color",
          "--no-ext-diff",
          "--no-textconv",
          "--src-prefix=a/",
          "--dst-prefix=b/",
        ];
        let patch = (await git.ok(["diff", ...format, ...range], { maxOutputBytes: MAX_DIFF_READ_BYTES }))
          .stdout;
        const truncated = Buffer.byteLength(patch) > MAX_PATCH_BYTES;
        if (truncated) patch = Buffer.from(patch).subarray(0, MAX_PATCH_BYTES).toString("utf8");
        return { kind: "patch", patch, files, truncated, ...notes(left) };
      } finally {
        await remove();
      }
    },
    discard: remove,
  };
}
