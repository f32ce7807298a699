import { describe, expect, it } from "vitest";
import { closed, manifest } from "./test-fixtures.js";
import { validateManifest } from "./validate-manifest.js";

const good = () => manifest("fs", "Workspace files.", [["read", "Read a text file."]], ["Coder"]);

/** Validate a copy of the good manifest after `edit`, returning the problems' paths. */
function problemsAfter(
  edit: (m: Record<string, unknown> & { tools: Array<Record<string, unknown>> }) => void,
) {
  const m = structuredClone(good()) as unknown as Record<string, unknown> & {
    tools: Array<Record<string, unknown>>;
  };
  edit(m);
  return validateManifest(m).problems;
}

describe("validateManifest", () => {
  it("accepts a good manifest", () => {
    expect(validateManifest(good())).toEqual({ ok: true, problems: [] });
  });

  it("rejects a non-object", () => {
    for (const bad of [null, 42, "fs", []]) {
      const r = validateManifest(bad);
      expect(r.ok).toBe(false);
      expect(r.problems[0]?.path).toBe("");
    }
  });

  it("reports every problem at once, each with its path", () => {
    const r = validateManifest({
      name: "Files",
      version: "one",
      description: "  ",
      profileFit: "Coder",
      tools: [
        { name: "fs.read", description: "", inputSchema: { type: "object", properties: {} } },
        { name: "files.Read", description: "x", inputSchema: { type: "array" } },
      ],
    });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.path)).toEqual([
      "name",
      "version",
      "description",
      "tools[0].description",
      "tools[0].inputSchema.additionalProperties",
      "tools[1].name",
      "tools[1].inputSchema.type",
      "tools[1].inputSchema.additionalProperties",
      "profileFit",
    ]);
  });

  it("reports missing and wrong-typed fields", () => {
    const missing = validateManifest({});
    expect(missing.problems.map((p) => p.path)).toEqual([
      "name",
      "version",
      "description",
      "tools",
      "profileFit",
    ]);
    expect(missing.problems[0]?.message).toMatch(/missing required field `name`/);
    const typed = problemsAfter((m) => {
      m.name = 7;
      m.version = 1;
      m.description = ["x"];
      m.tools = {} as never;
      m.profileFit = [1, "Coder"];
    });
    expect(typed).toEqual([
      { path: "name", message: expect.stringMatching(/must be a string.*got number/) },
      { path: "version", message: expect.stringMatching(/got number/) },
      { path: "description", message: expect.stringMatching(/got array/) },
      { path: "tools", message: expect.stringMatching(/must be an array.*got object/) },
      { path: "profileFit[0]", message: expect.stringMatching(/got number/) },
    ]);
  });

  it("checks the capability name rule and reserves mcp:", () => {
    for (const name of ["Fs", "1fs", "f-s", "fs.x", ""]) {
      expect(problemsAfter((m) => (m.name = name)).some((p) => p.path === "name")).toBe(true);
    }
    const mcp = problemsAfter((m) => (m.name = "mcp:github"));
    expect(mcp[0]?.message).toMatch(/reserved/);
    expect(problemsAfter((m) => (m.name = "f_s2"))).toContainEqual(
      expect.objectContaining({ path: "tools[0].name" }),
    );
  });

  it("checks tool names: <capability>.<verb>, the prefix, the length", () => {
    const bad = (name: string) => problemsAfter((m) => (m.tools[0]!.name = name)).map((p) => p.message);
    expect(bad("read")[0]).toMatch(/<capability>\.<verb>/);
    expect(bad("fs.Read")[0]).toMatch(/<capability>\.<verb>/);
    expect(bad("fs.read.more")[0]).toMatch(/<capability>\.<verb>/);
    expect(bad("git.read")[0]).toMatch(/must start with the capability name: "fs.read"/);
    expect(bad(`fs.${"a".repeat(62)}`)[0]).toMatch(/at most 64/);
    expect(bad(`fs.${"a".repeat(61)}`)).toEqual([]);
  });

  it("reports duplicate tool names", () => {
    const p = problemsAfter((m) => m.tools.push(structuredClone(m.tools[0]!)));
    expect(p).toEqual([{ path: "tools[1].name", message: 'duplicate tool name "fs.read" (also tools[0])' }]);
  });

  it("reports empty and whitespace descriptions", () => {
    expect(problemsAfter((m) => (m.tools[0]!.description = " \n\t")).map((p) => p.path)).toEqual([
      "tools[0].description",
    ]);
    expect(problemsAfter((m) => delete m.tools[0]!.description).map((p) => p.path)).toEqual([
      "tools[0].description",
    ]);
  });

  it("requires a closed object schema that compiles", () => {
    const paths = (schema: unknown) =>
      problemsAfter((m) => (m.tools[0]!.inputSchema = schema)).map((p) => p.path);
    expect(paths(undefined)).toEqual(["tools[0].inputSchema"]);
    expect(paths("object")).toEqual(["tools[0].inputSchema"]);
    expect(paths({ type: "string" })).toEqual([
      "tools[0].inputSchema.type",
      "tools[0].inputSchema.additionalProperties",
    ]);
    expect(paths({ type: "object" })).toEqual(["tools[0].inputSchema.additionalProperties"]);
    expect(paths({ type: "object", additionalProperties: true })).toEqual([
      "tools[0].inputSchema.additionalProperties",
    ]);
    expect(paths({ type: "object", additionalProperties: {} })).toEqual([
      "tools[0].inputSchema.additionalProperties",
    ]);
    expect(paths({ ...closed(["path"]), properties: { path: { type: "strng" } } })).toEqual([
      "tools[0].inputSchema",
    ]);
    expect(paths({ ...closed(["path"]), required: ["path", "pth"] })).toEqual([
      "tools[0].inputSchema.required[1]",
    ]);
    expect(paths({ ...closed(["path"]), properties: [] })).toContain("tools[0].inputSchema.properties");
  });

  it("explains a schema that does not compile", () => {
    const p = problemsAfter(
      (m) => (m.tools[0]!.inputSchema = { ...closed(["path"]), properties: { path: { type: 5 } } }),
    );
    expect(p[0]?.message).toMatch(/does not compile/);
  });

  it("checks risk, version and manifestFormat", () => {
    expect(problemsAfter((m) => (m.tools[0]!.risk = "dangerous"))[0]).toEqual({
      path: "tools[0].risk",
      message: 'must be one of read, write, exec, network, got "dangerous"',
    });
    expect(problemsAfter((m) => (m.tools[0]!.risk = "network"))).toEqual([]);
    for (const v of ["1.0", "v1.0.0", "01.0.0", "1.0.0-", ""]) {
      expect(problemsAfter((m) => (m.version = v)).map((p) => p.path)).toEqual(["version"]);
    }
    for (const v of ["0.0.1", "1.2.3-beta.1", "1.0.0+build.5"])
      expect(problemsAfter((m) => (m.version = v))).toEqual([]);
    expect(problemsAfter((m) => (m.manifestFormat = 1))).toEqual([]);
    expect(problemsAfter((m) => (m.manifestFormat = 0))[0]?.path).toBe("manifestFormat");
    expect(problemsAfter((m) => (m.manifestFormat = 99))[0]?.message).toMatch(/newer/);
  });

  it("reports unexpected fields with a suggestion", () => {
    const p = problemsAfter((m) => {
      m.profile_fit = [];
      m.tools[0]!.input_schema = {};
    });
    expect(p).toEqual([
      { path: "profile_fit", message: expect.stringMatching(/did you mean `profileFit`/) },
      { path: "tools[0].input_schema", message: expect.stringMatching(/did you mean `inputSchema`/) },
    ]);
  });

  it("requires at least one tool, each an object", () => {
    expect(problemsAfter((m) => (m.tools = []))).toEqual([
      { path: "tools", message: "a capability must have at least one tool" },
    ]);
    expect(problemsAfter((m) => (m.tools = ["fs.read"] as never))[0]?.path).toBe("tools[0]");
  });
});
