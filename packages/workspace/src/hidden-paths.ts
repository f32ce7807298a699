import { readlinkSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { lstatOrUndefined } from "./fs-probe.js";
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
 * Every hidden path of `scope`, each as listed, where it leads, and every symbolic link on
 * the way there (a symlinked `~/.ssh` is hidden where it points too, and so is each link
 * that makes it point there: moving or deleting one would un-hide the secret). "Where it
 * leads" is the real path when it exists and, when it does not, where it would be created
 * — through the links of its existing part, a dangling link's target included — so a path
 * the guard refuses stays refused once something creates it, and nothing can create it
 * through the workspace. This is the one list the sandbox (`sandboxCommand`) and the path
 * guard (`resolveInWorkspace`) both use.
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
  // The default state directory too ($CAPGATE_HOME of this process; ~/.capgate is in the home
  // list): a sandbox mirrors its journal record there and every config loader recovers from
  // it, whatever state directory a config names.
  const defaultState = process.env.CAPGATE_HOME;
  if (defaultState) {
    listed.push({
      path: resolve(defaultState),
      label: "capgate's default state directory ($CAPGATE_HOME: traces, memory, tokens, the sandbox journal)",
    });
  }
  const out = new Map<string, HiddenPath>();
  const add = (path: string, label: string) => {
    if (!out.has(path)) out.set(path, { path, label });
  };
  const walker = new LeadWalker();
  for (const entry of listed) {
    add(entry.path, entry.label);
    const links: string[] = [];
    const leads = walker.leadsTo(entry.path, links);
    if (leads !== undefined) add(leads, entry.label);
    for (const link of links) add(link, entry.label);
  }
  return [...out.values()];
}

/**
 * Where `path` (absolute) leads, link by link — the real path it resolves to, existing or not
 * (undefined for a loop, more than the kernel's number of links, or a link that cannot be
 * read) — every symbolic link passed on the way, in order, each by its own real path, and every
 * directory a `..` of a link's target climbed out of (whatever it then holds decides where the
 * path leads). The walk `hiddenPathsOf` makes for each hidden path, for one path.
 */
export function pathLeads(path: string): { leads: string | undefined; links: string[]; climbs: string[] } {
  const links: string[] = [];
  const climbs: string[] = [];
  return { leads: new LeadWalker().leadsTo(path, links, climbs), links, climbs };
}

/** Symbolic links followed at most this many times for one path (the kernel's own limit). */
const MAX_LINKS = 40;

/**
 * Where a path leads, component by component as the kernel resolves it, with `lstat`
 * answers shared by every path of one walk (the hide list's paths share their homes and
 * `~/.config`). Missing components are kept as they are: that is where the path would be
 * created.
 */
class LeadWalker {
  readonly #stats = new Map<string, Stats | undefined>();

  #lstat(path: string): Stats | undefined {
    if (this.#stats.has(path)) return this.#stats.get(path);
    const st = lstatOrUndefined(path);
    this.#stats.set(path, st);
    return st;
  }

  /**
   * The real path `path` (absolute) leads to, existing or not; each symbolic link passed is
   * pushed to `links` (by the real path of the link itself). Undefined for a loop, more than
   * MAX_LINKS links, or a link that cannot be read.
   */
  leadsTo(path: string, links: string[], climbs: string[] = []): string | undefined {
    const hops = { left: MAX_LINKS };
    return this.#walk(sep, path.split(sep), links, climbs, hops);
  }

  #walk(
    start: string,
    parts: readonly string[],
    links: string[],
    climbs: string[],
    hops: { left: number },
  ): string | undefined {
    let current = start;
    let missing = false;
    for (const name of parts) {
      if (name === "" || name === ".") continue;
      if (name === "..") {
        climbs.push(current);
        current = dirname(current);
        continue;
      }
      const next = join(current, name);
      // Below a missing component nothing exists: the rest is only where it would be.
      const st = missing ? undefined : this.#lstat(next);
      if (!st?.isSymbolicLink()) {
        if (!st) missing = true;
        current = next;
        continue;
      }
      if (--hops.left < 0) return undefined;
      links.push(next);
      let target: string;
      try {
        target = readlinkSync(next);
      } catch {
        return undefined;
      }
      const to = this.#walk(isAbsolute(target) ? sep : current, target.split(sep), links, climbs, hops);
      if (to === undefined) return undefined;
      current = to;
      missing = this.#lstat(current) === undefined;
    }
    return current;
  }
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
