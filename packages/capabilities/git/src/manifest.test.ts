import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "git.status": ["git.status()", "read"],
  "git.diff": ["git.diff(path?: string, staged?: boolean)", "read"],
  "git.log": ["git.log(limit?: integer, path?: string)", "read"],
  "git.show": ["git.show(ref: string)", "read"],
  "git.add": ["git.add(paths: string[])", "write"],
  "git.commit": ["git.commit(message: string)", "write"],
  "git.branch": ["git.branch(name?: string)", "write"],
  "git.checkout": ["git.checkout(ref: string, create?: boolean)", "write"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["git.status", {}],
  ["git.diff", { staged: true }],
  ["git.log", { limit: 5, path: "src" }],
  ["git.show", { ref: "HEAD~1:src/index.ts" }],
  ["git.add", { paths: ["."] }],
  ["git.commit", { message: "Fix the login timeout" }],
  ["git.branch", {}],
  ["git.branch", { name: "fix/login-timeout" }],
  ["git.checkout", { ref: "feature-x", create: true }],
];

const INVALID: [string, unknown, string][] = [
  ["git.status", { verbose: true }, "verbose"],
  ["git.diff", { staged: "yes" }, "staged"],
  ["git.log", { limit: 0 }, "limit"],
  ["git.show", { ref: "--output=/tmp/x" }, "ref"],
  ["git.add", { paths: [] }, "paths"],
  ["git.add", { paths: "." }, "paths"],
  ["git.add", { path: "." }, "path"],
  ["git.commit", { message: "" }, "message"],
  ["git.branch", { name: "-D" }, "name"],
  ["git.branch", { name: "has space" }, "name"],
  ["git.checkout", { ref: "-f" }, "ref"],
];

describe("git manifest", () => {
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

  it("exports the manifest and the capability built on it", () => {
    expect(Object.keys(entry).sort()).toEqual(["capability", "manifest"]);
    expect(entry.manifest).toBe(manifest);
    expect(entry.capability.manifest.tools.map((t) => t.name)).toEqual(manifest.tools.map((t) => t.name));
    expect([...entry.capability.policies.keys()].sort()).toEqual([
      "git.add",
      "git.branch",
      "git.checkout",
      "git.diff",
      "git.log",
      "git.show",
    ]);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "git.add">>().toEqualTypeOf<{ paths: string[] }>();
    expectTypeOf<ArgsOf<typeof manifest, "git.checkout">>().toEqualTypeOf<{
      ref: string;
      create?: boolean;
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
