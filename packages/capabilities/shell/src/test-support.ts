// Shared by the shell tests (not exported): a real ToolContext over a temp workspace, fake
// GUI openers that leave a mark when run, and a look at the process table.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  const marker = join(root, "ran.log");
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
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir: root,
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

/** Live (non-zombie) processes whose process group is `pgid`, from /proc. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") members.push(Number(name));
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
