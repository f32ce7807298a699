import { lstat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { type GitRunner, newGitlinks } from "@capgate/git-guard";
import type { ToolContext, ToolResult } from "@capgate/tools";
import {
  isPolicyFile,
  POLICY_FILE_NAME,
  policyFilePaths,
  realWorkspace,
  scanForPolicyFile,
  workspaceHiddenPaths,
} from "@capgate/workspace";
import { filesChangedBy, filesToStage, filteredPaths, filterRefusal } from "./filters.js";
import { hiddenAmong, hiddenRelativePaths } from "./hidden-excludes.js";
import { gitPath } from "./paths.js";
import {
  branchExists,
  checkRefText,
  currentBranch,
  describeCommit,
  invalidBranchName,
  refHint,
  resolveRevision,
} from "./refs.js";
import { git, gitFailure, gitOk } from "./run-git.js";
import { formatStatus, readStatus, shortLine } from "./status.js";

export async function add(args: { paths: string[] }, ctx: ToolContext): Promise<ToolResult> {
  const specs: string[] = [];
  for (const [i, p] of args.paths.entries()) specs.push(await gitPath(ctx, p, `paths[${i}]`));
  const toStage = await filesToStage(ctx, specs);
  // git lists a directory holding a repository of its own (a `.git` directory or file) as
  // `dir/`: staging it would record a gitlink, never its files. A path inside one git
  // skips without a word; it is named too.
  const root = await realWorkspace(ctx.workspace);
  const nested = [
    ...new Set([
      ...toStage.filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1)),
      ...(await Promise.all(specs.map((spec) => nestedRepositoryAbove(root, spec)))).filter(
        (p): p is string => p !== undefined,
      ),
      // Looked up on disk too: git (in the sandbox) does not take a `.git` file whose
      // repository it cannot see for one, and lists the files under it.
      ...(await repositoriesAmong(root, toStage)),
    ]),
  ];
  if (nested.length > 0) return { success: false, summary: nestedRefusal(nested), data: { nested } };
  const filtered = await filteredPaths(ctx, toStage);
  if (filtered.length > 0)
    return { success: false, summary: filterRefusal("git.add", filtered), data: { filtered } };
  const hidden = await hiddenRelativePaths(ctx, root);
  // With hidden paths inside the workspace, exactly the files ls-files listed (hidden ones
  // excluded by pathspec, whatever a .gitignore negation says) are staged, by name: `git add`
  // itself would stage a hidden file a negation un-ignores, and a pathspec excluding it
  // makes git add fail on the ignored name.
  const r =
    hidden.length === 0
      ? await git(ctx, ["add", "--", ...specs])
      : await git(ctx, ["add", "--pathspec-from-file=-", "--pathspec-file-nul"], {
          input: toStage.join("\0"),
        });
  if (r.exitCode !== 0) {
    return { success: false, summary: `git add changed nothing: ${r.stderr.trim()}` };
  }
  const status = await readStatus(ctx);
  return {
    success: true,
    summary: `Staged ${specs.join(", ")}.\n${formatStatus(status)}`,
    data: { paths: specs, status },
  };
}

/** Most paths named in a refusal. */
const SHOWN = 10;

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, SHOWN).map((p) => `'${p}'`);
  return `${shown.join(", ")}${paths.length > SHOWN ? `, … (${paths.length} in all)` : ""}`;
}

function nestedRefusal(nested: readonly string[]): string {
  const one = nested.length === 1;
  const first = nested[0]!;
  return `git.add refused: ${listed(nested)} ${one ? "is a git repository" : "are git repositories"} of ${one ? "its" : "their"} own (with a .git inside), which git would record as a gitlink — a pointer to one of ${one ? "its" : "their"} commits, not ${one ? "its" : "their"} files — and enter on later calls, where ${one ? "its" : "their"} own config and hooks apply. Nothing was staged. To add the files, remove the nested repository's metadata (shell.run {"command":"rm -rf ${first}/.git"}); to leave ${one ? "it" : "them"} out, add ${one ? "it" : "them"} to .gitignore.`;
}

/** The nearest directory above `spec` (relative, not the root) holding a `.git`: a repository of its own. */
async function nestedRepositoryAbove(root: string, spec: string): Promise<string | undefined> {
  const parts = spec.split(sep).filter((p) => p !== "" && p !== ".");
  for (let i = parts.length - 1; i >= 1; i--) {
    const dir = parts.slice(0, i).join("/");
    if (await lstat(join(root, ...parts.slice(0, i), ".git")).catch(() => null)) return dir;
  }
  return undefined;
}

