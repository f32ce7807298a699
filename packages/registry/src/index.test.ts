import { describe, expect, it } from "vitest";
import * as registry from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(registry).sort()).toEqual([
      "DuplicateCapabilityError",
      "InvalidManifestError",
      "InvalidMcpServerError",
      "Registry",
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
