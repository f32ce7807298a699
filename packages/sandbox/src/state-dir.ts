import { realpathSync, type Stats, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { CapgateError } from "@capgate/schema";

/**
 * capgate's state directory (traces, memory, logins) for a config: its `stateDir` (relative
 * to the config file's directory; `~/` is the home directory), else `$CAPGATE_HOME`, else
 * `~/.capgate`. The sandbox hides this directory from commands, so every surface that builds
 * a sandbox (the harness, the Claude Code hook's `sandbox-exec`) must make this one choice:
 * a surface that chose differently would leave the real state directory visible.
 */
export function stateDirFor(
  configStateDir: string | undefined,
  baseDir: string,
  env: Record<string, string | undefined> = process.env,
): string {
  if (configStateDir !== undefined && configStateDir !== "") {
    if (configStateDir.startsWith("~/")) return resolve(join(env.HOME ?? homedir(), configStateDir.slice(2)));
    return isAbsolute(configStateDir) ? resolve(configStateDir) : resolve(baseDir, configStateDir);
  }
  const home = env.CAPGATE_HOME;
  return resolve(home !== undefined && home !== "" ? home : join(homedir(), ".capgate"));
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
 * the model's reach, but a workspace cannot be hidden from its own tools: when the state
 * directory is the workspace, or holds it inside one of `STATE_DIR_ENTRIES`, the model
 * could read the traces and logins and rewrite the sandbox journal that the next start acts
 * on. Directories are compared by device and inode, walking up from the workspace's real
 * path, so a link or a bind mount naming the same directory does not get around it. A state
 * directory that does not exist yet holds nothing.
 */
export function stateDirPlacementProblem(workspace: string, stateDir: string): string | undefined {
  let state: Stats;
  try {
    state = statSync(stateDir);
  } catch {
    return undefined;
  }
  let dir: string;
  try {
    dir = realpathSync(workspace);
  } catch {
    return undefined; // no workspace: nothing of it to reach (its own check names that)
  }
  /** The entry of the state directory the walk came up through. */
  let below: string | undefined;
  for (;;) {
    let st: Stats | undefined;
    try {
      st = statSync(dir);
    } catch {
      st = undefined;
    }
    if (st && st.dev === state.dev && st.ino === state.ino) {
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
