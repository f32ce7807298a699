import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { realOrUndefined } from "./fs-probe.js";
import { isInside } from "./path-within.js";

/**
 * Paths under the user's home that no tool and no sandboxed command may read: credentials,
 * keys, tokens, browser profiles, shell history. The sandbox replaces each with an empty
 * directory (or an empty file); the path guard refuses every path under them, and the fs
 * walkers never list names under them. The list is documented in docs/security.md.
 */
export const HIDDEN_HOME_PATHS: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".gnupg",
  ".netrc",
  ".docker",
  ".kube",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".git-credentials",
  ".config/git/credentials",
  ".config/gh",
  ".config/hub",
  ".config/op",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".m2/settings.xml",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".password-store",
  ".local/share/keyrings",
  ".pgpass",
  ".my.cnf",
  ".mylogin.cnf",
  ".s3cfg",
  ".boto",
  ".oci",
  ".kaggle",
  ".fly",
  ".config/rclone",
  ".config/sops",
  ".config/glab-cli",
  ".config/doctl",
  ".config/hcloud",
  ".config/openstack",
  ".config/configstore",
  ".config/netlify",
  ".config/stripe",
  ".config/.wrangler",
  ".wrangler",
  ".local/share/com.vercel.cli",
  ".cache/huggingface/token",
  ".cache/huggingface/stored_tokens",
  ".huggingface",
  ".gradle/gradle.properties",
  ".config/chromium",
  ".config/google-chrome",
  ".config/BraveSoftware",
  ".config/microsoft-edge",
  ".config/vivaldi",
  ".config/opera",
  ".mozilla",
  ".thunderbird",
  "snap/firefox",
  "snap/chromium",
  ".var/app/org.mozilla.firefox",
  ".var/app/com.google.Chrome",
  ".var/app/org.chromium.Chromium",
  ".pki",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".claude",
  ".codex",
  ".capgate",
];

/** Whose secrets are hidden: the home directories and the host's state directory. */
export interface HiddenScope {
  /** The environment tools and commands get (ctx.env); its HOME counts as a home too. */
  env?: Record<string, string | undefined>;
  /** The host's state directory ($CAPGATE_HOME: traces, memory, tokens). */
  stateDir?: string;
}

/** One hidden path: absolute, as listed and (when it is a link) where it leads, with a label for messages. */
export interface HiddenPath {
  /** Absolute path (the listed one, or the real path it resolves to). */
  path: string;
  /** How a message names it: `~/.ssh`, or "capgate's state directory". */
  label: string;
}

/** The home directories whose secrets are hidden: the process's own and the command's `HOME`. */
export function homeDirectories(env: Record<string, string | undefined> | undefined): string[] {
  const homes = new Set<string>([homedir()]);
  const home = env?.HOME;
  if (home && isAbsolute(home)) homes.add(resolve(home));
  return [...homes];
}

/**
 * Every hidden path of `scope`, each both as listed and by its real path (a symlinked
 * `~/.ssh` is hidden where it points too). Missing ones are included as listed: a path
 * the guard refuses must stay refused once something creates it. This is the one list the
 * sandbox (`sandboxCommand`) and the path guard (`resolveInWorkspace`) both use.
 */
export function hiddenPathsOf(scope: HiddenScope): HiddenPath[] {
  const listed: HiddenPath[] = [];
  for (const home of homeDirectories(scope.env)) {
    for (const rel of HIDDEN_HOME_PATHS) listed.push({ path: join(home, rel), label: `~/${rel}` });
  }
  if (scope.stateDir) {
    listed.push({
      path: resolve(scope.stateDir),
      label: "capgate's state directory ($CAPGATE_HOME: traces, memory, tokens)",
    });
  }
  const out = new Map<string, HiddenPath>();
  for (const entry of listed) {
    if (!out.has(entry.path)) out.set(entry.path, entry);
    const real = realOrUndefined(entry.path);
    if (real && !out.has(real)) out.set(real, { path: real, label: entry.label });
  }
  return [...out.values()];
}

/**
 * The hidden paths that lie strictly inside `workspaceReal` (a real path): those are the
 * ones a workspace tool could otherwise reach. A hidden path that is the workspace itself
 * or contains it does not count — the workspace cannot be hidden from its own tools (a
 * state dir equal to the workspace, or a workspace under ~/.capgate, is documented).
 */
export function hiddenPathsInside(workspaceReal: string, scope: HiddenScope): HiddenPath[] {
  return hiddenPathsOf(scope).filter((h) => h.path !== workspaceReal && isInside(workspaceReal, h.path));
}

/** The hidden path `abs` is (or lies under), if any. */
export function hiddenPathAt(hidden: readonly HiddenPath[], abs: string): HiddenPath | undefined {
  return hidden.find((h) => isInside(h.path, abs));
}

/** The first hidden path strictly below `abs` (a directory whose move or delete would take it along). */
export function hiddenPathBelow(hidden: readonly HiddenPath[], abs: string): HiddenPath | undefined {
  return hidden.find((h) => h.path !== abs && isInside(abs, h.path));
}
