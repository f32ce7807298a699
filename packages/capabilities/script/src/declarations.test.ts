import type { ToolManifest } from "@capgate/schema";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { notes } from "../test-support/gate.js";
import { toolDeclarations } from "./declarations.js";

const mcpTool: ToolManifest = {
  name: "github/search_issues",
  description: "Search issues by query.",
  risk: "read",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      query: { type: "string", description: "GitHub search syntax." },
      state: { enum: ["open", "closed"] },
      labels: { type: "array", items: { type: "string" } },
      "per-page": { type: "integer", minimum: 1, maximum: 100 },
    },
    required: ["query"],
  },
  outputSchema: {
    type: "object",
    properties: {
      total: { type: "integer" },
      items: {
        type: "array",
        items: {
          type: "object",
          properties: { number: { type: "integer" }, title: { type: "string" } },
          required: ["number", "title"],
        },
      },
    },
    required: ["total", "items"],
  },
};

/** Type-check a script body against the declarations, as the model would write it. */
function typeErrors(declarations: string, body: string): string[] {
  const files: Record<string, string> = {
    "/api.d.ts": declarations,
    "/script.ts": `export {};\nasync function script() {\n${body}\n}\n`,
  };
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (name) => files[name] ?? read(name);
  host.fileExists = (name) => name in files || ts.sys.fileExists(name);
  const getSource = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    name in files ? ts.createSourceFile(name, files[name] as string, version) : getSource(name, version);
  const program = ts.createProgram(["/api.d.ts", "/script.ts"], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

describe("toolDeclarations", () => {
  const declarations = toolDeclarations([...(notes.manifest.tools as ToolManifest[]), mcpTool]);

  it("renders each tool as a method with its signature in the comment, and MCP tools as tools.call overloads", () => {
    expect(declarations).toContain("/** notes.read(path: string) — Read a note's text. */");
    expect(declarations).toContain(
      "read(args: {\n      /** Note path. */\n      path: string;\n    }): Promise<ToolReply>;",
    );
    expect(declarations).toContain('call(name: "github/search_issues", args: {');
    expect(declarations).toContain('state?: "open" | "closed";');
    expect(declarations).toContain('"per-page"?: number;');
    expect(declarations).toMatch(/Promise<ToolReply<\{\n\s+total: number;\n\s+items: \{/);
  });

  it("compiles, and a script that calls the tools as declared type-checks", () => {
    expect(
      typeErrors(
        declarations,
        `const note = await tools.notes.read({ path: "a.txt" });
         console.log(note.summary.length);
         const found = await tools.call("github/search_issues", { query: "bug", state: "open" });
         const titles: string[] = (found.structuredContent?.items ?? []).map((i) => i.title);
         await tools.call("anything.else");
         return titles;`,
      ),
    ).toEqual([]);
  });

  it("catches what the gate would refuse: a misspelt argument, a wrong type, a missing required one", () => {
    const errors = typeErrors(
      declarations,
      `await tools.notes.read({ pth: "a.txt" });
       await tools.notes.write({ path: "a.txt", text: 3 });
       await tools.call("github/search_issues", { state: "open" });`,
    );
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/'pth' does not exist/);
    expect(errors[1]).toMatch(/number' is not assignable to type 'string'/);
    expect(errors[2]).toMatch(/query/);
  });
});
