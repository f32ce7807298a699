import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/schema public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
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
      "admitMcpTools",
      "argumentsHash",
      "closestMatch",
      "compiledValidator",
      "describeIssues",
      "fitListing",
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
    ]);
  });
});

describe("@capgate/schema is runtime-neutral", () => {
  it("imports no Node built-in from its built entry", async () => {
    const { readFileSync } = await import("node:fs");
    const built = readFileSync(new URL("../dist/index.js", import.meta.url), "utf8");
    expect(built).not.toMatch(/from ["'](node:)?(fs|child_process|crypto|path|os|http|net)["']/);
  });
});
