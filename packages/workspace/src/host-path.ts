import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { realOrUndefined } from "./fs-probe.js";
import { isInside } from "./path-within.js";

/**
 * `PATH` as the host may use it for a call in `workspace`: entries that are empty or
 * relative (both mean "the current directory") and entries that lie inside the workspace,
 * by name or by where they lead, are dropped. Programs capgate starts on the host (git for
 * the git tools, xdotool for cua, an ad-hoc MCP server, bubblewrap's command) are looked up
 * on this PATH, and the model can write anything in the workspace: a host whose PATH holds
 * `<workspace>/node_modules/.bin` (an npm script, npx) or `<workspace>/.venv/bin` would
 * otherwise run the model's `git`. The other entries keep their order.
 */
export function hostPath(path: string | undefined, workspace: string): string | undefined {
  if (path === undefined) return undefined;
  const root = realOrUndefined(workspace) ?? workspace;
  const kept: string[] = [];
  for (const entry of path.split(":")) {
    if (entry === "" || !isAbsolute(entry)) continue;
    const lexical = resolve(entry);
    if (isInside(workspace, lexical) || isInside(root, lexical) || isInside(root, realOfNearest(lexical)))
      continue;
    kept.push(entry);
  }
  return kept.join(":");
}

const pathCache = new Map<string, string>();

/**
 * `env` with its PATH made safe for host programs of a call in `workspace` (`hostPath`):
 * `env` itself when nothing is dropped, else a copy. The filtered PATH is cached per PATH
 * and workspace (a few lookups of the file system the first time, a map lookup after).
 */
export function withHostPath(
  env: Record<string, string | undefined>,
  workspace: string,
): Record<string, string | undefined> {
  const path = env.PATH;
  if (path === undefined) return env;
  const key = `${workspace}\0${path}`;
  let safe = pathCache.get(key);
  if (safe === undefined) {
    safe = hostPath(path, workspace) ?? "";
    if (pathCache.size >= 256) pathCache.clear();
    pathCache.set(key, safe);
  }
  return safe === path ? env : { ...env, PATH: safe };
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended. */
function realOfNearest(path: string): string {
  let rest = "";
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const real = realpathSync(dir);
      return rest ? join(real, rest) : real;
    } catch {
      if (dirname(dir) === dir) return path;
      rest = rest ? join(basename(dir), rest) : basename(dir);
    }
  }
}
