import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

const EXPECTED: Record<string, [string, ToolRisk]> = {
  "script.run": ["script.run(source: string, timeout_ms?: integer)", "read"],
  "script.types": ["script.types(tools?: string[])", "read"],
};

const VALID: [string, unknown][] = [
  ["script.run", { source: "return 1" }],
  ["script.run", { source: "return 1", timeout_ms: 5000 }],
  ["script.types", {}],
  ["script.types", { tools: ["fs", "git.status", "mcp:github"] }],
];

const INVALID: [string, unknown, string][] = [
  ["script.run", { source: "" }, "source"],
  ["script.run", { code: "return 1" }, "code"],
  ["script.run", { source: "return 1", timeout_ms: 0 }, "timeout_ms"],
  ["script.run", { source: "return 1", timeout_ms: 1.5 }, "timeout_ms"],
  ["script.types", { tools: "fs" }, "tools"],
];

describe("script manifest", () => {
  it("keeps its contract: names, arguments and risks; short descriptions; closed, described, bounded schemas", () => {
    expect(
      manifestContractProblems(manifest, { expected: EXPECTED, mayBeEmpty: [], version: "0.1.0" }),
    ).toEqual([]);
  });
  it.each(VALID)("accepts %s %j", (tool, args) => {
    expect(callContractProblem(manifest, tool, args)).toBeUndefined();
  });
  it.each(INVALID)("rejects %s %j naming `%s`", (tool, args, property) => {
    expect(callContractProblem(manifest, tool, args, property)).toBeUndefined();
  });

  it("uses the words people search with", () => {
    const text = [manifest.description, ...manifest.tools.map((t) => t.description)].join(" ");
    for (const words of ["chain several tool calls", "batch", "loop over files"])
      expect(text).toContain(words);
  });

  it("exports exactly these runtime names", () => {
    expect(Object.keys(entry).sort()).toEqual([
      "DEFAULT_SCRIPT_LIMITS",
      "REPLY_DECLARATIONS",
      "capability",
      "createScriptCapability",
      "manifest",
      "toolDeclarations",
      "warmEngine",
    ]);
    expect(entry.manifest).toBe(manifest);
    expect(entry.capability.manifest.name).toBe("script");
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "script.run">>().toEqualTypeOf<{
      source: string;
      timeout_ms?: number;
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
