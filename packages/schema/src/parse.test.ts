import { describe, expect, it } from "vitest";
import { MAX_ACTION_BYTES, PARSE_ERROR_CODES, parseToolAction } from "./parse.js";

const ok = (text: string) => {
  const r = parseToolAction(text);
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.action;
};
const fail = (text: string) => {
  const r = parseToolAction(text);
  if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.action)}`);
  return r.error;
};

describe("parseToolAction: accepted forms", () => {
  it("parses a plain action", () => {
    expect(ok('{"name":"capability_search","arguments":{"query":"read files"}}')).toEqual({
      name: "capability_search",
      arguments: { query: "read files" },
    });
  });
  it("ignores surrounding whitespace", () => {
    expect(ok('\n\n  {"name":"finish","arguments":{"summary":"done"}}  \n').name).toBe("finish");
  });
  it("accepts one ```json fence around the object", () => {
    const a = ok('```json\n{"name":"capability_load","arguments":{"name":"fs"}}\n```');
    expect(a).toEqual({ name: "capability_load", arguments: { name: "fs" } });
    expect(ok('```\n{"name":"capability_load","arguments":{"name":"fs"}}\n```').name).toBe("capability_load");
  });
  it("treats extra capability_call properties as the tool's arguments", () => {
    expect(ok('{"name":"capability_call","arguments":{"tool":"fs.read","path":"a.txt"}}')).toEqual({
      name: "capability_call",
      arguments: { tool: "fs.read", arguments: { path: "a.txt" } },
    });
  });
  it("keeps capability_call inner arguments as they are (validated later against the tool)", () => {
    const a = ok(
      '{"name":"capability_call","arguments":{"tool":"fs.read","arguments":{"path":"a","x":[1,{"y":null}]}}}',
    );
    expect(a.arguments).toEqual({ tool: "fs.read", arguments: { path: "a", x: [1, { y: null }] } });
  });
  it("accepts composite goal_update values", () => {
    expect(ok('{"name":"goal_update","arguments":{"status":"working","note":["a","b"]}}').name).toBe(
      "goal_update",
    );
    expect(ok('{"name":"goal_update","arguments":{"note":"a"}}').name).toBe("goal_update");
  });
  it("decodes string escapes", () => {
    const a = ok('{"name":"finish","arguments":{"summary":"a\\n\\"b\\" \\u00e9 \\\\ /"}}');
    expect(a.arguments.summary).toBe('a\n"b" é \\ /');
  });
});

