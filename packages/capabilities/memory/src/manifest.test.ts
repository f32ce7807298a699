import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "memory.remember": ["memory.remember(text: string, tags?: string[])", "write"],
  "memory.forget": ["memory.forget(id: string)", "write"],
  "memory.list": ["memory.list(limit?: integer)", "read"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["memory.remember", { text: "Staging deploys need VPN", tags: ["deploy", "staging"] }],
  ["memory.forget", { id: "m_1" }],
  ["memory.list", {}],
  ["memory.list", { limit: 200 }],
];

const INVALID: [string, unknown, string][] = [
  ["memory.remember", { text: "" }, "text"],
  ["memory.remember", { note: "x" }, "note"],
  ["memory.remember", { text: "x", tags: "deploy" }, "tags"],
  ["memory.remember", { text: "x", tags: ["a", "a"] }, "tags"],
  ["memory.list", { limit: 0 }, "limit"],
];

describe("memory manifest", () => {
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
    expectTypeOf<ArgsOf<typeof manifest, "memory.remember">>().toEqualTypeOf<{
      text: string;
      tags?: string[];
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