/** Directories holding a `.git` (directory, file or link) above the listed paths, each looked at once. */
async function repositoriesAmong(root: string, paths: readonly string[]): Promise<string[]> {
  const dirs = new Set<string>();
  for (const p of paths) {
    const parts = p.split("/").filter((part) => part !== "");
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
  }
  const found: string[] = [];
  for (const dir of dirs)
    if (await lstat(join(root, ...dir.split("/"), ".git")).catch(() => null)) found.push(dir);
  return found;
}

/** The git tools' `git` as a @capgate/git-guard runner (for its gitlink checks). */
function runner(ctx: ToolContext): GitRunner {
  return {
    run: (args, call = {}) =>
      git(ctx, args, {
        ...(call.input === undefined ? {} : { input: call.input }),
        ...(call.maxOutputBytes === undefined ? {} : { maxOutputBytes: call.maxOutputBytes }),
      }),
  };
}

const NO_IDENTITY =
  'git has no identity to commit with: set user.name and user.email, e.g. `git config user.name "Your Name"` and `git config user.email you@example.com` in the repository (or with --global). git.commit does not make one up.';

export async function commit(args: { message: string }, ctx: ToolContext): Promise<ToolResult> {
  // First make sure there is a repository: `git var` would complain about the identity instead.
  await gitOk(ctx, ["rev-parse", "--git-dir"]);
  for (const who of ["GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"]) {
    const ident = await git(ctx, ["var", who]);
    if (ident.exitCode !== 0) return { success: false, summary: NO_IDENTITY };
  }
  // git.add never stages a gitlink, but the index is the model's to change from the shell
  // (`git update-index --cacheinfo 160000,…`); a commit never records one HEAD lacks.
  const links = await newGitlinks(runner(ctx), await resolveRevision(ctx, "HEAD", "commit"));
  if (links.length > 0) {
    const paths = links.map((l) => l.path);
    return {
      success: false,
      summary: `git.commit refused: the index holds ${paths.length === 1 ? "a gitlink" : "gitlinks"} (a submodule entry: a pointer to a commit of another repository) at ${listed(paths)} that HEAD does not have, staged outside the git tools; committing would record ${paths.length === 1 ? "it" : "them"}, and git would enter that repository on later calls. Nothing was committed. Unstage ${paths.length === 1 ? "it" : "them"} (shell.run {"command":"git rm --cached -q -- ${paths[0]}"}) and commit again.`,
      data: { gitlinks: paths },
    };
  }
  // `diff --cached --quiet` exits 1 when something is staged (also before the first commit).
  const staged = await git(ctx, ["diff", "--cached", "--quiet", "--no-ext-diff"]);
  if (staged.exitCode === 0) {
    const status = await readStatus(ctx);
    const hint =
      status.unstaged + status.untracked > 0
        ? ` Changed but not staged: ${status.entries
            .slice(0, 10)
            .map((e) => e.path)
            .join(", ")}${status.entries.length > 10 ? ", …" : ""}; stage them with git.add first.`
        : " The working tree is clean too.";
    return {
      success: false,
      summary: `Nothing is staged, so there is nothing to commit.${hint}`,
      data: { status },
    };
  }
  if (staged.exitCode !== 1) throw gitFailure(["diff"], staged);
  const r = await git(ctx, ["commit", "--no-verify", "--file=-"], { input: args.message });
  if (r.exitCode !== 0) {
    if (/tell me who you are|auto-detection is disabled|no name was given/i.test(r.stderr)) {
      return { success: false, summary: NO_IDENTITY };
    }
    throw gitFailure(["commit"], r);
  }
  const oid = (await gitOk(ctx, ["rev-parse", "HEAD"])).stdout.trim();
  const branch = await currentBranch(ctx);
  return {
    success: true,
    summary: `Committed ${oid.slice(0, 7)}${branch ? ` on ${branch}` : " (detached HEAD)"}.\n${r.stdout.trim()}`,
    data: { oid, branch: branch ?? null },
  };
}

interface BranchRow {
  current: boolean;
  name: string;
  short: string;
  upstream: string;
  track: string;
  subject: string;
}

