import { type Stats, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { CapgateError } from "@capgate/schema";
import { isInside, lstatOrUndefined, pathLeads, realOrUndefined } from "@capgate/workspace";
import { type MountSource, mountSource, mountsBelow, readMountTable, sourceWithin } from "./mount-source.js";

/**
 * capgate's state directory (traces, memory, logins) for a config: its `stateDir` (relative
 * to the config file's directory; `~` and `~/` are the home directory), else `$CAPGATE_HOME`
 * (which must be absolute: `invalid_config` otherwise), else `~/.capgate`. The sandbox hides
 * this directory from commands, so every surface that builds a sandbox (the harness, the
 * Claude Code hook's `sandbox-exec`) must make this one choice: a surface that chose
 * differently would leave the real state directory visible.
 */
export function stateDirFor(
  configStateDir: string | undefined,
  baseDir: string,
  env: Record<string, string | undefined> = process.env,
): string {
  if (configStateDir !== undefined && configStateDir !== "") {
    if (configStateDir === "~" || configStateDir.startsWith("~/"))
      return resolve(join(env.HOME ?? homedir(), configStateDir.slice(2)));
    return isAbsolute(configStateDir) ? resolve(configStateDir) : resolve(baseDir, configStateDir);
  }
  const home = env.CAPGATE_HOME;
  if (home === undefined || home === "") return resolve(join(homedir(), ".capgate"));
  // Relative, it would name another directory from every working directory: a sandbox would
  // hide one and the next process recover from another (a shell keeps its `cd` between calls).
  if (!isAbsolute(home))
    throw new CapgateError(
      "invalid_config",
      `CAPGATE_HOME must be an absolute path; it is '${home}', which names a different directory from every working directory. Set it to an absolute path (e.g. ${join(homedir(), ".capgate")}) or unset it.`,
      { property: "CAPGATE_HOME" },
    );
  return resolve(home);
}

/**
 * What capgate keeps in a state directory, by the package that writes it: `runs/` (traces,
 * @capgate/loop), `memory.jsonl` (@capgate/loop), `sandboxes/` (this package's journal),
 * `mcp-servers/` (sandboxed servers' working directories, @capgate/harness), `mcp-tools/`
 * and `mcp-auth/` (tool lists and OAuth logins, @capgate/mcp-client), `browser/` (profiles
 * and the launcher, @capgate/cap-browser-panel). A workspace inside one of them would give
 * the model that state; a workspace elsewhere under the state directory (a worker's
 * checkouts in `~/.capgate/work`) reaches only itself.
 */
export const STATE_DIR_ENTRIES: readonly string[] = Object.freeze([
  "runs",
  "memory.jsonl",
  "sandboxes",
  "mcp-servers",
  "mcp-tools",
  "mcp-auth",
  "browser",
]);

/**
 * Why `stateDir` cannot serve beside `workspace`, or undefined when it can. The hide list
 * (the path guard's and the sandbox's) keeps a state directory *inside* the workspace out of
 * the model's reach, but a workspace cannot be hidden from its own tools, and a link can be
 * replaced. Refused:
 * - the state directory is the workspace, or holds it inside one of `STATE_DIR_ENTRIES`
 *   (the model could read the traces and logins and rewrite the sandbox journal that the
 *   next start acts on);
 * - one of those entries leads into the workspace (a link or bind mount of it);
 * - the state directory is reached through a symbolic link inside the workspace (a command
 *   could replace the link with a directory of its own, holding a forged journal).
 * Directories are compared by device and inode, walking up from the workspace's real path,
 * and (on Linux) by their source in the mount table (`mountProblem`), so neither a link nor a
 * bind mount naming the same directory gets around it. A state directory that does not exist
 * yet holds nothing (callers create it before a command runs).
 */
export function stateDirPlacementProblem(workspace: string, stateDir: string): string | undefined {
  // Real paths as the kernel resolves them (`..` in a link's target after the link, not before).
  const root = realOrUndefined(resolve(workspace));
  if (root === undefined) return undefined; // no workspace: nothing of it to reach (its own check names that)
  // Every link on the way, link by link: one in the workspace is the model's to replace.
  const { leads, links, climbs } = pathLeads(resolve(stateDir));
  const link = links.find((l) => reachesByInode(dirname(l), root));
  if (link !== undefined)
    return `is reached through the symbolic link '${link}' inside the workspace, which a command could replace`;
  // A link's `..` applied to a workspace directory: what the model puts there decides where it leads.
  const climb = climbs.find((c) => reachesByInode(c, root) || isInside(root, c));
  if (climb !== undefined)
    return `is reached through '${climb}/..' inside the workspace, which a command could replace`;
  if (leads === undefined) return "does not resolve (a loop of symbolic links, or one that cannot be read)";
  const state = statOrUndefined(resolve(stateDir));
  if (!state) return undefined;
  /** (device, inode) → what it is: the state directory itself, or one of its entries. */
  const known = new Map<string, string | undefined>([[key(state), undefined]]);
  const stateReal = realOrUndefined(resolve(stateDir));
  if (stateReal === undefined) return undefined;
  /** The entries that exist, by their real paths. */
  const entries: Array<{ entry: string; real: string }> = [];
  for (const entry of STATE_DIR_ENTRIES) {
    const path = join(stateDir, entry);
    const st = statOrUndefined(path);
    if (!st) continue;
    known.set(key(st), entry);
    // The memory file hard-linked from elsewhere: one inode, two names.
    if (st.isFile() && st.nlink > 1)
      return `has its '${entry}' entry hard-linked under another name, which the hide list cannot hide`;
    // An entry that leads out of the state directory into the workspace (a link, a bind mount).
    const real = realOrUndefined(path);
    if (!real) continue;
    if (!isInside(stateReal, real) && reachesByInode(real, root))
      return `has its '${entry}' entry inside the workspace`;
    entries.push({ entry, real });
  }
  const mounted = mountProblem(root, stateReal, entries);
  if (mounted !== undefined) return mounted;
  /** The entry of the state directory the walk came up through. */
  let below: string | undefined;
  let dir = root;
  for (;;) {
    const st = statOrUndefined(dir);
    if (st && known.has(key(st))) {
      const entry = known.get(key(st));
      if (entry !== undefined) return `holds the workspace in its '${entry}' entry`;
      if (below === undefined) return "is the workspace";
      if (STATE_DIR_ENTRIES.includes(below)) return `holds the workspace in its '${below}' entry`;
      return undefined;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    below = basename(dir);
    dir = parent;
  }
}

/**
 * The same questions through the mount table (Linux): a bind mount shows a directory under a
 * second name (a container's volume: `-v $PWD:/ws -v $PWD/.state:/root/.capgate`), which
 * neither the path nor the walk up from the workspace sees. Refused: the state directory, or
 * one of its entries, lying in the workspace under another name (the hide list, which goes by
 * path, would not hide it); the workspace lying in the state directory or one of its entries
 * under another name; a mount inside the workspace (which the sandbox's workspace bind
 * carries in, read-write) showing the state directory, an entry, or a directory above them,
 * unless it is mounted at the state directory's own path (hidden with it).
 */
function mountProblem(
  root: string,
  stateReal: string,
  existing: ReadonlyArray<{ entry: string; real: string }>,
): string | undefined {
  const table = readMountTable();
  if (!table) return undefined;
  const ws = mountSource(root, table);
  const state = mountSource(stateReal, table);
  if (!ws || !state) return undefined;
  if (ws.device === state.device && ws.inner === state.inner)
    return root === stateReal ? "is the workspace" : "is the workspace under another name (a bind mount)";
  if (sourceWithin(ws, state) && !isInside(root, stateReal))
    return "is a directory of the workspace under another name (a bind mount), which the hide list cannot hide";
  if (sourceWithin(state, ws) && !isInside(stateReal, root)) {
    const rest = state.inner === "/" ? ws.inner.slice(1) : ws.inner.slice(state.inner.length + 1);
    const entry = rest.split("/")[0] ?? "";
    if (STATE_DIR_ENTRIES.includes(entry))
      return `holds the workspace in its '${entry}' entry (under another name)`;
  }
  /** Entries a mount inside the workspace must not show, by their sources (a link of one leads elsewhere). */
  const entries: Array<{ entry: string; source: MountSource }> = [];
  for (const { entry, real } of existing) {
    const source = mountSource(real, table);
    if (!source) continue;
    if (sourceWithin(ws, source) && !isInside(root, real))
      return `has its '${entry}' entry in the workspace under another name (a bind mount)`;
    entries.push({ entry, source });
  }
  // A mount inside the workspace that shows the state directory, an entry, or a directory
  // above them: the workspace's bind carries it into the sandbox, read-write, and the hide
  // list (by path) does not cover it — unless it is mounted at the state directory's own path.
  for (const { at, source } of mountsBelow(root, table)) {
    if (isInside(stateReal, at)) continue;
    const cannot = `in the workspace at '${at}' (a mount), which the hide list cannot hide`;
    if (sourceWithin(source, state)) return `shows itself ${cannot}`;
    for (const e of entries)
      if (sourceWithin(source, e.source) || sourceWithin(e.source, source))
        return `shows its '${e.entry}' entry ${cannot}`;
    if (sourceWithin(state, source)) return `shows part of itself ${cannot}`;
  }
  return undefined;
}

const key = (st: Stats): string => `${st.dev}:${st.ino}`;

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `path` (a real path) is `dir` or lies below it, by device and inode of each directory up from it. */
function reachesByInode(path: string, dir: string): boolean {
  const target = statOrUndefined(dir);
  if (!target) return false;
  for (let p = path; ; p = dirname(p)) {
    const st = statOrUndefined(p);
    if (st && st.dev === target.dev && st.ino === target.ino) return true;
    if (dirname(p) === p) return false;
  }
}

/**
 * Whether `path`, created now, would lie in the workspace `root`: it passes a link in the
 * workspace, or the directory its existing part resolves to (links followed, a dangling
 * link's target included) is in the workspace.
 */
export function wouldLieInWorkspace(workspace: string, path: string): boolean {
  const root = realOrUndefined(workspace);
  if (root === undefined) return false;
  const { leads, links } = pathLeads(resolve(path));
  if (leads === undefined || links.some((link) => reachesByInode(dirname(link), root))) return true;
  let existing = leads;
  while (!lstatOrUndefined(existing) && dirname(existing) !== existing) existing = dirname(existing);
  return reachesByInode(existing, root);
}

/**
 * `stateDirPlacementProblem` as a refusal, for every surface that pairs a workspace with a
 * state directory (the harness at start, `sandboxCommand` before each sandbox).
 * @throws CapgateError `invalid_workspace` (property `stateDir`) naming both and what to change.
 */
export function assertStateDirPlacement(workspace: string, stateDir: string): void {
  const problem = stateDirPlacementProblem(workspace, stateDir);
  if (problem === undefined) return;
  throw new CapgateError(
    "invalid_workspace",
    `The state directory '${resolve(stateDir)}' ${problem} ('${resolve(workspace)}'). capgate keeps its run traces, memory, MCP logins, browser profiles and sandbox journal there, and the model must not read or rewrite them. Set "stateDir" in capgate.config.json (or $CAPGATE_HOME) to a directory outside the workspace, or choose another workspace.`,
    { property: "stateDir" },
  );
}
