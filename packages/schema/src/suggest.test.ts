import { describe, expect, it } from "vitest";
import { parseJsonStrict } from "./strict-json.js";
import { closestMatch } from "./suggest.js";

describe("closestMatch", () => {
  it("suggests abbreviations, typos and swapped letters, and nothing far away", () => {
    expect(closestMatch("q", ["query", "limit"])).toBe("query");
    expect(closestMatch("pth", ["path", "content"])).toBe("path");
    expect(closestMatch("modle", ["$schema", "model", "workspace"])).toBe("model");
    expect(closestMatch("zebra", ["path", "content"])).toBeUndefined();
  });
});

describe("parseJsonStrict", () => {
  it("parses documents and locates errors by line and column", () => {
    expect(parseJsonStrict('{"a": [1, 2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
    const bad = parseJsonStrict('{\n  "model": "x",\n  "approval": never\n}');
    expect(bad).toMatchObject({ ok: false, code: "invalid_json", line: 3, column: 15 });
    expect(parseJsonStrict('{"a": 1, "a": 2}')).toMatchObject({
      ok: false,
      code: "duplicate_key",
      path: "a",
    });
    expect(parseJsonStrict('{"a": 1} x')).toMatchObject({ ok: false, code: "trailing_text" });
  });
});
