// The README example (there imported as @capgate/capability-cua), kept as a file so the
// typecheck covers it and a test runs it on a real Xvfb display.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "../index.js";

export async function example(workspace: string, display = process.env.DISPLAY): Promise<ToolResult[]> {
  // capgate's own files (traces, the sandbox journal): a directory outside the workspace
  const stateDir = mkdtempSync(join(tmpdir(), "capgate-state-"));
  const ctx: ExecuteContext = {
    workspace, // screenshots are confined to it
    signal: AbortSignal.timeout(60_000),
    // Subprocesses get exactly this environment: DISPLAY (and XAUTHORITY) select the X server.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DISPLAY: display,
      XAUTHORITY: process.env.XAUTHORITY,
    },
    profile: { name: "ComputerOperator", maySpawnWorkers: false },
    limits: DEFAULT_LIMITS,
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true }, // a host passes its Router (the loaded set) here
  };
  const results: ToolResult[] = [];
  // Look first: the PNG's pixels are the coordinates click and move take.
  results.push(await executeTool("cua.screenshot", {}, ctx));
  // → "Saved a 1024×768 PNG screenshot of DISPLAY=:99 to .capgate/screenshots/screen-….png (…)"
  results.push(await executeTool("cua.click", { x: 200, y: 150 }, ctx));
  results.push(await executeTool("cua.type", { text: "hello world" }, ctx));
  results.push(await executeTool("cua.key", { keys: "ctrl+s" }, ctx));
  results.push(await executeTool("cua.move", { x: 512, y: 400 }, ctx));
  results.push(await executeTool("cua.scroll", { dy: 3 }, ctx));
  for (const r of results) console.log(r.success, r.summary);
  rmSync(stateDir, { recursive: true, force: true });
  return results;
}
