// A real ToolContext for the tests (the executor's own, as a host builds it).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

export function webContext(
  options: { allowHosts?: string[]; limits?: Partial<ToolLimits> } = {},
): ExecuteContext {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-web-"));
  return {
    workspace,
    signal: new AbortController().signal,
    env: {},
    profile: { name: "Researcher", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    policy: options.allowHosts ? { web: { allowHosts: options.allowHosts } } : {},
    services: {},
    resources: createHostResources(),
    stateDir: workspace,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

export function call(tool: string, args: unknown, ctx: ExecuteContext): Promise<ToolResult> {
  return executeTool(tool, args, ctx);
}
