import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "fs.read": ["fs.read(path: string, offset?: integer, limit?: integer)", "read"],
  "fs.write": ["fs.write(path: string, content: string)", "write"],
  "fs.patch": ["fs.patch(path: string, old: string, new: string)", "write"],
  "fs.list": ["fs.list(path?: string, depth?: integer)", "read"],
  "fs.search": ["fs.search(pattern: string, path?: string, glob?: string, max_results?: integer)", "read"],
  "fs.glob": ["fs.glob(pattern: string, path?: string)", "read"],
  "fs.stat": ["fs.stat(path: string)", "read"],
  "fs.move": ["fs.move(from: string, to: string)", "write"],
  "fs.delete": ["fs.delete(path: string)", "write"],
  "fs.mkdir": ["fs.mkdir(path: string)", "write"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["fs.read", { path: "src/index.ts" }],
  ["fs.read", { path: "big.log", offset: 2001, limit: 2000 }],
  ["fs.write", { path: "empty.txt", content: "" }],
  ["fs.patch", { path: "a.ts", old: "let x = 1;", new: "" }],
  ["fs.list", {}],
  ["fs.search", { pattern: "TODO\\(", glob: "**/*.ts", max_results: 5 }],
  ["fs.glob", { pattern: "**/*.test.ts", path: "packages" }],
  ["fs.move", { from: "a.txt", to: "b/a.txt" }],
];

const INVALID: [string, unknown, string][] = [
  ["fs.read", { file: "a.ts" }, "file"],
  ["fs.read", { path: "" }, "path"],
  ["fs.read", { path: "a", offset: 0 }, "offset"],
  ["fs.read", { path: "a", limit: 1.5 }, "limit"],
  ["fs.patch", { path: "a", old: "", new: "x" }, "old"],
  ["fs.patch", { path: "a", old_text: "x", new: "y" }, "old_text"],
  ["fs.list", { depth: 11 }, "depth"],
  ["fs.search", { query: "x" }, "query"],
  ["fs.move", { from: "a", to: "b", overwrite: true }, "overwrite"],
  ["fs.write", { path: "a" }, "content"],
];

describe("fs manifest", () => {
  it("keeps its contract: SPEC names, arguments and risks; short descriptions; closed, described, bounded schemas", () => {
    expect(
      manifestContractProblems(manifest, {
        expected: EXPECTED,
        mayBeEmpty: ["fs.write.content", "fs.patch.new"],
        version: "0.1.0",
      }),
    ).toEqual([]);
  });
  it.each(VALID)("accepts %s %j", (tool, args) => {
    expect(callContractProblem(manifest, tool, args)).toBeUndefined();
  });
  it.each(INVALID)("rejects %s %j naming `%s`", (tool, args, property) => {
    expect(callContractProblem(manifest, tool, args, property)).toBeUndefined();
  });

  it("exports the manifest and the capability built from it", () => {
    expect(Object.keys(entry).sort()).toEqual(["capability", "manifest"]);
    expect(entry.manifest).toBe(manifest);
    expect(entry.capability.manifest.tools.map((t) => t.name)).toEqual(manifest.tools.map((t) => t.name));
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "fs.read">>().toEqualTypeOf<{
      path: string;
      offset?: number;
      limit?: number;
    }>();
    expectTypeOf<ArgsOf<typeof manifest, "fs.patch">>().toEqualTypeOf<{
      path: string;
      old: string;
      new: string;
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
