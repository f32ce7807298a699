import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "cua.screenshot": ["cua.screenshot(path?: string)", "read"],
  "cua.click": ["cua.click(x: integer, y: integer, button?: enum)", "exec"],
  "cua.type": ["cua.type(text: string)", "exec"],
  "cua.key": ["cua.key(keys: string)", "exec"],
  "cua.scroll": ["cua.scroll(dx?: integer, dy?: integer)", "exec"],
  "cua.move": ["cua.move(x: integer, y: integer)", "exec"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["cua.screenshot", {}],
  ["cua.screenshot", { path: "shots/desktop.png" }],
  ["cua.click", { x: 0, y: 0 }],
  ["cua.click", { x: 640, y: 360, button: "right" }],
  ["cua.type", { text: "hello world" }],
  ["cua.key", { keys: "Return" }],
  ["cua.key", { keys: "ctrl+shift+t" }],
  ["cua.key", { keys: "Down Down Return" }],
  ["cua.scroll", { dy: -3 }],
  ["cua.move", { x: 10, y: 20 }],
];

const INVALID: [string, unknown, string][] = [
  ["cua.screenshot", { path: "notes.txt" }, "path"],
  ["cua.click", { x: -1, y: 5 }, "x"],
  ["cua.click", { x: 1.5, y: 5 }, "x"],
  ["cua.click", { x: 1, y: 5, button: "double" }, "button"],
  ["cua.click", { x: 1 }, "y"],
  ["cua.type", { text: "" }, "text"],
  ["cua.key", { keys: "--clearmodifiers" }, "keys"],
  ["cua.key", { keys: "ctrl+c; rm -rf /" }, "keys"],
  ["cua.key", { key: "Return" }, "key"],
  ["cua.scroll", { dy: 1000 }, "dy"],
];

describe("cua manifest", () => {
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
    expect(entry.capability.manifest.tools.map((t) => t.name)).toEqual(manifest.tools.map((t) => t.name));
    expect([...entry.capability.handlers.keys()]).toEqual(manifest.tools.map((t) => t.name));
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "cua.click">>().toEqualTypeOf<{
      x: number;
      y: number;
      button?: "left" | "middle" | "right";
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
