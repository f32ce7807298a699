import { describe, expect, it } from "vitest";
import * as semantic from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(semantic).sort()).toEqual(["createSemanticRanker", "parseVectorTable"]);
  });
});
