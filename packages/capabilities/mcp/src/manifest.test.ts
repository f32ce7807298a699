import { type JsonSchema, signatureFromSchema, TOOL_RISKS, type ToolRisk, validate } from "@capgate/schema";
import type { ArgsOf, ManifestLike } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

const PROFILES = ["Orchestrator", "Coder", "Researcher", "ComputerOperator", "Verifier"];

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "mcp.call": ["mcp.call(command: string, tool: string, args?: string[], arguments?: object)", "exec"],
  "mcp.list_tools": ["mcp.list_tools(command: string, args?: string[])", "exec"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["mcp.call", { command: "github", tool: "search_issues", arguments: { q: "bug", nested: { deep: [1] } } }],
  ["mcp.call", { command: "node", args: ["server.js", "--stdio"], tool: "echo" }],
  ["mcp.list_tools", { command: "npx -y @modelcontextprotocol/server-everything" }],
];

const INVALID: [string, unknown, string][] = [
  ["mcp.call", { server: "github", tool: "x" }, "server"],
  ["mcp.call", { command: "github" }, "tool"],
  ["mcp.call", { command: "node", tool: "x", args: "server.js" }, "args"],
  ["mcp.call", { command: "node", tool: "x", arguments: "{}" }, "arguments"],
  ["mcp.list_tools", { command: "" }, "command"],
];

describe("mcp manifest", () => {
  checkManifestShape(manifest, EXPECTED, []);
  checkCalls(manifest, VALID, INVALID);

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

// Shape rules every capgate manifest follows (same checks in every capability package:
// a capability may depend only on @capgate/tools and @capgate/schema, so they are not shared).
function checkManifestShape(
  m: ManifestLike,
  expected: Record<string, [string, ToolRisk]>,
  mayBeEmpty: string[] = [],
): void {
  it("has the contract's tools, in order, with exact argument names and risks", () => {
    expect(m.tools.map((t) => t.name)).toEqual(Object.keys(expected));
    for (const t of m.tools) {
      const [signature, risk] = expected[t.name]!;
      expect(signatureFromSchema(t.name, t.inputSchema as JsonSchema), t.name).toBe(signature);
      expect(t.risk, t.name).toBe(risk);
      expect(TOOL_RISKS).toContain(t.risk);
    }
  });

  it("is a format-1 manifest at version 0.1.0 with a short description and profile fit", () => {
    expect(m.version).toBe("0.1.0");
    expect(m.manifestFormat).toBe(1);
    expect(m.name).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(m.profileFit.length).toBeGreaterThan(0);
    for (const p of m.profileFit) expect(PROFILES).toContain(p);
    expect(m.description.length).toBeGreaterThan(40);
    expect(m.description.length).toBeLessThanOrEqual(300);
  });

  it("describes every tool in one to three sentences", () => {
    for (const t of m.tools) {
      expect(t.name.startsWith(`${m.name}.`), t.name).toBe(true);
      expect(t.description.length, t.name).toBeGreaterThan(30);
      expect(t.description.length, t.name).toBeLessThanOrEqual(360);
      expect(t.description.split(/[.!?](?:\s|$)/).filter((s) => s.trim()).length, t.name).toBeLessThanOrEqual(
        3,
      );
    }
  });

  it("closes every schema, describes and bounds every property, and compiles", () => {
    for (const t of m.tools) {
      const schema = t.inputSchema as JsonSchema;
      expect(schema.type, t.name).toBe("object");
      expect(schema.additionalProperties, t.name).toBe(false);
      const required = new Set(schema.required ?? []);
      for (const [key, prop] of Object.entries(schema.properties ?? {})) {
        const at = `${t.name}.${key}`;
        expect(typeof prop.description === "string" && prop.description.length > 5, at).toBe(true);
        if (prop.type === "integer") {
          expect(typeof prop.minimum, at).toBe("number");
          expect(typeof prop.maximum, at).toBe("number");
        }
        if (prop.type === "string" && !prop.enum) expect(typeof prop.maxLength, at).toBe("number");
        if (prop.type === "string" && !prop.enum && required.has(key) && !mayBeEmpty.includes(at))
          expect(prop.minLength, at).toBeGreaterThanOrEqual(1);
        if (prop.type === "array") expect(typeof prop.maxItems, at).toBe("number");
      }
      // An empty object either passes or fails on `required`: never "the schema itself is invalid".
      const result = validate(schema, {});
      if (!result.ok) for (const e of result.errors) expect(e.message, t.name).toMatch(/^missing required/);
      expect(validate(schema, { zz_unexpected: 1 }).ok, t.name).toBe(false);
    }
  });
}

function toolSchema(m: ManifestLike, name: string): JsonSchema {
  const tool = m.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.inputSchema as JsonSchema;
}

function checkCalls(m: ManifestLike, valid: [string, unknown][], invalid: [string, unknown, string][]): void {
  it.each(valid)("accepts %s %j", (tool, args) => {
    expect(validate(toolSchema(m, tool), args)).toEqual({ ok: true });
  });
  it.each(invalid)("rejects %s %j naming `%s`", (tool, args, property) => {
    const result = validate(toolSchema(m, tool), args);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.property)).toContain(property);
  });
}
