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

describe("describeIssues", () => {
  it("names the first property, lists up to three more, and ends with one full stop", async () => {
    const { describeIssues } = await import("./validate.js");
    const issues = [
      { property: "q", message: "unexpected property `q`; did you mean `query`? Allowed: query, limit." },
      { property: "query", message: "missing required property `query`" },
    ];
    expect(describeIssues(issues, { under: "arguments" })).toEqual({
      property: "arguments.q",
      text: "`arguments.q` unexpected property `q`; did you mean `query`? Allowed: query, limit. Also: `arguments.query` missing required property `query`.",
    });
    expect(
      describeIssues([{ property: "", message: "must be object, got string" }], { root: "arguments" }),
    ).toEqual({
      property: "arguments",
      text: "`arguments` must be object, got string.",
    });
    expect(describeIssues([{ property: "", message: "must be object" }]).text).toBe("must be object.");
  });
});