describe("parseToolAction: every error code", () => {
  it("invalid_json with line and column", () => {
    const e = fail('{"name": "finish", "arguments": {"summary": "x",}}');
    expect(e.code).toBe("invalid_json");
    expect(e.message).toMatch(/line 1, column \d+/);
  });
  it("invalid_json for prose and for empty replies", () => {
    expect(fail("I will now read the file.").code).toBe("invalid_json");
    expect(fail("").code).toBe("invalid_json");
    expect(fail("   \n ").code).toBe("invalid_json");
  });
  it("trailing_text after the object", () => {
    expect(fail('{"name":"finish","arguments":{"summary":"x"}} I hope this helps').code).toBe(
      "trailing_text",
    );
  });
  it("trailing_text before the object", () => {
    expect(fail('Sure! {"name":"finish","arguments":{"summary":"x"}}').code).toBe("trailing_text");
  });
  it("trailing_text for two fenced blocks (fenced twice)", () => {
    const e = fail(
      '```json\n{"name":"finish","arguments":{"summary":"x"}}\n```\n```json\n{"name":"finish","arguments":{"summary":"y"}}\n```',
    );
    expect(["trailing_text", "multiple_actions"]).toContain(e.code);
  });
  it("multiple_actions for two objects", () => {
    expect(
      fail('{"name":"finish","arguments":{"summary":"x"}}\n{"name":"finish","arguments":{"summary":"y"}}')
        .code,
    ).toBe("multiple_actions");
  });
  it("not_an_object for arrays, strings, numbers, null", () => {
    for (const t of ['[{"name":"finish"}]', '"finish"', "42", "null", "true"])
      expect(fail(t).code).toBe("not_an_object");
  });
  it("duplicate_key at the top and at any depth, naming the path", () => {
    const top = fail('{"name":"finish","name":"verify","arguments":{}}');
    expect(top.code).toBe("duplicate_key");
    expect(top.property).toBe("name");
    const deep = fail(
      '{"name":"capability_call","arguments":{"tool":"fs.read","arguments":{"path":"a","path":"b"}}}',
    );
    expect(deep.code).toBe("duplicate_key");
    expect(deep.property).toBe("arguments.arguments.path");
  });
  it("forbidden_key for __proto__, constructor, prototype at any depth, without touching prototypes", () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const e = fail(
        `{"name":"capability_call","arguments":{"tool":"x.y","arguments":{"a":[{"${key}":{"polluted":1}}]}}}`,
      );
      expect(e.code).toBe("forbidden_key");
      expect(e.property).toBe(`arguments.arguments.a[0].${key}`);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(fail('{"__proto__":{"x":1},"name":"finish","arguments":{"summary":"s"}}').code).toBe(
      "forbidden_key",
    );
  });
  it("unknown_tool lists the allowed names", () => {
    const e = fail('{"name":"run_shell","arguments":{}}');
    expect(e.code).toBe("unknown_tool");
    expect(e.property).toBe("name");
    expect(e.message).toContain("capability_search");
    expect(e.message).toContain("mark_impossible");
  });
  it("unknown_tool for a concrete tool name explains capability_call", () => {
    const e = fail('{"name":"fs.read","arguments":{"path":"a"}}');
    expect(e.code).toBe("unknown_tool");
    expect(e.message).toContain("capability_call");
  });
  it("unknown_tool suggests the closest offered name, not capability_call, when capability_call is not offered", () => {
    const schemas = {
      fs_read: { type: "object", properties: { path: { type: "string" } } },
      finish: { type: "object" },
    };
    const r = parseToolAction('{"name":"fs.read","arguments":{"path":"a"}}', schemas);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("unknown_tool");
    expect(r.error.message).not.toContain("capability_call");
    expect(r.error.message).toContain("Did you mean `fs_read`?");
  });
  it("unknown_tool suggests a near name", () => {
    expect(fail('{"name":"capability_serch","arguments":{"query":"x"}}').message).toContain(
      "capability_search",
    );
  });
  it("unknown_tool when name is missing or not a string", () => {
    expect(fail('{"arguments":{}}').code).toBe("unknown_tool");
    expect(fail('{"name":3,"arguments":{}}').code).toBe("unknown_tool");
  });
  it("invalid_arguments names the property by path and suggests the closest name", () => {
    const e = fail('{"name":"capability_search","arguments":{"q":"read files"}}');
    expect(e.code).toBe("invalid_arguments");
    expect(e.property).toBe("arguments.q");
    expect(e.message).toContain("did you mean `query`?");
  });
  it("invalid_arguments for a missing required property", () => {
    const e = fail('{"name":"verify","arguments":{"claim":"tests pass"}}');
    expect(e.code).toBe("invalid_arguments");
    expect(e.property).toBe("arguments.command");
  });
  it("invalid_arguments for wrong types and out-of-range values", () => {
    const t = fail('{"name":"capability_search","arguments":{"query":"x","limit":"5"}}');
    expect(t.property).toBe("arguments.limit");
    expect(t.message).toMatch(/integer/);
    const r = fail('{"name":"capability_search","arguments":{"query":"x","limit":99}}');
    expect(r.property).toBe("arguments.limit");
    const en = fail('{"name":"goal_update","arguments":{"status":"done"}}');
    expect(en.property).toBe("arguments.status");
    expect(en.message).toContain("planning");
  });
  it("invalid_arguments for arguments flattened next to name", () => {
    const e = fail('{"name":"capability_search","query":"x"}');
    expect(e.code).toBe("invalid_arguments");
    expect(e.property).toBe("query");
    expect(e.message).toContain("inside `arguments`");
  });
  it("invalid_arguments when arguments is not an object", () => {
    expect(fail('{"name":"finish","arguments":"done"}').property).toBe("arguments");
  });
  it("invalid_arguments when capability_call has both arguments and stray properties", () => {
    const e = fail('{"name":"capability_call","arguments":{"tool":"fs.read","arguments":{},"path":"a"}}');
    expect(e.code).toBe("invalid_arguments");
    expect(e.property).toBe("arguments.path");
  });
  it("too_large over 1 MiB, measured in UTF-8 bytes", () => {
    const big = `{"name":"finish","arguments":{"summary":"${"x".repeat(MAX_ACTION_BYTES)}"}}`;
    expect(fail(big).code).toBe("too_large");
    const wide = `{"name":"finish","arguments":{"summary":"${"é".repeat(MAX_ACTION_BYTES / 2 + 10)}"}}`;
    expect(fail(wide).code).toBe("too_large");
  });
  it("too_deep past 64 levels, without recursion", () => {
    const deep = `{"name":"finish","arguments":{"summary":"s","x":${"[".repeat(100)}${"]".repeat(100)}}}`;
    expect(fail(deep).code).toBe("too_deep");
    const huge = `${"[".repeat(500_000)}`;
    expect(fail(huge).code).toBe("too_deep");
  });
  it("covers every declared code", () => {
    expect(PARSE_ERROR_CODES).toHaveLength(10);
  });
});

describe("parseToolAction with custom schemas", () => {
  it("derives the allowed set from the map's keys", () => {
    const schemas = { ping: { type: "object", additionalProperties: false, properties: {} } };
    expect(parseToolAction('{"name":"ping","arguments":{}}', schemas).ok).toBe(true);
    const r = parseToolAction('{"name":"finish","arguments":{"summary":"x"}}', schemas);
    expect(r.ok).toBe(false);
  });
});
