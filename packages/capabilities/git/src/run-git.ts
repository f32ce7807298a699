import { dirname, join } from "node:path";
import { type ProcessResult, runProcess } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import type { ToolContext } from "@capgate/tools";
import { realWorkspace } from "@capgate/workspace";
import { hiddenAmong, hiddenPathExcludes, hiddenRelativePaths } from "./hidden-excludes.js";
import { operatorIdentity } from "./identity.js";
import { checkIndexPaths, MAX_INDEX_LISTING_BYTES } from "./index-guard.js";
import { checkRepository, MissingRepositoryError } from "./repo-guard.js";

/**
 * Options before every git subcommand. They make git run git and nothing of the
 * repository's: no hooks (a hook is arbitrary code; see docs/git-and-files.md), no
 * fsmonitor daemon, no pager, no editor, no signing program, no external diff, no
 * credential helper, no transport at all (so no ssh command, proxy or `ext::` helper can
 * run), no submodule recursion, no background gc; `--literal-pathspecs` so a path is a
 * name, never a glob or `:(magic)`; `user.useConfigOnly` so a commit never carries an
 * invented identity such as `root@host.(none)`. Command-line `-c` wins over the
 * repository's config, which is read before it.
 */
export const GIT_GLOBAL_ARGS: readonly string[] = [
  "--no-pager",
  "--literal-pathspecs",
  ...[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=true",
    "core.sshCommand=false",
    "core.askPass=",
    "core.excludesFile=",
    "core.attributesFile=",
    "core.quotePath=false",
    "diff.external=",
    "credential.helper=",
    // protocol.<name>.allow beats protocol.allow, so each is pinned too.
    "protocol.allow=never",
    ...["file", "ext", "ssh", "git", "http", "https", "fd"].map((p) => `protocol.${p}.allow=never`),
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "color.ui=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "log.mailmap=false",
    "user.useConfigOnly=true",
    "advice.detachedHead=false",
    // The index is read as a plain, whole index: no untracked cache (names git would list
    // without looking), no split index or sparse directories written by the tools.
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "index.sparse=false",
  ].flatMap((setting) => ["-c", setting]),
];

/** GIT_* variables a host may pass through: who commits. Nothing that names a repository or config. */
const KEPT_GIT_VARIABLES = new Set([
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
]);

