// A real ToolContext for the tests (the executor's own, as a host builds it).
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createToolContext,
  type ExecuteContext,
  executeTool,
  type HostServices,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "./capability.js";

export function panelContext(
  options: { allowHosts?: string[]; services?: HostServices } = {},
): ExecuteContext {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-panel-"));
  return {
    ...createToolContext({
      workspace,
      env: {},
      profile: { name: "Researcher", maySpawnWorkers: false },
      policy: options.allowHosts ? { web: { allowHosts: options.allowHosts } } : {},
      services: options.services ?? {},
    }),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

export function call(tool: string, args: unknown, ctx: ExecuteContext): Promise<ToolResult> {
  return executeTool(`browser_panel.${tool}`, args, ctx);
}

/** The command line of a live process, or undefined once it is gone. */
export function commandLine(pid: number): string[] | undefined {
  try {
    // A zombie (exited, not yet reaped) has an empty command line: it is gone too.
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return text ? text.split("\0") : undefined;
  } catch {
    return undefined;
  }
}

/** PIDs of live processes whose command line mentions `needle` (e.g. a Chromium profile directory). */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = commandLine(Number(entry));
    if (cmd?.some((arg) => arg.includes(needle))) found.push(Number(entry));
  }
  return found;
}
