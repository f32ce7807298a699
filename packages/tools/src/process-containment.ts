import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { SANDBOX_MARK_VAR } from "./process-group.js";
import { findSystemBinary } from "./sandbox-host.js";

/**
 * bubblewrap's arguments for containment alone: a new pid namespace (every process the
 * command starts is in it, whatever it does — setsid, double fork, daemonising), killed
 * with the host (`--die-with-parent`, kernel-enforced, so also on `kill -9` of the host),
 * and ended as a whole when the command itself exits (its init exits, and the kernel kills
 * the rest of the namespace). Nothing else changes: the host's filesystem, devices, network
 * and user. A new /proc shows the namespace's own processes, so pids the command prints
 * match what it sees.
 */
export const CONTAINMENT_BWRAP_ARGS: readonly string[] = [
  "--unshare-pid",
  "--die-with-parent",
  "--dev-bind",
  "/",
  "/",
  "--proc",
  "/proc",
];

/** How a contained command's processes are held together. */
export type Containment =
  /** Its own pid namespace that dies with it and with the host (bubblewrap). */
  | "namespace"
  /**
   * No pid namespace could be had here (no working bubblewrap): its processes carry a mark
   * in their environment and are killed by it when the command stops and when the host
   * exits. A `kill -9` of the host, or a process that clears its environment, escapes.
   */
  | "mark";

export interface ContainedCommand {
  file: string;
  args: string[];
  env: Record<string, string | undefined>;
  containment: Containment;
  /** For `mark`: pass to `killMarkedProcesses` when the command stops. */
  mark?: string;
}

const probes = new Map<string, boolean>();

/**
 * Whether bubblewrap can give a command a pid namespace here, checked once per process
 * (it is run once with exactly `CONTAINMENT_BWRAP_ARGS`). Synchronous so that every
 * starter of processes can use it, the synchronous ones included; the first check costs
 * one short bubblewrap run.
 */
export function containmentAvailable(bwrap: string | undefined = findSystemBinary("bwrap")): boolean {
  if (bwrap === undefined) return false;
  let ok = probes.get(bwrap);
  if (ok === undefined) {
    const probe = spawnSync(bwrap, [...CONTAINMENT_BWRAP_ARGS, "--", "true"], {
      env: {},
      stdio: "ignore",
      timeout: 10_000,
    });
    ok = probe.status === 0;
    probes.set(bwrap, ok);
  }
  return ok;
}

/**
 * Wrap a program so nothing it starts outlives it or the host: in its own pid namespace
 * where bubblewrap works (`CONTAINMENT_BWRAP_ARGS`), else marked in the environment (see
 * `Containment`). Used for everything capgate starts outside the OS sandbox — the git
 * tools, configured MCP servers, commands with `"sandbox": "off"`; the sandbox has its own
 * pid namespace already. A bare program name is resolved on `env.PATH` first, so a
 * missing program is the same `spawn_failed` error as without the wrapper.
 * `options.bwrap` names the bubblewrap to use (default: the system's, found in the system
 * directories, never on PATH).
 * @throws CapgateError `spawn_failed` when `file` has no slash and no directory of PATH has it.
 */
export function containCommand(
  file: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  options: { bwrap?: string } = {},
): ContainedCommand {
  const bwrap = options.bwrap ?? findSystemBinary("bwrap");
  if (bwrap !== undefined && containmentAvailable(bwrap)) {
    return {
      file: bwrap,
      args: [...CONTAINMENT_BWRAP_ARGS, "--", resolveProgram(file, env.PATH), ...args],
      env,
      containment: "namespace",
    };
  }
  const mark = randomBytes(12).toString("hex");
  return { file, args: [...args], env: { ...env, [SANDBOX_MARK_VAR]: mark }, containment: "mark", mark };
}

/**
 * A bare program name resolved on `PATH` the way the host would, so "not found" is a
 * `spawn_failed` error here rather than a wrapper's non-zero exit.
 * @throws CapgateError `spawn_failed` when no directory of PATH has it.
 */
export function resolveProgram(file: string, path: string | undefined): string {
  if (file.includes("/")) return file;
  for (const dir of (path ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = join(dir, file);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  throw new CapgateError("spawn_failed", `could not start '${file}': no such program or working directory`);
}
