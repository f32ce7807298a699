import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "workers.spawn": ["workers.spawn(goal: string, profile?: string)", "exec"],
  "workers.wait": ["workers.wait(id: string, timeout_ms?: integer)", "read"],
  "workers.list": ["workers.list()", "read"],
  "workers.cancel": ["workers.cancel(id: string)", "exec"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["workers.spawn", { goal: "Fix the failing test in src/a.test.ts; verify with npm test" }],
  ["workers.spawn", { goal: "Summarise the RFC", profile: "Researcher" }],
  ["workers.wait", { id: "w1", timeout_ms: 30000 }],
  ["workers.list", {}],
  ["workers.cancel", { id: "w1" }],
];

const INVALID: [string, unknown, string][] = [
  ["workers.spawn", { goal: "" }, "goal"],
  ["workers.spawn", { task: "x" }, "task"],
  ["workers.wait", { id: "w1", timeout_ms: 0 }, "timeout_ms"],
  ["workers.cancel", {}, "id"],
];

describe("workers manifest", () => {
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

  it("exports the manifest and the capability with its handlers", () => {
    expect(Object.keys(entry).sort()).toEqual(["capability", "manifest"]);
    expect(entry.manifest).toBe(manifest);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "workers.spawn">>().toEqualTypeOf<{
      goal: string;
      profile?: string;
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
