import { describe, expect, it } from "vitest";
import * as registry from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(registry).sort()).toEqual([
      "CAPABILITY_NAME_PATTERN",
      "DEFAULT_SEARCH_WEIGHTS",
      "DuplicateCapabilityError",
      "InvalidManifestError",
      "InvalidMcpServerError",
      "MAX_MCP_DESCRIPTION",
      "MAX_TOOL_NAME_LENGTH",
      "MCP_NAMESPACE",
      "MCP_SERVER_NAME_PATTERN",
      "MCP_TOOL_NAME_PATTERN",
      "Registry",
      "STEM_PREFIX_LENGTH",
      "TOOL_VERB_PATTERN",
      "analyze",
      "createTextIndex",
      "formatProblems",
      "isStopWord",
      "mcpCapabilityName",
      "mcpManifest",
      "mcpServerOf",
      "sanitizeMcpDescription",
      "stem",
      "tokenize",
      "topIndices",
      "validateManifest",
    ]);
  });
});
