import { closestMatch } from "@capgate/schema";
import { InvalidArgumentsError, type ToolContext } from "@capgate/tools";
import { git } from "./run-git.js";

/**
 * A ref or branch name can never become a git option: a leading '-' is refused (the schema
 * says so too; this holds when a handler is called without the executor), as are control
 * characters. Everything else is for git to judge, always after `--end-of-options` or as a
 * verified object id.
 * @throws InvalidArgumentsError naming the property.
 */
export function checkRefText(ref: unknown, property: string): asserts ref is string {
  if (typeof ref !== "string" || ref === "") {
    throw new InvalidArgumentsError(`${property} must be a non-empty string such as 'main' or 'HEAD~1'.`, {
      property,
    });
  }
  if (ref.startsWith("-")) {
    throw new InvalidArgumentsError(
      `${property} ${JSON.stringify(ref)} starts with '-', so git would read it as an option; name a branch, tag or commit instead.`,
      { property },
    );
  }
  if ([...ref].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    throw new InvalidArgumentsError(`${property} ${JSON.stringify(ref)} contains control characters.`, {
      property,
    });
  }
}

/** Policy step: the ref (or branch name) argument passes `checkRefText`, as a rejection before anything runs. */
export function refPolicy(property: "ref" | "name") {
  return (args: { ref?: string; name?: string }): undefined => {
    const value = property === "ref" ? args.ref : args.name;
    if (value !== undefined) checkRefText(value, property);
    return undefined;
  };
}

/** The object id `ref` names (peeled to a commit with `peel`), or undefined when it names nothing. */
export async function resolveRevision(
  ctx: ToolContext,
  ref: string,
  peel?: "commit",
): Promise<string | undefined> {
  checkRefText(ref, "ref");
  const spec = peel ? `${ref}^{${peel}}` : ref;
  const r = await git(ctx, ["rev-parse", "--verify", "--quiet", "--end-of-options", spec]);
  const oid = r.stdout.trim();
  return r.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(oid) ? oid : undefined;
}

/** True when `refs/heads/<name>` exists. */
export async function branchExists(ctx: ToolContext, name: string): Promise<boolean> {
  const r = await git(ctx, ["show-ref", "--verify", "--quiet", `refs/heads/${name}`]);
  return r.exitCode === 0;
}

/** Why `name` is not a valid new branch name, or undefined when it is (git's own rule). */
export async function invalidBranchName(ctx: ToolContext, name: string): Promise<string | undefined> {
  checkRefText(name, "name");
  const r = await git(ctx, ["check-ref-format", "--branch", name]);
  if (r.exitCode === 0) return undefined;
  return `'${name}' is not a valid branch name (no '..', '~', '^', ':', '?', '*', '[', spaces, or a trailing '/' or '.lock').`;
}

/** Local branches, tags and remote-tracking branches by short name. */
export async function refNames(ctx: ToolContext): Promise<string[]> {
  const r = await git(ctx, [
    "for-each-ref",
    "--format=%(refname:short)",
    "refs/heads",
    "refs/tags",
    "refs/remotes",
  ]);
  return r.exitCode === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}

/** " Did you mean 'x'?" or the list of branches and tags, for an unknown ref. */
export async function refHint(ctx: ToolContext, ref: string): Promise<string> {
  const names = await refNames(ctx);
  const base = ref.replace(/[~^:@].*$/, "");
  const guess = base ? closestMatch(base, names) : undefined;
  if (guess) return ` Did you mean '${guess}'?`;
  if (names.length === 0) return " The repository has no branches or tags yet.";
  const shown = names.slice(0, 20).join(", ");
  return ` Known branches and tags: ${shown}${names.length > 20 ? `, … (${names.length} in all)` : ""}.`;
}

/** The branch HEAD is on, or undefined when HEAD is detached. */
export async function currentBranch(ctx: ToolContext): Promise<string | undefined> {
  const r = await git(ctx, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  return r.exitCode === 0 ? r.stdout.trim() : undefined;
}

/** "abc1234 subject" for a commit. */
export async function describeCommit(ctx: ToolContext, rev: string): Promise<string> {
  const r = await git(ctx, ["log", "-1", "--format=%h %s", "--end-of-options", rev]);
  return r.exitCode === 0 ? r.stdout.trim() : rev;
}
