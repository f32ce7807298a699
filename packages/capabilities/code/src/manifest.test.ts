import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "code.run": ["code.run(language: enum, source: string, timeout_ms?: integer)", "exec"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["code.run", { language: "javascript", source: "console.log(1 + 1)" }],
  ["code.run", { language: "python", source: "print(2 ** 10)", timeout_ms: 5000 }],
];

const INVALID: [string, unknown, string][] = [
  ["code.run", { language: "ruby", source: "puts 1" }, "language"],
  ["code.run", { language: "Python", source: "print(1)" }, "language"],
  ["code.run", { language: "python", code: "print(1)" }, "code"],
  ["code.run", { language: "python", source: "" }, "source"],
  ["code.run", { language: "python", source: "x", timeout_ms: 1e7 }, "timeout_ms"],
];

describe("code manifest", () => {
  it("keeps its contract: SPEC names, arguments and risks; short descriptions; closed, described, bounded schemas", () => {
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

  it("exports the manifest and the capability built from it", () => {
    expect(Object.keys(entry).sort()).toEqual(["capability", "manifest"]);
    expect(entry.manifest).toBe(manifest);
    expect(entry.capability.manifest.tools.map((t) => t.name)).toEqual(["code.run"]);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "code.run">>().toEqualTypeOf<{
      language: "javascript" | "python";
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
