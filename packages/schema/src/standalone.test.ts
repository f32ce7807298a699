import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./json-schema.js";
import { stableStringify } from "./stable-hash.js";
import { RUNTIME_SPECIFIER, standaloneValidatorsModule } from "./standalone.js";
import { standaloneRequire } from "./standalone-runtime.js";
import { addPrecompiledValidators, compiledValidator, validate, validatorCacheStats } from "./validate.js";

// Shapes capgate's schemas use: closed objects, lengths (ucs2length at run time), enums,
// a uri format, anyOf, a draft-07 dialect and a reference to the root.
const SCHEMAS: JsonSchema[] = [
  {
    type: "object",
    additionalProperties: false,
    properties: {
      path: { type: "string", minLength: 1, maxLength: 8 },
      mode: { enum: ["a", "b"] },
      note: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
    },
    required: ["path"],
  },
  {
    type: "object",
    additionalProperties: false,
    properties: { url: { type: "string", format: "uri" }, depth: { type: "integer", minimum: 0 } },
  },
  {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "number" } },
    required: ["a"],
  },
  {
    type: "object",
    additionalProperties: false,
    properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
  },
];

const VALUES: unknown[] = [
  {},
  { path: "a" },
  { path: "" },
  { path: "𝒳𝒳𝒳𝒳𝒳𝒳𝒳𝒳" },
  { path: "123456789" },
  { path: "a", mode: "c", extra: 1 },
  { path: "a", note: ["x", 2] },
  { url: "https://example.com/a", depth: 1 },
  { url: "not a uri", depth: -1 },
  { a: "1" },
  { a: 1 },
  { name: "root", children: [{ name: "leaf", children: [] }, { nam: "typo" }] },
  [],
  null,
  "text",
];

async function generated(schemas: JsonSchema[]): Promise<Record<string, () => ValidateFunction>> {
  const dir = mkdtempSync(join(tmpdir(), "capgate-standalone-"));
  const text = standaloneValidatorsModule(schemas, { exportName: "validators", header: "test" });
  // The generated module imports its helpers by package name; point it at this source's.
  const file = join(dir, "validators.mjs");
  writeFileSync(
    file,
    text.replace(
      JSON.stringify(RUNTIME_SPECIFIER),
      JSON.stringify(pathToFileURL(join(import.meta.dirname, "standalone-runtime.ts")).href),
    ),
  );
  return ((await import(pathToFileURL(file).href)) as { validators: Record<string, () => ValidateFunction> })
    .validators;
}

describe("standaloneValidatorsModule", () => {
  it("is deterministic, keyed by each schema's canonical text, one entry per distinct schema", () => {
    const text = standaloneValidatorsModule([...SCHEMAS, structuredClone(SCHEMAS[0]!)], {
      exportName: "validators",
      header: "Generated for a test.\nSecond line.",
    });
    expect(text).toBe(
      standaloneValidatorsModule(SCHEMAS, {
        exportName: "validators",
        header: "Generated for a test.\nSecond line.",
      }),
    );
    expect(
      text.startsWith("// Generated for a test.\n// Second line.\nimport { standaloneRequire as require }"),
    ).toBe(true);
    for (const schema of SCHEMAS)
      expect(text).toContain(`${JSON.stringify(stableStringify(schema))}: () => {`);
    expect(text.match(/: \(\) => \{/g)).toHaveLength(SCHEMAS.length);
  });

  it("makes validators that answer every value exactly as the compiled ones do", async () => {
    const table = await generated(SCHEMAS);
    for (const schema of SCHEMAS) {
      const pre = table[stableStringify(schema)]!();
      const compiled = compiledValidator(schema);
      for (const value of VALUES) {
        const a = pre(value);
        const b = compiled(value);
        expect({ schema, value, valid: a, errors: pre.errors }).toEqual({
          schema,
          value,
          valid: b,
          errors: compiled.errors,
        });
      }
    }
  });

  it("serves a registered schema without compiling it, and compiles any other", async () => {
    const schema: JsonSchema = {
      type: "object",
      additionalProperties: false,
      properties: { only: { type: "string", maxLength: 3 } },
      required: ["only"],
    };
    const table = await generated([schema]);
    addPrecompiledValidators(table);
    const before = validatorCacheStats().compiles;
    expect(validate(structuredClone(schema), { only: "toolong" })).toEqual({
      ok: false,
      errors: [{ property: "only", message: "must NOT have more than 3 characters" }],
    });
    expect(validate(structuredClone(schema), { onl: "x" }).ok).toBe(false);
    expect(validatorCacheStats().compiles).toBe(before);
    validate({ ...schema, required: [] }, {});
    expect(validatorCacheStats().compiles).toBe(before + 1);
  });

  it("refuses a schema whose code would need a helper the run time does not provide", () => {
    expect(() => standaloneRequire("ajv/dist/runtime/equal")).toThrow(/not provided/);
    expect(() =>
      standaloneValidatorsModule([{ type: "object", properties: { a: { const: { b: 1 } } } }], {
        exportName: "validators",
        header: "x",
      }),
    ).toThrow(/ajv\/dist\/runtime\/equal/);
  });
});
