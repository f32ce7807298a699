import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/tools public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "APPROVAL_MODES",
      "CapabilitySet",
      "DEFAULT_LIMITS",
      "InvalidArgumentsError",
      "LazyAbortController",
      "PolicyDeniedError",
      "UnknownToolError",
      "approvalNeeded",
      "callContractProblem",
      "createHostResources",
      "createToolContext",
      "deferCapability",
      "defineCapability",
      "executeTool",
      "isDeferred",
      "isRejection",
      "manifestContractProblems",
      "minimalEnv",
      "requireApproval",
    ]);
  });
});

// The contract loads in any JavaScript runtime (a browser frontend, an edge function): the
// built entry and every chunk it reaches import no Node built-in and no Node-only library.
describe("@capgate/tools is runtime-neutral", () => {
  const dist = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist");

  function bareImports(entry: string): string[] {
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(
        /(?:import|export)\s*(?:[^'"]*?from\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
      )) {
        const spec = (m[1] ?? m[2]) as string;
        if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
        else bare.add(spec);
      }
    };
    visit(join(dist, entry));
    return [...bare].sort();
  }

  it("dist/index.js reaches only @capgate/schema", () => {
    expect(bareImports("index.js")).toEqual(["@capgate/schema"]);
  });

  it("uses no Node global at import time", () => {
    const text = readFileSync(join(dist, "index.js"), "utf8");
    expect(text).not.toMatch(/\b(require|Buffer|__dirname)\b/);
  });
});
