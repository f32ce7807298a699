import { execFile as execFileCb } from "node:child_process";
import { cpSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);

/** Where a run's work went: a branch in the configured repository, a patch against the copied workspace, or nothing changed. */
export type RunResult =
  | { kind: "branch"; branch: string; commit: string; repository: string }
  | { kind: "patch"; patch: string; files: string[]; truncated: boolean }
  | { kind: "none" };

export interface RunWorkspace {
  /** The checkout the run works in. */
  readonly dir: string;
  readonly mode: "clone" | "copy";
  /** Record the run's changes (a commit on its branch, or a patch) and remove the checkout. */
  publish(message: string): Promise<RunResult>;
  /** Remove the checkout without publishing. */
  discard(): Promise<void>;
}

const MAX_PATCH_BYTES = 1024 * 1024;

const GIT_ENV = {
  GIT_AUTHOR_NAME: "capgate",
  GIT_AUTHOR_EMAIL: "capgate@localhost",
  GIT_COMMITTER_NAME: "capgate",
  GIT_COMMITTER_EMAIL: "capgate@localhost",
  GIT_TERMINAL_PROMPT: "0",
};

/**
 * Runs on other workers of the same machine touch the same repository at once (objects,
 * refs); git refuses with "Unable to create '…lock': File exists" rather than waiting, so
 * such a refusal is retried — for up to 60 s by the clock, with a growing pause, not a fixed
 * number of tries: on a loaded machine each holder keeps a lock longer.
 */
const LOCK_RETRY_MS = 60_000;

/**
 * Settings for every git command capgate runs on a run's behalf: no hooks (the checkout's
 * `.git/hooks` is the model's to plant things in, even if the sandbox pins it), and no
 * automatic gc or maintenance in the shared repository while other workers fetch into it.
 */
const SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false"];

async function git(cwd: string, args: string[]): Promise<string> {
  const deadline = Date.now() + LOCK_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const { stdout } = await execFile("git", [...SAFE_CONFIG, ...args], {
        cwd,
        env: { ...process.env, ...GIT_ENV },
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? "");
      if (
        Date.now() >= deadline ||
        !/\.lock'?:? File exists|Another git process|cannot lock ref|could not lock/i.test(stderr)
      )
        throw error;
      const pause = Math.min(500, 50 * 1.5 ** Math.min(attempt, 10));
      await new Promise((r) => setTimeout(r, pause / 2 + Math.random() * pause));
    }
  }
}

async function repositoryRoot(dir: string): Promise<string | undefined> {
  try {
    const top = (await git(dir, ["rev-parse", "--show-toplevel"])).trim();
    // Only when the workspace IS the repository (a subfolder would need a sparse checkout).
    return realpathSync(top) === realpathSync(dir) ? top : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A fresh checkout for one run under `workRoot/<runId>`. When the workspace is a git
 * repository with a commit: a clone of it (its committed HEAD; uncommitted changes are not
 * part of it) on a new branch `capgate/run-<runId>`, published by fetching the run's commit
 * into the workspace repository under that branch. Else a copy of the workspace with a
 * baseline commit, so the run's changes can be published as a patch.
 *
 * A clone, not a `git worktree`: a linked worktree shares `.git/worktrees/` with every other
 * run, and git's worktree commands read all of it — one worker's `worktree add` died on
 * another's half-made or just-removed entry ("failed to read …/commondir", "Invalid path
 * …/worktrees/<id>"). A clone shares nothing while the run works; the only shared step is
 * the fetch at the end, which takes the lock of its own branch. Its `.git` is a real
 * directory inside the checkout, which the git tools and the sandbox require (a worktree's
 * `.git` file pointing outside is refused by both). Objects are copied, not hard-linked:
 * a hard-linked object file is the same inode as the user's, and a command in the run could
 * rewrite it in place.
 */
export async function prepareRunWorkspace(
  source: string,
  workRoot: string,
  runId: string,
): Promise<RunWorkspace> {
  mkdirSync(workRoot, { recursive: true, mode: 0o700 });
  const dir = join(workRoot, runId);
  const repo = await repositoryRoot(source);
  const head = repo
    ? await git(repo, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]).then(
        (out) => out.trim(),
        () => undefined,
      )
    : undefined;
  if (repo && head) {
    const branch = `capgate/run-${runId}`;
    const remove = async () => rmSync(dir, { recursive: true, force: true });
    try {
      await git(workRoot, ["clone", "-q", "--no-hardlinks", "--no-checkout", "--", repo, dir]);
      // The run has no way back into the workspace repository but publish().
      await git(dir, ["remote", "remove", "origin"]);
      await git(dir, ["checkout", "-q", "-B", branch, head]);
    } catch (error) {
      await remove();
      throw error;
    }
    return {
      dir: realpathSync(dir),
      mode: "clone",
      async publish(message) {
        try {
          await git(dir, ["add", "-A"]);
          const changed = (await git(dir, ["status", "--porcelain"])).trim() !== "";
          if (changed) await git(dir, ["commit", "-q", "--no-verify", "-m", message]);
          const commit = (await git(dir, ["rev-parse", "--verify", "HEAD^{commit}"])).trim();
          // Nothing committed, by the run or here: nothing to publish.
          if (commit === head) return { kind: "none" };
          await git(repo, [
            "fetch",
            "-q",
            "--no-write-fetch-head",
            "--no-tags",
            "--",
            dir,
            `+${commit}:refs/heads/${branch}`,
          ]);
          const published = (await git(repo, ["rev-parse", "--verify", `refs/heads/${branch}`])).trim();
          if (published !== commit)
            throw new Error(`branch ${branch} is at ${published}, not the run's commit ${commit}`);
          return { kind: "branch", branch, commit, repository: repo };
        } finally {
          await remove();
        }
      },
      discard: remove,
    };
  }
  cpSync(source, dir, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
  // A baseline commit in the copy: the patch is exactly what the run changed.
  await git(dir, ["init", "-q"]);
  await git(dir, ["add", "-A"]);
  await git(dir, ["commit", "-q", "--allow-empty", "--no-verify", "-m", "capgate baseline"]);
  const remove = async () => rmSync(dir, { recursive: true, force: true });
  return {
    dir: realpathSync(dir),
    mode: "copy",
    async publish() {
      try {
        await git(dir, ["add", "-A"]);
        const files = (await git(dir, ["diff", "--cached", "--name-only"])).split("\n").filter(Boolean);
        if (files.length === 0) return { kind: "none" };
        let patch = await git(dir, ["diff", "--cached", "--binary"]);
        const truncated = Buffer.byteLength(patch) > MAX_PATCH_BYTES;
        if (truncated) patch = Buffer.from(patch).subarray(0, MAX_PATCH_BYTES).toString("utf8");
        return { kind: "patch", patch, files, truncated };
      } finally {
        await remove();
      }
    },
    discard: remove,
  };
}