/** Host variables git would read config or attributes from (XDG_CONFIG_HOME/git/…). */
const DROPPED_VARIABLES = new Set(["XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "PREFIX"]);

/**
 * The environment git runs with: `ctx.env` without the variables that would point git at
 * another repository or inject configuration (GIT_DIR, GIT_CONFIG_COUNT, GIT_CONFIG_GLOBAL,
 * XDG_CONFIG_HOME, …), then GIT_DIR/GIT_WORK_TREE pinned to the workspace, no system or
 * global config, no prompts, no pager, no editor, no lazy fetch, the C locale for parseable
 * messages, and a ceiling at the workspace's parent.
 */
export function gitEnv(
  env: Record<string, string | undefined>,
  root: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (key.startsWith("GIT_") && !KEPT_GIT_VARIABLES.has(key)) continue;
    if (DROPPED_VARIABLES.has(key)) continue;
    out[key] = value;
  }
  Object.assign(out, {
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_EDITOR: "true",
    GIT_SEQUENCE_EDITOR: "true",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_NO_LAZY_FETCH: "1",
    GIT_PROTOCOL_FROM_USER: "0",
    LC_ALL: "C",
    LANGUAGE: "C",
  });
  if (root !== undefined) {
    out.GIT_CEILING_DIRECTORIES = dirname(root);
    out.GIT_DIR = join(root, ".git");
    out.GIT_WORK_TREE = root;
  }
  return out;
}

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
 * Run `git <args>` in the workspace root, no shell, with the hardened options and
 * environment. Resolves with the result whatever the exit code, except: git missing,
 * a timeout, or a workspace that is not a repository throw a CapgateError with a message
 * saying what to do.
 */
export async function git(
  ctx: ToolContext,
  args: readonly string[],
  options: GitOptions = {},
): Promise<ProcessResult> {
  const root = await realWorkspace(ctx.workspace);
  const timeoutMs = gitTimeout(ctx.limits.timeoutMs);
  const hidden = await hiddenRelativePaths(ctx, root);
  let overrides: string[];
  try {
    const checked = await checkRepository(root, { path: ctx.env.PATH, signal: ctx.signal });
    overrides = [
      ...checked.overrides,
      ...(await operatorIdentity(ctx.env, checked.keys)),
      ...hiddenPathExcludes(hidden),
    ];
    // Every path the index names must lie inside the work tree (a crafted `../../x` entry
    // made git.diff show a file outside): read by git, as the tool's git will read it.
    await checkIndexPaths(checked.gitDir, () =>
      runProcess({
        file: "git",
        args: [
          ...GIT_GLOBAL_ARGS,
          ...overrides.flatMap((o) => ["-c", o]),
          "ls-files",
          "-z",
          "--cached",
          "--full-name",
        ],
        cwd: root,
        env: gitEnv(ctx.env, root),
        timeoutMs,
        maxOutputBytes: MAX_INDEX_LISTING_BYTES,
        signal: ctx.signal,
      }),
    );
  } catch (error) {
    if (error instanceof MissingRepositoryError) throw await notARepository(ctx, root);
    throw spawnError(error);
  }
  if (hidden.length > 0) {
    // A hidden path the index tracks is a way around the hide list: status, diff, add and
    // `show :<path>` treat the file as tracked and show its content (an index entry is
    // something a sandboxed `git update-index` can plant). No git call runs then.
    const tracked = await runProcess({
      file: "git",
      args: [...GIT_GLOBAL_ARGS, "ls-files", "-z", "--cached", "--", ...hidden],
      cwd: root,
      env: gitEnv(ctx.env, root),
      timeoutMs,
      maxOutputBytes: 64 * 1024,
      signal: ctx.signal,
    }).catch((error: unknown) => {
      throw spawnError(error);
    });
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
  let result: ProcessResult;
  try {
    result = await runProcess({
      file: "git",
      args: [...withHiddenExcluded(GIT_GLOBAL_ARGS, overrides, args, hidden)],
      cwd: root,
      env: gitEnv(ctx.env, root),
      timeoutMs,
      maxOutputBytes: options.maxOutputBytes ?? ctx.limits.outputBytes,
      signal: ctx.signal,
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  } catch (error) {
    throw spawnError(error);
  }
  if (result.timedOut) {
    throw new CapgateError("timeout", `git ${args[0]} timed out after ${timeoutMs} ms and was stopped.`);
  }
  if (result.aborted) throw new CapgateError("aborted", `git ${args[0]} was aborted.`);
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
 */
function withHiddenExcluded(
  globals: readonly string[],
  overrides: readonly string[],
  args: readonly string[],
  hidden: readonly string[],
): string[] {
  const config = overrides.flatMap((o) => ["-c", o]);
  if (hidden.length === 0 || !EXCLUDING.has(args[0] ?? "")) return [...globals, ...config, ...args];
  // Exclusion is pathspec magic, which --literal-pathspecs turns off; every other pathspec
  // of the call is marked literal itself instead, so a path still means only that path.
  const excludes = hidden.map((h) => `:(top,exclude,literal)${h}`);
  const end = args.indexOf("--");
  const specs = end === -1 ? [":/"] : args.slice(end + 1).map((p) => `:(literal)${p}`);
  return [
    ...globals.filter((g) => g !== "--literal-pathspecs"),
    ...config,
    ...(end === -1 ? args : args.slice(0, end)),
    "--",
    ...specs,
    ...excludes,
  ];
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

/** git's complaint as one error: what failed and what git said. */
export function gitFailure(args: readonly string[], result: ProcessResult): CapgateError {
  const said = (result.stderr.trim() || result.stdout.trim() || "no message").slice(0, 2_000);
  return new CapgateError("git_failed", `git ${args[0]} failed (${describeCode(result)}): ${said}`);
}

function describeCode(result: ProcessResult): string {
  return result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
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
