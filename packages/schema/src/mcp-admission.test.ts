import { describe, expect, it } from "vitest";
import { admitMcpTools } from "./mcp-admission.js";
import { toolSchemaProblem } from "./schema-checks.js";
import { validate } from "./validate.js";

const obj = { type: "object" };

describe("admitMcpTools: which tools of an MCP server exist", () => {
  it("admits printable names (whitespace mapped to _) and refuses the rest, each with its reason", () => {
    const { admitted, refused } = admitMcpTools([
      { name: "fs.read", inputSchema: obj },
      { name: "other/thing", inputSchema: obj },
      { name: "get weather", inputSchema: obj },
      { name: "x".repeat(129), inputSchema: obj },
      { name: "esc\u001b[31mred", inputSchema: obj },
      { name: "\u202Eevil", inputSchema: obj },
      { name: "zero\u200Bwidth", inputSchema: obj },
      { name: "fs.read", inputSchema: obj },
      { name: "get  weather", inputSchema: obj },
      { name: 5, inputSchema: obj },
      "not an object",
      { name: "no_schema" },
    ]);
    expect(admitted.map((t) => [t.name, t.callable])).toEqual([
      ["fs.read", "fs.read"],
      ["other/thing", "other/thing"],
      ["get weather", "get_weather"],
      ["no_schema", "no_schema"],
    ]);
    expect(admitted[3]?.inputSchema).toEqual({ type: "object" });
    expect(refused.map((r) => [r.label, r.reason])).toEqual([
      [`"${"x".repeat(78)}…`, "tool name is longer than 128 characters"],
      ['"esc\\u001b[31mred"', "tool name contains control or format characters"],
      ['"\\u202eevil"', "tool name contains control or format characters"],
      ['"zero\\u200bwidth"', "tool name contains control or format characters"],
      ['"fs.read"', "duplicate tool name"],
      ['"get  weather"', 'tool name maps to "get_weather", which another tool already has'],
      ['"5"', "tool name is missing or not a string"],
      ['"not an object"', "tool entry is not an object"],
    ]);
    // The raw name is kept so a call by that name can be told why it is refused.
    expect(refused[1]?.name).toBe("esc\u001b[31mred");
  });

  it("refuses a tool whose inputSchema cannot check arguments: oversized, too deep, looping, or not compiling", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { a: deep } };
    const { admitted, refused } = admitMcpTools([
      { name: "huge", inputSchema: { type: "object", description: "x".repeat(375 * 1024) } },
      { name: "deep", inputSchema: deep },
      {
        name: "ref_loop",
        inputSchema: {
          type: "object",
          $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
          properties: { x: { $ref: "#/$defs/a" } },
        },
      },
      {
        name: "ref_loop_beside_keywords",
        inputSchema: {
          type: "object",
          $defs: {
            a: { type: "object", $ref: "#/$defs/b" },
            b: { type: "object", allOf: [{ $ref: "#/$defs/a" }] },
          },
          $ref: "#/$defs/a",
        },
      },
      { name: "self", inputSchema: { type: "object", $ref: "#" } },
      { name: "bad_type", inputSchema: { type: "object", properties: { a: { type: "no-such-type" } } } },
      { name: "dangling", inputSchema: { type: "object", properties: { a: { $ref: "#/$defs/nope" } } } },
      { name: "array_schema", inputSchema: [] },
      {
        name: "hidden_property",
        inputSchema: { type: "object", properties: { "a\u202Eb": { type: "string" } } },
      },
      { name: "tree", inputSchema: { type: "object", properties: { child: { $ref: "#" } } } },
      {
        name: "nodes",
        inputSchema: {
          type: "object",
          $defs: {
            node: {
              type: "object",
              properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } },
            },
          },
          properties: { root: { $ref: "#/$defs/node" } },
        },
      },
    ]);
    expect(admitted.map((t) => t.name)).toEqual(["tree", "nodes"]);
    const reasons = Object.fromEntries(refused.map((r) => [r.name, r.reason]));
    expect(reasons.huge).toMatch(/^inputSchema is larger than 65536 characters \(\d+\)$/);
    expect(reasons.deep).toBe("inputSchema nests deeper than 64 levels");
    expect(reasons.ref_loop).toBe(
      "inputSchema has a $ref loop that never reaches a nested value (#/$defs/a → #/$defs/b → #/$defs/a)",
    );
    expect(reasons.ref_loop_beside_keywords).toMatch(
      /^inputSchema has a \$ref loop that never reaches a nested value \(#/,
    );
    expect(reasons.self).toBe("inputSchema has a $ref loop that never reaches a nested value (# → #)");
    expect(reasons.bad_type).toMatch(/^inputSchema does not compile \(type must be JSONType/);
    expect(reasons.dangling).toBe("inputSchema does not compile (can't resolve reference #/$defs/nope)");
    expect(reasons.array_schema).toBe("inputSchema is not a JSON object");
    expect(reasons.hidden_property).toMatch(
      /^inputSchema has a property name "a\u202Eb" with control or format characters$/,
    );
    // Refused tools keep the name a call would use, so the call can be told why.
    expect(refused.find((r) => r.name === "ref_loop")?.callable).toBe("ref_loop");
    // An admitted schema is a private copy that validates at once.
    const tree = admitted[0]!;
    expect(validate(tree.inputSchema, { child: { child: {} } })).toEqual({ ok: true });
  });

  it("keeps a tool whose outputSchema is unusable, without the result check, and says why", () => {
    const { admitted } = admitMcpTools([
      {
        name: "a",
        inputSchema: obj,
        outputSchema: { type: "object", properties: { n: { type: "number" } } },
      },
      { name: "b", inputSchema: obj, outputSchema: { type: "object", $ref: "#" } },
    ]);
    expect(admitted[0]?.outputSchema).toEqual({ type: "object", properties: { n: { type: "number" } } });
    expect(admitted[1]?.outputSchema).toBeUndefined();
    expect(admitted[1]?.outputSchemaProblem).toBe(
      "outputSchema has a $ref loop that never reaches a nested value (# → #)",
    );
  });

  it("does not recurse over a hostile schema nested thousands deep", () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { not: deep };
    expect(toolSchemaProblem(deep)).toBe("inputSchema nests deeper than 64 levels");
  });
});
