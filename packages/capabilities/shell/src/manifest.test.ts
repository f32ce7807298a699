import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "shell.run": ["shell.run(command: string, cwd?: string, timeout_ms?: integer)", "exec"],
  "shell.start": ["shell.start(command: string, cwd?: string)", "exec"],
  "shell.output": ["shell.output(id: string, tail_lines?: integer)", "read"],
  "shell.stop": ["shell.stop(id: string)", "exec"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["shell.run", { command: "npm test" }],
  ["shell.run", { command: "make", cwd: "sub", timeout_ms: 5000 }],
  ["shell.start", { command: "npm run dev" }],
  ["shell.output", { id: "p1", tail_lines: 50 }],
  ["shell.stop", { id: "p1" }],
];

const INVALID: [string, unknown, string][] = [
  ["shell.run", { cmd: "ls" }, "cmd"],
  ["shell.run", { command: "" }, "command"],
  ["shell.run", { command: "ls", timeout_ms: 0 }, "timeout_ms"],
  ["shell.run", { command: "ls", timeout_ms: 3_600_000 }, "timeout_ms"],
  ["shell.run", { command: "ls", timeout: 10 }, "timeout"],
  ["shell.output", { id: "p1", tail_lines: -1 }, "tail_lines"],
  ["shell.stop", {}, "id"],
];

describe("shell manifest", () => {
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
    expect([...entry.capability.policies.keys()]).toEqual(["shell.run", "shell.start"]);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "shell.run">>().toEqualTypeOf<{
      command: string;
      cwd?: string;
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
