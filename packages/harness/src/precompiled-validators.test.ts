import { addPrecompiledValidators, stableStringify, validate, validatorCacheStats } from "@capgate/schema";
import { standaloneValidatorsModule } from "@capgate/schema/standalone";
import { describe, expect, it } from "vitest";
import { builtinCapabilities } from "./builtins.js";
import { configSchema } from "./config-schema.js";
import { builtinValidators } from "./generated/builtin-validators.js";
import { configValidators } from "./generated/config-validator.js";

// The checked-in validators are what ajv makes of today's schemas: this test regenerates
// them and compares. After changing a built-in tool's schema or the config schema, update
// them with `npx vitest run packages/harness/src/precompiled-validators.test.ts -u`.
const HEADER = (what: string) =>
  `Generated from ${what} by @capgate/schema/standalone (ajv standalone code); do not edit.\nRegenerate: npx vitest run packages/harness/src/precompiled-validators.test.ts -u`;

const toolSchemas = () => builtinCapabilities().flatMap((c) => c.manifest.tools.map((t) => t.inputSchema));

describe("precompiled validators", () => {
  // This compiles every built-in tool's input schema with ajv, as registration would have:
  // the harness registers built-ins without compiling them.
  it("of the built-in tools are what ajv compiles from their input schemas today", async () => {
    const text = standaloneValidatorsModule(toolSchemas(), {
      exportName: "builtinValidators",
      header: HEADER("the input schemas of the built-in capabilities' tools"),
    });
    await expect(text).toMatchFileSnapshot("./generated/builtin-validators.js");
  });

  it("of the config are what ajv compiles from the config schema today", async () => {
    const text = standaloneValidatorsModule([configSchema], {
      exportName: "configValidators",
      header: HEADER("the config schema (src/config-schema.ts)"),
    });
    await expect(text).toMatchFileSnapshot("./generated/config-validator.js");
  });

  it("cover every built-in tool and the config, and nothing else", () => {
    expect(Object.keys(builtinValidators).sort()).toEqual(
      [...new Set(toolSchemas().map(stableStringify))].sort(),
    );
    expect(Object.keys(configValidators)).toEqual([stableStringify(configSchema)]);
  });

  it("answer as the compiled validators do, for calls a model gets wrong", () => {
    addPrecompiledValidators(builtinValidators);
    for (const schema of toolSchemas()) {
      const properties = Object.keys((schema.properties ?? {}) as object);
      const probes: unknown[] = [
        {},
        { unexpected: 1 },
        Object.fromEntries(properties.map((p) => [p, null])),
        Object.fromEntries(properties.map((p) => [p, "x".repeat(5000)])),
        Object.fromEntries(properties.map((p) => [p, -1])),
        Object.fromEntries(properties.map((p) => [p, ["a", 1]])),
      ];
      // Another text (a description more) is not precompiled: ajv compiles it.
      const byAjv = { ...schema, description: "compiled by ajv" };
      for (const value of probes) {
        const before = validatorCacheStats().compiles;
        const answer = validate(structuredClone(schema), value);
        expect(validatorCacheStats().compiles).toBe(before);
        expect({ schema, value, answer }).toEqual({ schema, value, answer: validate(byAjv, value) });
      }
    }
  });
});
