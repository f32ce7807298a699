// The README's example, run as a test so it keeps compiling and keeps telling the truth.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
} from "@capgate/tools";
import { expect, it } from "vitest";
import { capability } from "./index.js";

// The example runs the program in the OS sandbox, as a user gets it: without bubblewrap it cannot.
const system = needs(["bwrap"]);

it.skipIf(system.skip)(
  `README example: run a JavaScript program in the workspace${system.note}`,
  async () => {
    const workspace = mkdtempSync(join(tmpdir(), "demo-"));
    // capgate's own files (traces, the sandbox journal): a directory outside the workspace
    const stateDir = mkdtempSync(join(tmpdir(), "demo-state-"));
    const ctx: ExecuteContext = {
      workspace,
      signal: new AbortController().signal,
      env: { PATH: process.env.PATH }, // the program's whole environment
      profile: { name: "Coder", maySpawnWorkers: false },
      limits: DEFAULT_LIMITS,
      policy: {},
      services: {},
      resources: createHostResources(),
      stateDir,
      capabilities: new CapabilitySet([capability]),
      loaded: { isToolLoaded: (tool) => tool === "code.run" }, // a Router in a real host
    };

    const result = await executeTool(
      "code.run",
      { language: "javascript", source: "const xs = [3, 1, 2];\nconsole.log(xs.sort().join(','));" },
      ctx,
    );
    expect(result.summary).toBe("javascript program exited with code 0.\n--- stdout (6 bytes) ---\n1,2,3");
    rmSync(workspace, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  },
);