async function listBranches(ctx: ToolContext): Promise<ToolResult> {
  const format =
    "--format=%(HEAD)%1f%(refname:short)%1f%(objectname:short)%1f%(upstream:short)%1f%(upstream:track)%1f%(contents:subject)%1e";
  const r = await gitOk(ctx, ["for-each-ref", format, "refs/heads"]);
  const rows: BranchRow[] = r.stdout
    .split("\x1e")
    .map((line) => line.replace(/^\n/, ""))
    .filter(Boolean)
    .map((line) => {
      const [head = "", name = "", short = "", upstream = "", track = "", subject = ""] = line.split("\x1f");
      return { current: head === "*", name, short, upstream, track, subject };
    });
  const branch = await currentBranch(ctx);
  const lines: string[] = [];
  if (branch === undefined) lines.push(`* (HEAD detached at ${await describeCommit(ctx, "HEAD")})`);
  else if (rows.length === 0) lines.push(`* ${branch} (no commits yet)`);
  const width = Math.min(40, Math.max(0, ...rows.map((b) => b.name.length)));
  for (const b of rows) {
    const up = b.upstream ? ` [${b.upstream}${b.track ? `: ${b.track.replace(/^\[|\]$/g, "")}` : ""}]` : "";
    lines.push(`${b.current ? "*" : " "} ${b.name.padEnd(width)} ${b.short}${up} ${b.subject.slice(0, 120)}`);
  }
  return {
    success: true,
    summary: lines.join("\n"),
    data: { current: branch ?? null, detached: branch === undefined, branches: rows },
  };
}

export async function branch(args: { name?: string }, ctx: ToolContext): Promise<ToolResult> {
  if (args.name === undefined) return listBranches(ctx);
  const name = args.name;
  const invalid = await invalidBranchName(ctx, name);
  if (invalid) return { success: false, summary: invalid };
  if (await branchExists(ctx, name)) {
    return {
      success: false,
      summary: `Branch '${name}' already exists (at ${await describeCommit(ctx, `refs/heads/${name}`)}); switch to it with git.checkout {"ref":"${name}"}.`,
    };
  }
  const head = await resolveRevision(ctx, "HEAD", "commit");
  if (!head) {
    return { success: false, summary: "No commits yet: a branch needs a commit to point at. Commit first." };
  }
  await gitOk(ctx, ["branch", "--end-of-options", name]);
  const on = await currentBranch(ctx);
  return {
    success: true,
    summary: `Created branch '${name}' at ${await describeCommit(ctx, head)}; still on ${on ? `'${on}'` : "a detached HEAD"}. Switch with git.checkout {"ref":"${name}"}.`,
    data: { name, oid: head },
  };
}

/**
 * Switch without ever forcing: a local branch by name; with `create`, a new branch at HEAD;
 * otherwise a commit (detached HEAD), or a remote branch git can track. The ref is placed
 * after `--end-of-options` (or verified to an object id first), so it is never an option
 * and never a path — this tool cannot discard file changes the way `git checkout <path>` does.
 */
export async function checkout(
  args: { ref: string; create?: boolean },
  ctx: ToolContext,
): Promise<ToolResult> {
  const { ref } = args;
  checkRefText(ref, "ref");
  let switchArgs: string[];
  if (args.create) {
    const invalid = await invalidBranchName(ctx, ref);
    if (invalid) return { success: false, summary: invalid };
    if (await branchExists(ctx, ref)) {
      return {
        success: false,
        summary: `Branch '${ref}' already exists; switch to it with git.checkout {"ref":"${ref}"} (without create).`,
      };
    }
    switchArgs = ["switch", "--create", ref];
  } else if (await branchExists(ctx, ref)) {
    switchArgs = ["switch", "--no-guess", "--end-of-options", ref];
  } else {
    const oid = await resolveRevision(ctx, ref, "commit");
    if (oid) switchArgs = ["switch", "--detach", "--end-of-options", oid];
    else if (await remoteBranchExists(ctx, ref)) switchArgs = ["switch", "--guess", "--end-of-options", ref];
    else {
      return {
        success: false,
        summary: `'${ref}' is not a branch, tag or commit here.${await refHint(ctx, ref)} To create a branch, pass create: true.`,
      };
    }
  }
  // Switching writes the files that differ from HEAD; none of them may need a filter driver.
  const target = switchArgs.at(-1)!;
  if (!args.create) {
    const guessed = switchArgs.includes("--guess") ? await remoteBranchRef(ctx, ref) : target;
    const changed = guessed ? await filesChangedBy(ctx, guessed) : [];
    // Switching writes or deletes every changed file: none may be hidden (a branch whose tree
    // holds the state directory would overwrite capgate's memory, and switching back delete it).
    const hiddenHit = hiddenAmong(
      changed,
      await hiddenRelativePaths(ctx, await realWorkspace(ctx.workspace)),
    );
    if (hiddenHit) {
      return {
        success: false,
        summary: `Switching to '${ref}' would write or delete '${hiddenHit.path}', inside '${hiddenHit.hidden}', which is hidden from every tool (credentials or capgate's own state). Nothing was changed.`,
      };
    }
    // Nor the policy file, wherever it is and whether git tracks it: a branch the model built
    // could bring rules of its own, or make room for them by deleting an ignored one.
    const policyHit = await policyFileTouchedBy(ctx, changed);
    if (policyHit !== undefined) {
      return {
        success: false,
        summary: `Switching to '${ref}' ${policyHit}, and ${POLICY_FILE_NAME} is capgate's own policy file (shell rules, MCP servers and their commands); the git tools never change it, so a model cannot choose its own rules. Nothing was changed. Switch yourself, outside capgate, if you mean to.`,
      };
    }
    const filtered = await filteredPaths(ctx, changed);
    if (filtered.length > 0) {
      return { success: false, summary: filterRefusal("git.checkout", filtered), data: { filtered } };
    }
  }
  const r = await git(ctx, switchArgs);
  if (r.exitCode !== 0) {
    const said = r.stderr.trim();
    const hint = /would be overwritten/.test(said)
      ? " Nothing was changed. Commit the changes (git.add, git.commit) before switching."
      : "";
    return { success: false, summary: `Could not switch to '${ref}': ${said}${hint}` };
  }
  const status = await readStatus(ctx);
  const where = status.detached
    ? `HEAD is now detached at ${await describeCommit(ctx, "HEAD")}`
    : `Switched to ${args.create ? "a new " : ""}branch '${status.branch}'${status.head ? ` (${await describeCommit(ctx, "HEAD")})` : ""}`;
  const carried = status.entries.filter((e) => e.kind !== "untracked").map(shortLine);
  const note = carried.length > 0 ? `\nLocal changes carried over:\n${carried.slice(0, 50).join("\n")}` : "";
  return {
    success: true,
    summary: `${where}.${note}`,
    data: { branch: status.branch, detached: status.detached, head: status.head },
  };
}

