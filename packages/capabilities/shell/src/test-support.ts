// Shared by the shell tests (not exported): a real ToolContext over a temp workspace, fake
// GUI openers that leave a mark when run, and a look at the process table.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellForTests } from "@capgate/test-system-parts";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "./capability.js";

/** Programs the fakes stand in for: each appends its name to the marker file when run. */
export const FAKE_OPENERS = ["xdg-open", "open", "gio", "firefox", "sensible-browser"];

export interface ShellTestHost {
  workspace: string;
  /** Directory with the fake openers, first on the context's PATH. */
  bin: string;
  /** Every fake that ran appended a line here. */
  marker: string;
  ctx: ExecuteContext;
  call(tool: string, args: Record<string, unknown>, over?: Partial<ToolContext>): Promise<ToolResult>;
  /** Lines the fakes wrote (empty when none ran). */
  ran(): string[];
  close(): Promise<void>;
}

export function createShellTestHost(over: Partial<ToolContext> = {}): ShellTestHost {
  const root = mkdtempSync(join(tmpdir(), "capgate-shell-"));
  const workspace = join(root, "ws");
  const bin = join(root, "bin");
  mkdirSync(workspace);
  mkdirSync(bin);
  // In the workspace: the only place a sandboxed command (and so a fake that did run) can write.
  const marker = join(workspace, ".ran.log");
  for (const name of FAKE_OPENERS) {
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${marker}'\n`);
    chmodSync(file, 0o755);
  }
  const ctx: ExecuteContext = {
    workspace,
    signal: new AbortController().signal,
    env: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: root, LANG: "C.UTF-8" },
    profile: { name: "Coder", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS },
    // The sandbox on where bubblewrap works (or is required); off on a machine without it.
    policy: { shell: shellForTests() },
    services: {},
    resources: createHostResources(),
    stateDir: join(root, "state"),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: (tool) => tool.startsWith("shell.") },
    ...over,
  };
  return {
    workspace,
    bin,
    marker,
    ctx,
    call: (tool, args, extra = {}) => executeTool(tool, args, { ...ctx, ...extra }),
    ran: () => {
      try {
        return readFileSync(marker, "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    close: async () => {
      await ctx.resources.closeAll();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * Live (non-zombie) processes in the tree under `pid` (it included), from /proc. The
 * sandbox starts the command in a new session (bubblewrap --new-session), so the tree, not
 * the process group of the spawned pid, is what must be gone.
 */
export function treeMembers(pid: number): number[] {
  const parent = new Map<number, number>();
  const live = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    parent.set(Number(name), Number(fields[1]));
    if (fields[0] !== "Z" && fields[0] !== "X") live.add(Number(name));
  }
  const members: number[] = [];
  for (const candidate of live) {
    for (let p: number | undefined = candidate; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === pid) {
        members.push(candidate);
        break;
      }
    }
  }
  return members;
}

/** Poll `probe` until it returns a value (tests wait for output, never assert on time). */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}
