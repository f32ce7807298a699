import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolLimits,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "./capability.js";

/** A real temp directory holding the workspace `proj` and things beside it. */
export interface Fixture {
  base: string;
  ws: string;
  ctx: ExecuteContext;
  cleanup(): void;
}

export function makeFixture(limits: Partial<ToolLimits> = {}): Fixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-fs-")));
  const ws = join(base, "proj");
  mkdirSync(ws);
  return {
    base,
    ws,
    ctx: fsContext(ws, limits),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** A real ToolContext with the fs capability loaded. */
export function fsContext(
  workspace: string,
  limits: Partial<ToolLimits> = {},
  signal?: AbortSignal,
): ExecuteContext {
  return {
    workspace,
    signal: signal ?? new AbortController().signal,
    env: { PATH: process.env.PATH },
    profile: { name: "Coder", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS, ...limits },
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir: workspace,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

export function call(ctx: ExecuteContext, tool: string, args: unknown): Promise<ToolResult> {
  return executeTool(tool, args, ctx);
}

/** The rejection a call throws; fails the test when the call resolves instead. */
export async function rejection(ctx: ExecuteContext, tool: string, args: unknown): Promise<CapgateError> {
  const outcome = await executeTool(tool, args, ctx).then(
    (result) => new Error(`expected ${tool} to be rejected, got ${JSON.stringify(result)}`),
    (error: unknown) => error,
  );
  if (!CapgateError.isInstance(outcome)) throw outcome;
  return outcome;
}

/** Every path under `dir` with its content (files), link target marker or "dir", for before/after checks. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const rel = prefix + entry.name;
      const full = join(d, entry.name);
      if (entry.isSymbolicLink()) out[rel] = "<link>";
      else if (entry.isDirectory()) {
        out[rel] = "<dir>";
        walk(full, `${rel}/`);
      } else out[rel] = `${readFileSync(full, "latin1")}|${statSync(full).mtimeMs}`;
    }
  };
  walk(dir, "");
  return out;
}
