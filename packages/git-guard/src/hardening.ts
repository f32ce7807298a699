import { dirname, join } from "node:path";

/**
 * Options before every git subcommand. They make git run git and nothing of the
 * repository's: no hooks (a hook is arbitrary code; see docs/git-and-files.md), no
 * fsmonitor daemon, no pager, no editor, no signing program, no external diff, no
 * credential helper, no transport at all (so no ssh command, proxy or `ext::` helper can
 * run), no submodule recursion, no background gc; `--literal-pathspecs` so a path is a
 * name, never a glob or `:(magic)`; `user.useConfigOnly` so a commit never carries an
 * invented identity such as `root@host.(none)`. Command-line `-c` wins over the
 * repository's config, which is read before it, and reaches the git processes git starts
 * itself (GIT_CONFIG_PARAMETERS) — but a nested repository's own config is still read
 * there, which is why nested repositories are stripped or refused (nested.ts) rather than
 * trusted to these settings.
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
    "fetch.recurseSubmodules=false",
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
 * The environment git runs with: `env` without the variables that would point git at
 * another repository or inject configuration (GIT_DIR, GIT_CONFIG_COUNT, GIT_CONFIG_GLOBAL,
 * XDG_CONFIG_HOME, …), then no system or global config, no prompts, no pager, no editor, no
 * lazy fetch, no replace refs (git shows the objects as they are), the C locale for
 * parseable messages — and, with a `root`, GIT_DIR/GIT_WORK_TREE pinned to `<root>/.git`
 * and `<root>` with a ceiling at its parent.
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
    GIT_NO_REPLACE_OBJECTS: "1",
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

/** `-c` pairs as git's argv: `["-c", "a=b", "-c", "c=d"]`. */
export function configArgs(settings: readonly string[]): string[] {
  return settings.flatMap((s) => ["-c", s]);
}
