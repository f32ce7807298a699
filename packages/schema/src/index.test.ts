import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/schema public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "APPROVAL_TEXT_CHARS",
      "CapgateError",
      "MANIFEST_FORMAT",
      "MAX_ACTION_BYTES",
      "MAX_ACTION_DEPTH",
      "MAX_MCP_TOOL_NAME",
      "MAX_TOOL_SCHEMA_CHARS",
      "MAX_TOOL_SCHEMA_DEPTH",
      "PARSE_ERROR_CODES",
      "TOOL_RISKS",
      "TOP_LEVEL_TOOL_NAMES",
      "addPrecompiledValidators",
      "admitMcpTools",
      "approvalText",
      "argumentsHash",
      "closestMatch",
      "compiledValidator",
      "describeIssues",
      "fitListing",
      "holdsMoreValuesThan",
      "isAppOnlyMcpTool",
      "isTopLevelToolName",
      "mcpCallableToolName",
      "mcpToolLabel",
      "mcpToolRisk",
      "optionalWhereDefaulted",
      "parseJsonStrict",
      "parseToolAction",
      "sentence",
      "signatureFromSchema",
      "stableHash",
      "stableStringify",
      "topLevelToolNames",
      "topLevelToolSchemas",
      "topLevelTools",
      "truncateBytes",
      "truncateMiddle",
      "truncationMarker",
      "validate",
      "validatorCacheStats",
      "visibleText",
      "withSignatures",
    ]);
  });
});

describe("@capgate/schema is runtime-neutral", () => {
  it("imports no Node built-in from its built entry", async () => {
    const { readFileSync } = await import("node:fs");
    const built = readFileSync(new URL("../dist/index.js", import.meta.url), "utf8");
    expect(built).not.toMatch(/from ["'](node:)?(fs|child_process|crypto|path|os|http|net)["']/);
  });

  // ajv's compiler is loaded with the first schema compiled, so a process whose schemas all
  // have precompiled validators never loads it.
  it("reaches no part of ajv from its built entry", async () => {
    const { readFileSync } = await import("node:fs");
    const { dirname, join, resolve } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const dist = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist");
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const m of readFileSync(file, "utf8").matchAll(
        /(?:import|export)\s*(?:[^'"]*?from\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
      )) {
        const spec = (m[1] ?? m[2]) as string;
        if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
        else bare.add(spec);
      }
    };
    visit(join(dist, "index.js"));
    expect([...bare].sort()).toEqual(["@capgate/errors", "fastest-levenshtein"]);
  });
});
