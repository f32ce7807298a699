import type { ToolContext } from "@capgate/tools";
import { git } from "./run-git.js";
import { MACHINE_OUTPUT_BYTES } from "./status.js";

/** A path whose `.gitattributes` name a filter driver (Git LFS: `filter=lfs`). */
export interface FilteredPath {
  path: string;
  filter: string;
}

/** Most paths named in a refusal. */
const SHOWN = 10;

/**
 * The paths among `paths` that `.gitattributes` give a filter driver. The git tools never
 * run filter programs (they are commands from the repository's config), so staging or
 * checking out such a file would record or write the wrong bytes — the whole file instead
 * of an LFS pointer, or the pointer instead of the content. Callers refuse instead.
 */
export async function filteredPaths(ctx: ToolContext, paths: readonly string[]): Promise<FilteredPath[]> {
  if (paths.length === 0) return [];
  const r = await git(ctx, ["check-attr", "-z", "--stdin", "filter"], {
    input: `${paths.join("\0")}\0`,
    maxOutputBytes: MACHINE_OUTPUT_BYTES,
  });
  if (r.exitCode !== 0) return [];
  const fields = r.stdout.split("\0");
  const out: FilteredPath[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const value = fields[i + 2]!;
    if (value !== "unspecified" && value !== "unset") out.push({ path: fields[i]!, filter: value });
  }
  return out;
}

/** Files `git add -- <specs>` would stage content for: modified tracked files and untracked, not ignored, ones. */
export async function filesToStage(ctx: ToolContext, specs: readonly string[]): Promise<string[]> {
  const r = await git(
    ctx,
    ["ls-files", "-z", "--modified", "--others", "--exclude-standard", "--", ...specs],
    {
      maxOutputBytes: MACHINE_OUTPUT_BYTES,
    },
  );
  return r.exitCode === 0 ? [...new Set(r.stdout.split("\0").filter(Boolean))].sort() : [];
}

/** Files that differ between HEAD and `target`, i.e. that switching would write. */
export async function filesChangedBy(ctx: ToolContext, target: string): Promise<string[]> {
  // An unborn HEAD (no commit yet): switching writes every file of the target's tree.
  const head = await git(ctx, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
  const r =
    head.exitCode === 0
      ? await git(
          ctx,
          ["diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", "HEAD", "--end-of-options", target],
          { maxOutputBytes: MACHINE_OUTPUT_BYTES },
        )
      : await git(ctx, ["ls-tree", "-r", "--name-only", "-z", "--full-tree", "--end-of-options", target], {
          maxOutputBytes: MACHINE_OUTPUT_BYTES,
        });
  // Fail closed: the checks that follow are only as good as this list.
  if (r.exitCode !== 0 || r.truncated) {
    throw new Error(
      `could not list the files that switching to '${target}' changes (${r.truncated ? "too many to list" : r.stderr.trim() || `git exited with ${r.exitCode}`}), so the switch was not checked and nothing was changed`,
    );
  }
  return r.stdout.split("\0").filter(Boolean);
}

/** The refusal for `what` ("git.add", "git.checkout"), naming the files and their drivers. */
export function filterRefusal(what: string, found: readonly FilteredPath[]): string {
  const drivers = [...new Set(found.map((f) => f.filter))];
  const listed = found
    .slice(0, SHOWN)
    .map((f) => f.path)
    .join(", ");
  return `${what} refused: ${found.length} file${found.length === 1 ? "" : "s"} (${listed}${found.length > SHOWN ? ", …" : ""}) use${found.length === 1 ? "s" : ""} the filter driver${drivers.length === 1 ? "" : "s"} ${drivers.map((d) => `'${d}'`).join(", ")} from .gitattributes (e.g. Git LFS). The git tools never run filter programs — they are commands from the repository's config — and without them git would record or write the wrong bytes. Nothing was changed; use git through shell.run for these files, or remove the attribute.`;
}
