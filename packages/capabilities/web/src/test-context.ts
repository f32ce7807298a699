// A real ToolContext for the tests (the executor's own, as a host builds it).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createToolContext,
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
    ...createToolContext({
      workspace,
      env: {},
      profile: { name: "Researcher", maySpawnWorkers: false },
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      policy: options.allowHosts ? { web: { allowHosts: options.allowHosts } } : {},
    }),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

export function call(tool: string, args: unknown, ctx: ExecuteContext): Promise<ToolResult> {
  return executeTool(tool, args, ctx);
}
