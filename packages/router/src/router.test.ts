import { type CapabilityManifest, CapgateError, type JsonSchema, validate } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { Router } from "./router.js";

const closed = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: "object",
  additionalProperties: false,
  properties,
  required,
});

const fs = {
  name: "fs",
  version: "0.1.0",
  description: "Files.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "fs.read",
      description: "Read a file.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string" }, offset: { type: "integer" }, limit: { type: "integer" } },
        required: ["path"],
      },
    },
    {
      name: "fs.patch",
      description: "Patch a file.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } },
        required: ["path", "old", "new"],
      },
    },
    {
      // The shapes capability manifests use: enum, arrays of strings, a string map.
      name: "fs.fancy",
      description: "Exercise composite schemas.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          mode: { type: "string", enum: ["a", "b"] },
          paths: { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
          headers: { type: "object", additionalProperties: { type: "string" } },
        },
      },
    },
  ],
} as const; // loads without a cast: Router.load takes readonly manifests

function manifest(name: string, tools: string[]): CapabilityManifest {
  return {
    name,
    version: "1.0.0",
    description: `${name} tools`,
    profileFit: [],
    tools: tools.map((t) => ({ name: t, description: `${t} tool`, inputSchema: closed({}) })),
  };
}

const github = manifest("mcp:github", ["github/search_issues", "github/create_issue"]);

function expectError(fn: () => unknown, code: string, property?: string): CapgateError {
  try {
    fn();
  } catch (error) {
    expect(CapgateError.isInstance(error)).toBe(true);
    const e = error as CapgateError;
    expect(e.code).toBe(code);
    if (property !== undefined) expect(e.property).toBe(property);
    return e;
  }
  throw new Error("expected an error");
}

