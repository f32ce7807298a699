import { describe, expect, it } from "vitest";
import { validate, validatorCacheStats } from "./validate.js";

describe("validate", () => {
  const schema = {
    type: "object",
    additionalProperties: false,
    properties: {
      path: { type: "string" },
      offset: { type: "integer", minimum: 0 },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["path"],
  };

  it("accepts valid values without coercing or injecting defaults", () => {
    const value = { path: "a" };
    expect(validate(schema, value)).toEqual({ ok: true });
    expect(value).toEqual({ path: "a" });
    expect(validate(schema, { path: "a", offset: "1" }).ok).toBe(false);
  });

  it("names every offending property by path", () => {
    const r = validate(schema, { pth: "a", offset: -1, tags: ["x", 2] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const props = r.errors.map((e) => e.property);
    expect(props).toContain("path");
    expect(props).toContain("pth");
    expect(props).toContain("offset");
    expect(props).toContain("tags[1]");
    expect(r.errors.find((e) => e.property === "pth")?.message).toContain("did you mean `path`?");
  });

  it("handles draft-07 and 2020-12 schemas", () => {
    const d7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { a: { type: "number" } },
      required: ["a"],
    };
    const d20 = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      prefixItems: [],
      properties: { a: { type: "number" } },
      required: ["a"],
    };
    expect(validate(d7, { a: 1 }).ok).toBe(true);
    expect(validate(d7, {}).ok).toBe(false);
    expect(validate(d20, { a: 1 }).ok).toBe(true);
    expect(validate(d20, { a: "x" }).ok).toBe(false);
  });

  it("reports an invalid schema as an error rather than throwing", () => {
    const r = validate({ type: "object", properties: { a: { type: "no-such-type" } } }, { a: 1 });
    expect(r.ok).toBe(false);
  });

  it("compiles schemas that refer to their own root (recursive arguments), in both drafts", () => {
    const tree = { type: "object", properties: { name: { type: "string" }, child: { $ref: "#" } } };
    expect(validate(tree, { name: "a", child: { name: "b", child: {} } })).toEqual({ ok: true });
    const bad = validate(tree, { child: { child: { name: 3 } } });
    expect(bad.ok ? [] : bad.errors.map((e) => e.property)).toEqual(["child.child.name"]);
    const d7 = { $schema: "http://json-schema.org/draft-07/schema#", ...tree };
    expect(validate(d7, { child: { name: "b" } })).toEqual({ ok: true });
    // A reference that leaves the document still fails, naming the reference only.
    const away = validate({ type: "object", properties: { a: { $ref: "other.json" } } }, { a: 1 });
    expect(away.ok ? "" : away.errors[0]?.message).toBe(
      "the schema itself is invalid: can't resolve reference other.json",
    );
  });

  it("reports a schema whose references loop on the same value as invalid instead of overflowing the stack", () => {
    const loop = {
      type: "object",
      $defs: { a: { type: "object", $ref: "#/$defs/b" }, b: { type: "object", $ref: "#/$defs/a" } },
      allOf: [{ $ref: "#/$defs/a" }],
    };
    const r = validate(loop, {});
    expect(r.ok).toBe(false);
    expect(r.ok ? "" : r.errors[0]?.message).toMatch(/references loop back to the same value/);
  });

  it("compiles a schema once across 10,000 validations of fresh copies", () => {
    const make = () => ({
      type: "object",
      additionalProperties: false,
      properties: { n: { type: "integer" }, s: { type: "string", minLength: 1 } },
      required: ["n"],
    });
    const before = validatorCacheStats().compiles;
    for (let i = 0; i < 10_000; i++) {
      const copy = i % 2 === 0 ? make() : JSON.parse(JSON.stringify(make()));
      expect(validate(copy, { n: i }).ok).toBe(true);
    }
    // Same content with keys in another order is the same schema.
    validate(
      {
        required: ["n"],
        properties: { s: { minLength: 1, type: "string" }, n: { type: "integer" } },
        additionalProperties: false,
        type: "object",
      },
      { n: 1 },
    );
    expect(validatorCacheStats().compiles - before).toBe(1);
  });

  it("does not confuse two schemas that share an $id", () => {
    const a = {
      $id: "https://example.com/args.json",
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
    };
    const b = {
      $id: "https://example.com/args.json",
      type: "object",
      properties: { b: { type: "string" } },
      required: ["b"],
    };
    expect(validate(a, { a: "1" }).ok).toBe(true);
    expect(validate(b, { b: "1" }).ok).toBe(true);
    expect(validate(b, { a: "1" }).ok).toBe(false);
  });
});

describe("values too large to list every error of", () => {
  const schema = {
    type: "object",
    properties: { paths: { type: "array", items: { type: "string" }, maxItems: 1000 } },
    required: ["paths"],
    additionalProperties: false,
  };

  it("a small value gets every error; one past 10,000 values gets its first (the host's work stays bounded)", () => {
    // Found by an outside review: a script passed 2,000,000 numbers where strings were due;
    // listing every error took 14 s of the host's only thread.
    const small = validate(schema, { paths: Array.from({ length: 50 }, () => 1) });
    expect(small.ok).toBe(false);
    if (!small.ok) expect(small.errors).toHaveLength(50);
    const large = validate(schema, { paths: Array.from({ length: 2_000_000 }, () => 1) });
    expect(large.ok).toBe(false);
    if (!large.ok) {
      expect(large.errors).toHaveLength(1);
      expect(large.errors[0]?.property).toBe("paths");
    }
    const keys: Record<string, unknown> = { paths: ["a"] };
    for (let i = 0; i < 20_000; i++) keys[`k${i}`] = i;
    const extra = validate(schema, keys);
    expect(extra.ok).toBe(false);
    if (!extra.ok)
      expect(extra.errors).toEqual([{ property: "k0", message: "unexpected property `k0` Allowed: paths." }]);
  });

  it("a large valid value is still valid", () => {
    const wide = { type: "object", properties: { n: { type: "array", items: { type: "integer" } } } };
    expect(validate(wide, { n: Array.from({ length: 50_000 }, (_, i) => i) })).toEqual({ ok: true });
  });
});
