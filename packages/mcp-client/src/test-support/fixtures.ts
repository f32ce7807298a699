import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpStdioServerConfig } from "../config.js";

const here = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = join(here, "..", "..", "test", "fixtures");

/** A stdio config running one of our fault servers with this Node. */
export function fixture(name: string, extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [join(FIXTURES, `${name}.mjs`)], ...extra };
}

/** The installed @modelcontextprotocol/server-everything entry (run with node, never downloaded). */
export function everythingEntry(): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
}

export function everything(extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [everythingEntry(), "stdio"], ...extra };
}

/** Live (non-zombie) processes of a process group, from the process table (`ps`). */
export function liveGroupMembers(pgid: number): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" });
  const pids: number[] = [];
  for (const line of out.split("\n")) {
    const [pid, group, stat] = line.trim().split(/\s+/);
    if (Number(group) === pgid && stat && !stat.startsWith("Z")) pids.push(Number(pid));
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    const out = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return out !== "" && !out.startsWith("Z");
  } catch {
    return false; // ps exits 1 when no such process
  }
}

/** Live (non-zombie) processes whose command line has `marker` as one of its words (read with ps). */
export function processesWithArg(marker: string): string[] {
  const out = execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => !line.startsWith("Z") && line.split(/\s+/).slice(1).includes(marker));
}

/** Poll `check` until it holds; the bound only keeps a broken test from hanging, so it is generous. */
export async function waitUntil(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