async function remoteBranchExists(ctx: ToolContext, name: string): Promise<boolean> {
  return (await remoteBranchRef(ctx, name)) !== undefined;
}

/** refs/remotes/<remote>/<name>: what `git switch --guess` would track (the first, as git does when unique). */
async function remoteBranchRef(ctx: ToolContext, name: string): Promise<string | undefined> {
  const r = await git(ctx, ["for-each-ref", "--format=%(refname)", "refs/remotes"]);
  return r.stdout
    .split("\n")
    .find((ref) => ref.startsWith("refs/remotes/") && ref.slice(13).split("/").slice(1).join("/") === name);
}

/**
 * Why switching, which changes `changed` (paths relative to the work tree), would change
 * a policy file; undefined when it would not. Three ways, each refused:
 * - a changed path names the policy file at any depth, or runs through a directory of that
 *   name (`capgate.config.json/x` replaces the file with a directory);
 * - a changed path lies on the way to a policy file capgate reads (the workspace root's,
 *   and the one in this process's working directory): replacing `app` by a link or a file
 *   moves `app/capgate.config.json` whether or not it exists yet;
 * - a changed path is a directory on disk holding a policy file anywhere below it, tracked
 *   or not: git deletes ignored files to make room (`app/` becoming a link took the
 *   ignored `app/capgate.config.json` with it). Scanned with the bounded walk of
 *   fs.move/fs.delete; a tree too large or unreadable to check is refused too.
 */
async function policyFileTouchedBy(
  ctx: ToolContext,
  changed: readonly string[],
): Promise<string | undefined> {
  const named = changed.find((p) => p.split("/").some((part) => isPolicyFile(part)));
  if (named !== undefined) return `would write or delete '${named}'`;
  const root = await realWorkspace(ctx.workspace);
  const read = policyFilePaths(root).map((path) => relative(root, path).split(sep).join("/"));
  for (const p of changed) {
    const on = read.find((r) => r.startsWith(`${p}/`));
    if (on !== undefined) return `would replace '${p}', on the way to '${on}'`;
  }
  for (const p of changed) {
    const abs = join(root, ...p.split("/"));
    const info = await lstat(abs).catch(() => null);
    if (!info?.isDirectory()) continue;
    const scan = await scanForPolicyFile(root, abs, undefined, await workspaceHiddenPaths(ctx));
    if (scan.kind === "found")
      return `would replace the directory '${p}', which holds '${relative(root, scan.path).split(sep).join("/")}'`;
    if (scan.kind !== "clean")
      return `would replace the directory '${p}', which could not be checked for a policy file (${scan.kind === "too_large" ? "too many entries" : "unreadable"})`;
  }
  return undefined;
}