describe("Router", () => {
  it("starts empty", () => {
    const r = new Router();
    expect(r.loaded()).toEqual([]);
    expect(r.loadedSignatures()).toEqual([]);
    expect(r.isToolLoaded("fs.read")).toBe(false);
    expect(r.schemaForLoadedTool("fs.read")).toBeUndefined();
  });

  it("lists loaded names sorted whatever the load order", () => {
    const r = new Router();
    for (const n of ["web", "fs", "browser_panel", "mcp:github", "a_b", "a"]) r.load(manifest(n, [`${n}.x`]));
    expect(r.loaded()).toEqual(["a", "a_b", "browser_panel", "fs", "mcp:github", "web"]);
    expect(r.loadedManifests().map((m) => m.name)).toEqual(r.loaded());
  });

  it("answers isToolLoaded and schemaForLoadedTool for loaded tools only", () => {
    const r = new Router();
    r.load(fs);
    expect(r.isToolLoaded("fs.read")).toBe(true);
    expect(r.isToolLoaded("fs.write")).toBe(false);
    expect(r.isToolLoaded("fs")).toBe(false);
    expect(r.schemaForLoadedTool("fs.read")).toEqual(fs.tools[0].inputSchema);
    expect(r.schemaForLoadedTool("shell.run")).toBeUndefined();
    expect(r.toolManifest("fs.patch")?.risk).toBe("write");
    expect(r.ownerOf("fs.patch")).toBe("fs");
    expect(r.ownerOf("fs.nope")).toBeUndefined();
  });

  it("renders one signature per loaded tool, sorted by tool name across capabilities", () => {
    const r = new Router();
    r.load(manifest("web", ["web.fetch"]));
    r.load(fs);
    r.load(github);
    expect(r.loadedSignatures()).toEqual([
      "fs.fancy(mode?: enum, paths?: string[], headers?: object)",
      "fs.patch(path: string, old: string, new: string)",
      "fs.read(path: string, offset?: integer, limit?: integer)",
      "github/create_issue()",
      "github/search_issues()",
      "web.fetch()",
    ]);
  });

  it("routes mcp:<server> capabilities by their <server>/<tool> names", () => {
    const r = new Router();
    r.load(github);
    expect(r.loaded()).toEqual(["mcp:github"]);
    expect(r.isToolLoaded("github/search_issues")).toBe(true);
    expect(r.ownerOf("github/create_issue")).toBe("mcp:github");
    expect(r.isToolLoaded("search_issues")).toBe(false);
    expect(r.unload("mcp:github")).toBe(true);
    expect(r.isToolLoaded("github/search_issues")).toBe(false);
  });

  it("replaces a loaded manifest of the same name, dropping tools the new version lacks", () => {
    const r = new Router();
    r.load(manifest("fs", ["fs.read", "fs.delete"]));
    r.load(manifest("fs", ["fs.read", "fs.write"]));
    expect(r.loaded()).toEqual(["fs"]);
    expect(r.isToolLoaded("fs.delete")).toBe(false);
    expect(r.isToolLoaded("fs.write")).toBe(true);
    expect(r.loadedSignatures()).toEqual(["fs.read()", "fs.write()"]);
  });

  it("unloads one capability and reports whether it was loaded", () => {
    const r = new Router();
    r.load(fs);
    r.load(manifest("shell", ["shell.run"]));
    expect(r.unload("shell")).toBe(true);
    expect(r.unload("shell")).toBe(false);
    expect(r.loaded()).toEqual(["fs"]);
    expect(r.isToolLoaded("shell.run")).toBe(false);
    expect(r.isToolLoaded("fs.read")).toBe(true);
  });

  it("clearLoaded drops every tool", () => {
    const r = new Router();
    r.load(fs);
    r.load(manifest("shell", ["shell.run"]));
    r.clearLoaded();
    expect(r.loaded()).toEqual([]);
    expect(r.isToolLoaded("shell.run")).toBe(false);
    expect(r.loadedSignatures()).toEqual([]);
  });

  it("refuses a tool owned by another loaded capability and leaves the set unchanged", () => {
    const r = new Router();
    r.load(manifest("fs", ["fs.read"]));
    const err = expectError(() => r.load(manifest("evil", ["evil.x", "fs.read"])), "tool_conflict", "tools");
    expect(err.message).toContain("'fs.read'");
    expect(err.message).toContain("'fs'");
    expect(r.loaded()).toEqual(["fs"]);
    expect(r.isToolLoaded("evil.x")).toBe(false);
    expect(r.ownerOf("fs.read")).toBe("fs");
  });

  it("rejects malformed manifests naming the property, without changing the set", () => {
    const r = new Router();
    r.load(fs);
    const bad = (m: unknown) => () => r.load(m as CapabilityManifest);
    expectError(bad(null), "invalid_manifest", "");
    expectError(bad({ ...fs, name: "" }), "invalid_manifest", "name");
    expectError(bad({ ...fs, tools: "fs.read" }), "invalid_manifest", "tools");
    expectError(bad({ ...fs, tools: [fs.tools[0], 3] }), "invalid_manifest", "tools[1]");
    expectError(bad({ ...fs, tools: [{ ...fs.tools[0], name: 7 }] }), "invalid_manifest", "tools[0].name");
    expectError(bad({ ...fs, tools: [fs.tools[0], fs.tools[0]] }), "invalid_manifest", "tools[1].name");
    expectError(bad({ ...fs, tools: [{ ...fs.tools[0], inputSchema: "{}" }] }), "invalid_manifest");
    expectError(bad({ ...fs, name: "fs2", extra: () => 1 }), "invalid_manifest");
    expect(r.loaded()).toEqual(["fs"]);
    expect(r.loadedSignatures()).toHaveLength(3);
  });

  it("keeps its own frozen copy: callers cannot change the loaded set behind its back", () => {
    const r = new Router();
    const m = manifest("fs", ["fs.read"]);
    r.load(m);
    m.tools.push({ name: "fs.delete", description: "x", inputSchema: closed({}) });
    m.tools[0]!.name = "fs.renamed";
    expect(r.isToolLoaded("fs.delete")).toBe(false);
    expect(r.isToolLoaded("fs.read")).toBe(true);
    const schema = r.schemaForLoadedTool("fs.read")!;
    expect(Object.isFrozen(schema)).toBe(true);
    expect(() => {
      (schema as { additionalProperties: boolean }).additionalProperties = true;
    }).toThrow(TypeError);
    expect(() => r.loadedManifests()[0]!.tools.push(m.tools[0]!)).toThrow(TypeError);
  });

  it("hands out schemas the validator can use as they are", () => {
    const r = new Router();
    r.load(fs);
    const schema = r.schemaForLoadedTool("fs.read")!;
    expect(validate(schema, { path: "a.ts", offset: 3 })).toEqual({ ok: true });
    const bad = validate(schema, { pth: "a.ts" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.map((e) => e.property)).toContain("pth");
  });

  it("keeps routers independent", () => {
    const a = new Router();
    const b = new Router();
    a.load(fs);
    expect(b.isToolLoaded("fs.read")).toBe(false);
    b.load(fs);
    a.clearLoaded();
    expect(b.isToolLoaded("fs.read")).toBe(true);
  });
});
