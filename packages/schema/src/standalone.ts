// Build time only (Node): the precompiled validators a package checks in, generated with
// the options `validate` compiles with. See addPrecompiledValidators.
import { createRequire } from "node:module";
import type { Ajv, ValidateFunction } from "ajv";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { AJV_OPTIONS, isDraft07, rooted } from "./ajv-options.js";
import type { JsonSchema } from "./json-schema.js";
import { stableStringify } from "./stable-hash.js";
import { RUNTIME_MODULES } from "./standalone-runtime.js";

const requireHere = createRequire(import.meta.url);

/** Where generated modules take their run-time helpers from (this package's subpath). */
export const RUNTIME_SPECIFIER = ["@capgate", "schema", "standalone-runtime"].join("/");

function compileForSource(schema: JsonSchema): { ajv: Ajv | Ajv2020; validate: ValidateFunction } {
  const formats = requireHere("ajv-formats") as { default?: unknown };
  const addFormats = (formats.default ?? formats) as (ajv: Ajv | Ajv2020) => void;
  // A fresh engine per schema: its names start at 0, so the text of one validator does not
  // depend on the others.
  const options = { ...AJV_OPTIONS, code: { source: true, lines: true } };
  const ajv = isDraft07(schema)
    ? new (requireHere("ajv") as { Ajv: typeof Ajv }).Ajv(options)
    : new (requireHere("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 }).Ajv2020(options);
  addFormats(ajv);
  return { ajv, validate: ajv.compile(rooted(schema)) };
}

/**
 * The text of an ES module that exports, as `exportName`, a table for
 * `addPrecompiledValidators`: the canonical text of each schema → a function making its
 * validator (ajv standalone code, compiled with exactly the options `validate` uses; made
 * on first use, so a process pays only for the validators it needs). Helpers the code
 * needs come from `@capgate/schema/standalone-runtime`. Deterministic: the same schemas
 * give the same text, so a test can regenerate the checked-in file and compare.
 */
export function standaloneValidatorsModule(
  schemas: readonly JsonSchema[],
  options: { exportName: string; header: string },
): string {
  const standaloneCode = (
    requireHere("ajv/dist/standalone") as { default: (ajv: Ajv, fn: ValidateFunction) => string }
  ).default;
  const entries = new Map<string, string>();
  for (const schema of schemas) {
    const canonical = stableStringify(schema);
    if (entries.has(canonical)) continue;
    const { ajv, validate } = compileForSource(schema);
    const code = standaloneCode(ajv as Ajv, validate);
    for (const [, id] of code.matchAll(/require\("([^"]+)"\)/g)) {
      if (!(id! in RUNTIME_MODULES))
        throw new Error(
          `the validator needs ${id}, which @capgate/schema/standalone-runtime does not provide`,
        );
    }
    const body = code.replace(/^"use strict";/, "").trim();
    entries.set(
      canonical,
      `  ${JSON.stringify(canonical)}: () => {\n    const module = { exports: {} };\n${body}\n    return module.exports;\n  },`,
    );
  }
  const header = options.header
    .split("\n")
    .map((line) => `// ${line}`.trimEnd())
    .join("\n");
  const runtime = JSON.stringify(RUNTIME_SPECIFIER);
  return `${header}\nimport { standaloneRequire as require } from ${runtime};\n\nexport const ${options.exportName} = {\n${[...entries.values()].join("\n")}\n};\n`;
}
