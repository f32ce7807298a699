import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "browser_panel.open": ["browser_panel.open(url: string)", "network"],
  "browser_panel.snapshot": ["browser_panel.snapshot()", "network"],
  "browser_panel.click": ["browser_panel.click(target: string)", "network"],
  "browser_panel.type": ["browser_panel.type(target: string, text: string, submit?: boolean)", "network"],
  "browser_panel.screenshot": ["browser_panel.screenshot(path?: string)", "network"],
  "browser_panel.back": ["browser_panel.back()", "network"],
  "browser_panel.close": ["browser_panel.close()", "network"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["browser_panel.open", { url: "https://example.com/login" }],
  ["browser_panel.snapshot", {}],
  ["browser_panel.click", { target: "e12" }],
  ["browser_panel.click", { target: "button[type=submit]" }],
  ["browser_panel.type", { target: "e3", text: "capgate", submit: true }],
  ["browser_panel.type", { target: "#q", text: "" }],
  ["browser_panel.screenshot", {}],
  ["browser_panel.screenshot", { path: "shots/home.png" }],
];

const INVALID: [string, unknown, string][] = [
  ["browser_panel.open", { url: "javascript:alert(1)" }, "url"],
  ["browser_panel.open", { url: "file:///etc/passwd" }, "url"],
  ["browser_panel.open", { href: "https://example.com" }, "href"],
  ["browser_panel.click", { selector: "#a" }, "selector"],
  ["browser_panel.click", { target: "" }, "target"],
  ["browser_panel.type", { target: "e3" }, "text"],
  ["browser_panel.screenshot", { path: "src/index.ts" }, "path"],
  ["browser_panel.back", { steps: 2 }, "steps"],
];

describe("browser_panel manifest", () => {
  it("keeps its contract: SPEC names, arguments and risks; short descriptions; closed, described, bounded schemas", () => {
    expect(
      manifestContractProblems(manifest, {
        expected: EXPECTED,
        mayBeEmpty: ["browser_panel.type.text"],
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

  it("exports the manifest, the capability built from it, and the session's resource key and default browser", () => {
    expect(Object.keys(entry).sort()).toEqual([
      "BROWSER_RESOURCE_KEY",
      "DEFAULT_BROWSER_EXECUTABLE",
      "capability",
      "manifest",
    ]);
    expect(entry.manifest).toBe(manifest);
    expect([...entry.capability.handlers.keys()]).toEqual(manifest.tools.map((t) => t.name));
    expect([...entry.capability.policies.keys()]).toEqual(["browser_panel.open", "browser_panel.screenshot"]);
    expect(entry.BROWSER_RESOURCE_KEY).toBe("browser_panel");
    expect(entry.DEFAULT_BROWSER_EXECUTABLE).toBe("/usr/bin/chromium");
  });

  it("offers the manifest alone at ./manifest, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "browser_panel.type">>().toEqualTypeOf<{
      target: string;
      text: string;
      submit?: boolean;
    }>();
  });
});
