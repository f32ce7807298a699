import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "mcp.call": ["mcp.call(command: string, tool: string, args?: string[], arguments?: object)", "exec"],
  "mcp.list_tools": ["mcp.list_tools(command: string, args?: string[])", "exec"],
  "mcp.list_resources": ["mcp.list_resources(server: string)", "read"],
  "mcp.read_resource": ["mcp.read_resource(server: string, uri: string)", "read"],
  "mcp.list_prompts": ["mcp.list_prompts(server: string)", "read"],
  "mcp.get_prompt": ["mcp.get_prompt(server: string, name: string, arguments?: object)", "read"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["mcp.call", { command: "github", tool: "search_issues", arguments: { q: "bug", nested: { deep: [1] } } }],
  ["mcp.call", { command: "node", args: ["server.js", "--stdio"], tool: "echo" }],
  ["mcp.list_tools", { command: "npx -y @modelcontextprotocol/server-everything" }],
  ["mcp.read_resource", { server: "everything", uri: "demo://resource/static/document/architecture.md" }],
  ["mcp.get_prompt", { server: "everything", name: "args-prompt", arguments: { city: "Lyon" } }],
];

const INVALID: [string, unknown, string][] = [
  ["mcp.call", { server: "github", tool: "x" }, "server"],
  ["mcp.call", { command: "github" }, "tool"],
  ["mcp.call", { command: "node", tool: "x", args: "server.js" }, "args"],
  ["mcp.call", { command: "node", tool: "x", arguments: "{}" }, "arguments"],
  ["mcp.list_tools", { command: "" }, "command"],
  ["mcp.read_resource", { server: "everything" }, "uri"],
  ["mcp.read_resource", { server: "npx -y evil", uri: "x" }, "server"],
  ["mcp.get_prompt", { server: "everything", name: "p", arguments: { n: 1 } }, "arguments.n"],
];

describe("mcp manifest", () => {
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
    expect([...entry.capability.handlers.keys()]).toEqual(manifest.tools.map((t) => t.name));
    expect([...entry.capability.policies.keys()]).toEqual(manifest.tools.map((t) => t.name));
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "mcp.call">>().toEqualTypeOf<{
      command: string;
      tool: string;
      args?: string[];
      arguments?: Record<string, unknown>;
    }>();
  });
});

describe("the ./manifest subpath", () => {
  // Hosts register the manifest from here and import the handlers on the first call.
  it("offers the manifest alone, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });
});
