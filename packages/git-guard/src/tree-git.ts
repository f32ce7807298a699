import { CapgateError } from "@capgate/schema";
import { type ProcessResult, type RunProcessOptions, runProcess } from "@capgate/tools";
import { configArgs, GIT_GLOBAL_ARGS, gitEnv } from "./hardening.js";
import { checkIndexPaths, MAX_INDEX_LISTING_BYTES } from "./index-guard.js";
import { type CheckedRepository, checkRepository } from "./repo-guard.js";

/**
 * How a git process is started: `runProcess` on the host, or a runner that puts it in the
 * OS sandbox (`sandboxedRunner`). Never through a shell.
 */
export type ProcessRun = (options: RunProcessOptions) => Promise<ProcessResult>;

export interface TreeGitOptions {
  /** The work tree, as a real path; its `.git` directory is the repository. */
  root: string;
  /** The host environment git starts from (`gitEnv` removes what could steer it). */
  env: Record<string, string | undefined>;
  /** Per git process. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Default `runProcess`. */
  run?: ProcessRun;
  /**
   * `-c` settings for every call, after the repository's own driver overrides (so they
   * win): the operator's identity, an excludes file. Given the checked repository.
   */
  settings?: (checked: CheckedRepository) => readonly string[] | Promise<readonly string[]>;
}

export interface TreeGitCall {
  /** Written to git's stdin. */
  input?: string;
  /** Cap per stream (default 1 MiB). */
  maxOutputBytes?: number;
  /**
   * Leave `--literal-pathspecs` out: the caller marks every pathspec of this call itself
   * (`:(literal)…`), because it needs pathspec magic such as `:(exclude)`.
   */
  pathspecMagic?: boolean;
}

export interface TreeGit {
  /** The work tree (real path). */
  readonly root: string;
  /** Check the repository, then run `git <args>`; resolves whatever the exit code. */
  run(args: readonly string[], call?: TreeGitCall): Promise<ProcessResult>;
  /** Like `run`, but a non-zero exit throws `git_failed` with git's own message. */
  ok(args: readonly string[], call?: TreeGitCall): Promise<ProcessResult>;
}

const DEFAULT_OUTPUT_BYTES = 1024 * 1024;

/**
 * The one way capgate runs git on a tree the model wrote (the git tools, a worker's
 * checkout): before **every** call the repository is checked (`checkRepository`: a real
 * `.git` at the root, nothing in its metadata pointing outside, no include or worktree
 * setting, every configured filter/diff/merge driver neutralised) and the index's paths
 * are read and judged (`checkIndexPaths`); then git runs with `GIT_GLOBAL_ARGS`, the
 * repository's overrides, the caller's settings and `gitEnv` pinned to the root — no
 * shell, through `run` (the host, or the sandbox).
 * @throws MissingRepositoryError when the root has no `.git`; UnsafeRepositoryError naming
 *   what was refused; CapgateError `timeout`/`aborted` when git was stopped.
 */
export function treeGit(options: TreeGitOptions): TreeGit {
  const run = options.run ?? runProcess;
  const env = gitEnv(options.env, options.root);
  const signal = options.signal ?? new AbortController().signal;
  const spawn = (args: readonly string[], call: TreeGitCall, maxOutputBytes: number) =>
    run({
      file: "git",
      args: [...args],
      cwd: options.root,
      env,
      timeoutMs: options.timeoutMs,
      maxOutputBytes,
      signal,
      ...(call.input === undefined ? {} : { input: call.input }),
    });
  const prepare = async (): Promise<string[]> => {
    const checked = await checkRepository(options.root, { path: options.env.PATH, signal });
    const settings = configArgs([...checked.overrides, ...((await options.settings?.(checked)) ?? [])]);
    // Every path the index names must lie inside the work tree (a crafted `../../x` entry
    // made git.diff show a file outside): read by git, as the call's git will read it.
    await checkIndexPaths(checked.gitDir, () =>
      spawn(
        [...GIT_GLOBAL_ARGS, ...settings, "ls-files", "-z", "--cached", "--full-name"],
        {},
        MAX_INDEX_LISTING_BYTES,
      ),
    );
    return settings;
  };
  const self: TreeGit = {
    root: options.root,
    async run(args, call = {}) {
      const settings = await prepare();
      const globals = call.pathspecMagic
        ? GIT_GLOBAL_ARGS.filter((g) => g !== "--literal-pathspecs")
        : GIT_GLOBAL_ARGS;
      const result = await spawn(
        [...globals, ...settings, ...args],
        call,
        call.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES,
      );
      if (result.timedOut) {
        throw new CapgateError(
          "timeout",
          `git ${args[0]} timed out after ${options.timeoutMs} ms and was stopped.`,
        );
      }
      if (result.aborted) throw new CapgateError("aborted", `git ${args[0]} was aborted.`);
      return result;
    },
    async ok(args, call = {}) {
      const result = await self.run(args, call);
      if (result.exitCode !== 0) throw gitFailure(args, result);
      return result;
    },
  };
  return self;
}

/** git's complaint as one error: what failed and what git said. */
export function gitFailure(args: readonly string[], result: ProcessResult): CapgateError {
  const said = (result.stderr.trim() || result.stdout.trim() || "no message").slice(0, 2_000);
  const how = result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
  return new CapgateError("git_failed", `git ${args[0]} failed (${how}): ${said}`);
}
