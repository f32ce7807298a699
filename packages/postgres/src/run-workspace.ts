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
  readonly mode: "worktree" | "copy";
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
 * Runs on other workers of the same machine touch the same repository at once (worktree
 * metadata, refs); git refuses with "Unable to create '…lock': File exists" rather than
 * waiting, so such a refusal is retried — for up to 60 s by the clock, with a growing pause,
 * not a fixed number of tries: on a loaded machine each holder keeps a lock longer, and
 * forty quick tries (about four seconds) ran out while the repository was merely busy.
 * The same goes for a worktree another worker's `git worktree add` is still making: git
 * creates `.git/worktrees/<id>/` before its `commondir`, and a second add that lists the
 * worktrees meanwhile dies with "failed to read …/worktrees/<id>/commondir".
 */
const LOCK_RETRY_MS = 60_000;

async function git(cwd: string, args: string[]): Promise<string> {
  const deadline = Date.now() + LOCK_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const { stdout } = await execFile("git", args, {
        cwd,
        env: { ...process.env, ...GIT_ENV },
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? "");
      if (
        Date.now() >= deadline ||
        !/\.lock'?:? File exists|Another git process|cannot lock ref|could not lock|failed to read .*worktrees\/[^/]+\/commondir/i.test(
          stderr,
        )
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
 * A fresh checkout for one run under `workRoot/<runId>`: a `git worktree` on a new branch
 * `capgate/run-<runId>` when the workspace is a git repository with a commit (uncommitted
 * changes there are not part of it), else a copy of the workspace with a baseline commit,
 * so the run's changes can be published as a patch.
 */
export async function prepareRunWorkspace(
  source: string,
  workRoot: string,
  runId: string,
): Promise<RunWorkspace> {
  mkdirSync(workRoot, { recursive: true, mode: 0o700 });
  const dir = join(workRoot, runId);
  const repo = await repositoryRoot(source);
  const hasHead = repo
    ? await git(repo, ["rev-parse", "--verify", "-q", "HEAD"]).then(
        () => true,
        () => false,
      )
    : false;
  if (repo && hasHead) {
    const branch = `capgate/run-${runId}`;
    // -B, not -b: git creates the branch before it lists the worktrees, so an add refused
    // for a worktree another worker is still making has already made the run's branch, and
    // the retry must take it as it is (the name is the run's own).
    await git(repo, ["worktree", "add", "-q", "-B", branch, dir, "HEAD"]);
    const remove = async () => {
      await git(repo, ["worktree", "remove", "--force", dir]).catch(() =>
        rmSync(dir, { recursive: true, force: true }),
      );
      await git(repo, ["worktree", "prune"]).catch(() => undefined);
    };
    return {
      dir: realpathSync(dir),
      mode: "worktree",
      async publish(message) {
        try {
          await git(dir, ["add", "-A"]);
          const changed = (await git(dir, ["status", "--porcelain"])).trim() !== "";
          if (!changed) {
            await remove();
            await git(repo, ["branch", "-D", branch]).catch(() => undefined);
            return { kind: "none" };
          }
          await git(dir, ["commit", "-q", "--no-verify", "-m", message]);
          const commit = (await git(dir, ["rev-parse", "HEAD"])).trim();
          await remove();
          return { kind: "branch", branch, commit, repository: repo };
        } catch (error) {
          await remove();
          throw error;
        }
      },
      discard: async () => {
        await remove();
        await git(repo, ["branch", "-D", branch]).catch(() => undefined);
      },
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
