import { describe, expect, it } from "vitest";
import * as registry from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(registry).sort()).toEqual([
      "DuplicateCapabilityError",
      "InvalidManifestError",
      "InvalidMcpServerError",
      "OPERATION_SYNONYMS",
      "Registry",
      "SIBLING_TOOLS",
      "analyze",
      "createTextIndex",
      "isStopWord",
      "mcpCapabilityName",
      "mcpManifest",
      "tokenize",
      "topIndices",
      "validateManifest",
    ]);
  });
});
