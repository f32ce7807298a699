// The README's example, run as a test so it keeps compiling and keeps telling the truth.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
} from "@capgate/tools";
import { expect, it } from "vitest";
import { capability } from "./index.js";

it("README example: patch, read, and a refused escape", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "demo-"));
  // capgate's own files (traces, the sandbox journal): a directory outside the workspace
  const stateDir = mkdtempSync(join(tmpdir(), "demo-state-"));
  writeFileSync(join(workspace, "app.ts"), "const greeting = 'hi';\n");

  const ctx: ExecuteContext = {
    workspace,
    signal: new AbortController().signal,
    env: { PATH: process.env.PATH },
    profile: { name: "Coder", maySpawnWorkers: false },
    limits: DEFAULT_LIMITS,
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: (tool) => tool.startsWith("fs.") }, // a Router in a real host
  };

  const patched = await executeTool("fs.patch", { path: "app.ts", old: "'hi'", new: "'hello'" }, ctx);
  expect(patched.summary).toBe(
    "Patched app.ts at line 1: 1 line replaced by 1; the file now has 1 line (26 bytes).",
  );

  const page = await executeTool("fs.read", { path: "app.ts" }, ctx);
  expect(page.summary).toBe("app.ts — lines 1–1 of 1\nconst greeting = 'hello';");

  const refused = await executeTool("fs.read", { path: "../../etc/passwd" }, ctx).catch((e: unknown) => e);
  expect(CapgateError.isInstance(refused) && refused.code).toBe("policy_denied");
  rmSync(workspace, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
});
