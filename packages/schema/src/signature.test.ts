import { describe, expect, it } from "vitest";
import { signatureFromSchema, withSignatures } from "./signature.js";
import { TOP_LEVEL_TOOL_NAMES, topLevelToolNames, topLevelToolSchemas } from "./top-level.js";

describe("signatureFromSchema", () => {
  it("renders required first and optional with ?", () => {
    expect(
      signatureFromSchema("fs.read", {
        type: "object",
        properties: { offset: { type: "integer" }, path: { type: "string" }, limit: { type: "integer" } },
        required: ["path"],
      }),
    ).toBe("fs.read(path: string, offset?: integer, limit?: integer)");
    expect(
      signatureFromSchema("fs.patch", {
        type: "object",
        properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } },
        required: ["path", "old", "new"],
      }),
    ).toBe("fs.patch(path: string, old: string, new: string)");
  });

  it("collapses arrays, objects, enums and unions to one line", () => {
    const schemas = topLevelToolSchemas();
    expect(signatureFromSchema("goal_update", schemas.goal_update)).toBe(
      "goal_update(status?: enum, plan?: string[], progress?: string, note?: any)",
    );
    expect(signatureFromSchema("capability_call", schemas.capability_call)).toBe(
      "capability_call(tool: string, arguments?: object)",
    );
    expect(
      signatureFromSchema("x", {
        type: "object",
        properties: {
          o: { type: "object" },
          a: { type: "array", items: { type: "object" } },
          n: { type: ["string", "null"] },
        },
      }),
    ).toBe("x(o?: object, a?: object[], n?: string | null)");
    expect(signatureFromSchema("none", { type: "object" })).toBe("none()");
  });
});

describe("top-level tools", () => {
  it("are exactly the eight, in order, from one map", () => {
    expect(topLevelToolNames()).toEqual([
      "capability_search",
      "capability_load",
      "capability_call",
      "goal_update",
      "memory_search",
      "verify",
      "finish",
      "mark_impossible",
    ]);
    expect(Object.keys(topLevelToolSchemas())).toEqual([...TOP_LEVEL_TOOL_NAMES]);
  });
  it("are closed except capability_call, and goal_update is composite", () => {
    const s = topLevelToolSchemas();
    for (const [name, schema] of Object.entries(s)) {
      expect(schema.additionalProperties, name).toBe(name === "capability_call");
    }
    const gu = JSON.stringify(s.goal_update);
    expect(gu).toContain('"enum"');
    expect(/"(oneOf|anyOf)"/.test(gu)).toBe(true);
  });
  it("hand out copies that callers cannot use to change ours", () => {
    const a = topLevelToolSchemas();
    (a.finish.properties as Record<string, unknown>).evil = { type: "string" };
    expect(topLevelToolSchemas().finish.properties).not.toHaveProperty("evil");
  });
});

describe("withSignatures", () => {
  it("puts each tool's signature beside it and keeps everything else", () => {
    const manifest = {
      name: "fs",
      version: "1.0.0",
      description: "files",
      profileFit: ["Coder"],
      tools: [
        {
          name: "fs.read",
          description: "read a file",
          inputSchema: {
            type: "object" as const,
            properties: { path: { type: "string" as const } },
            required: ["path"],
            additionalProperties: false,
          },
        },
      ],
    };
    const shown = withSignatures(manifest);
    expect(shown.tools[0]).toEqual({ ...manifest.tools[0], signature: "fs.read(path: string)" });
    expect({ ...shown, tools: [] }).toEqual({ ...manifest, tools: [] });
    expect(manifest.tools[0]).not.toHaveProperty("signature");
  });
});
