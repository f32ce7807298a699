import { describe, expect, it } from "vitest";
import { loadedSetExample } from "../examples/loaded-set.js";

// The README's example, run for real so it cannot rot.
describe("README example", () => {
  it("loads, lists sorted signatures and unloads", () => {
    expect(loadedSetExample()).toEqual({
      loaded: ["fs", "mcp:github"],
      signatures: [
        "fs.read(path: string, offset?: integer, limit?: integer)",
        "github/search_issues(q: string)",
      ],
      afterUnload: ["mcp:github"],
    });
  });
});
