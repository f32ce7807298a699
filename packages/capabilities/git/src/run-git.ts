import { GIT_GLOBAL_ARGS, gitEnv, gitFailure, treeGit } from "@capgate/git-guard";
import { CapgateError } from "@capgate/schema";
import { type ProcessResult, realWorkspace, runProcess, type ToolContext } from "@capgate/tools";
import { hiddenAmong, hiddenPathExcludes, hiddenRelativePaths } from "./hidden-excludes.js";
import { operatorIdentity } from "./identity.js";

export { gitFailure };

/** The per-call limit less a margin, so git's own timeout reports before the executor's backstop. */
function gitTimeout(hostLimitMs: number): number {
  return Math.max(1, hostLimitMs - Math.min(2_500, Math.floor(hostLimitMs / 5)));
}

export interface GitOptions {
  /** Written to git's stdin (commit messages). */
  input?: string;
  /** Cap per stream; default `ctx.limits.outputBytes`. Machine-read output gets more room. */
  maxOutputBytes?: number;
}

/**
 * Run `git <args>` in the workspace root through the shared guard (`treeGit` of
 * @capgate/git-guard: the repository and its index checked before every call, hardened
 * options and environment, no shell), plus what the tools add: the operator's identity
 * and the hide list as excludes. Resolves with the result whatever the exit code, except:
 * git missing, a timeout, or a workspace that is not a repository throw a CapgateError
 * with a message saying what to do.
 */
export async function git(
  ctx: ToolContext,
  args: readonly string[],
  options: GitOptions = {},
): Promise<ProcessResult> {
  const root = await realWorkspace(ctx.workspace);
  const timeoutMs = gitTimeout(ctx.limits.timeoutMs);
  const hidden = await hiddenRelativePaths(ctx, root);
  const repo = treeGit({
    root,
    env: ctx.env,
    timeoutMs,
    signal: ctx.signal,
    settings: async (checked) => [
      ...(await operatorIdentity(ctx.env, checked.keys)),
      ...hiddenPathExcludes(hidden),
    ],
  });
  const guarded = async (run: () => Promise<ProcessResult>): Promise<ProcessResult> => {
    try {
      return await run();
    } catch (error) {
      // By code, not class: the guard may be another copy of @capgate/git-guard.
      if (CapgateError.isInstance(error) && error.code === "not_a_repository")
        throw await notARepository(ctx, root);
      throw spawnError(error);
    }
  };
  if (hidden.length > 0) {
    // A hidden path the index tracks is a way around the hide list: status, diff, add and
    // `show :<path>` treat the file as tracked and show its content (an index entry is
    // something a sandboxed `git update-index` can plant). No git call runs then.
    const tracked = await guarded(() =>
      repo.run(["ls-files", "-z", "--cached", "--", ...hidden], { maxOutputBytes: 64 * 1024 }),
    );
    const hit = hiddenAmong(tracked.stdout.split("\0").filter(Boolean), hidden);
    if (tracked.exitCode !== 0 || hit) {
      throw new CapgateError(
        "policy_denied",
        hit
          ? `The repository's index tracks '${hit.path}', inside '${hit.hidden}', which is hidden from every tool (credentials or capgate's own state); the git tools do not run while it is tracked. Remove the entry from the index yourself (git rm --cached -- '${hit.path}'), outside capgate.`
          : `Could not check the index for hidden paths (git ls-files: ${tracked.stderr.trim().slice(0, 500)}); the git tools do not run unchecked.`,
      );
    }
  }
  const excluding = hidden.length > 0 && EXCLUDING.has(args[0] ?? "");
  const result = await guarded(() =>
    repo.run(excluding ? withHiddenExcluded(args, hidden) : args, {
      maxOutputBytes: options.maxOutputBytes ?? ctx.limits.outputBytes,
      pathspecMagic: excluding,
      ...(options.input === undefined ? {} : { input: options.input }),
    }),
  );
  if (result.exitCode === 128 && /not a git repository/i.test(result.stderr)) {
    throw await notARepository(ctx, root);
  }
  return result;
}

/** Commands that list untracked files (git.add stages what `ls-files` lists, see change.ts). */
const EXCLUDING = new Set(["status", "ls-files"]);

/**
 * The commands that list untracked files of the work tree get the hidden paths as exclude
 * pathspecs too: `core.excludesFile` ranks below the
 * work tree's `.gitignore` and `info/exclude`, where a negation (`!/state/**`) the model
 * wrote would bring them back, while a pathspec that excludes a path is never matched.
 * Exclusion is pathspec magic, which --literal-pathspecs turns off (the call runs without
 * it); every other pathspec of the call is marked literal itself instead, so a path still
 * means only that path.
 */
function withHiddenExcluded(args: readonly string[], hidden: readonly string[]): string[] {
  const excludes = hidden.map((h) => `:(top,exclude,literal)${h}`);
  const end = args.indexOf("--");
  const specs = end === -1 ? [":/"] : args.slice(end + 1).map((p) => `:(literal)${p}`);
  return [...(end === -1 ? args : args.slice(0, end)), "--", ...specs, ...excludes];
}

function spawnError(error: unknown): unknown {
  if (CapgateError.isInstance(error) && error.code === "spawn_failed") {
    return new CapgateError(
      "git_not_found",
      "git is not installed (no `git` on the PATH of this host); the git tools need it.",
      { cause: error },
    );
  }
  return error;
}

/** Like `git`, but a non-zero exit throws with git's own message. */
export async function gitOk(
  ctx: ToolContext,
  args: readonly string[],
  options: GitOptions = {},
): Promise<ProcessResult> {
  const result = await git(ctx, args, options);
  if (result.exitCode !== 0) throw gitFailure(args, result);
  return result;
}

/**
 * The workspace has no repository of its own. Look (without the ceiling) whether it sits
 * inside one, so the message can say which; never create one.
 */
async function notARepository(ctx: ToolContext, root: string): Promise<CapgateError> {
  let top: string | undefined;
  try {
    const probe = await runProcess({
      file: "git",
      args: [...GIT_GLOBAL_ARGS, "rev-parse", "--show-toplevel"],
      cwd: root,
      env: gitEnv(ctx.env, undefined),
      timeoutMs: gitTimeout(ctx.limits.timeoutMs),
      signal: ctx.signal,
    });
    if (probe.exitCode === 0) top = probe.stdout.trim() || undefined;
  } catch {
    // The hint is optional; the main message stands.
  }
  const message =
    top && top !== root
      ? `not a git repository at the workspace root: the workspace '${root}' is inside the repository at '${top}' but is not its root. The git tools only work on a repository rooted at the workspace, so they never touch files outside it: use '${top}' as the workspace, or run \`git init\` in the workspace for a repository of its own.`
      : `not a git repository: the workspace '${root}' has no git repository. Run \`git init\` to create one (e.g. shell.run {"command":"git init"}); the git tools do not create repositories themselves.`;
  return new CapgateError("not_a_repository", message, { property: "workspace" });
}
