import type { JsonSchema } from "./json-schema.js";

/**
 * How capgate compiles a schema, in one place: `validate` compiles with these at run time
 * and `@capgate/schema/standalone` with the same at build time, so a precompiled validator
 * answers exactly as a compiled one.
 */
export const AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  verbose: true,
  logger: false,
  validateSchema: false,
  // Schemas are cached by content, not registered by $id: two servers may reuse an $id.
  addUsedSchema: false,
} as const;

/** draft-04 to draft-07 schemas compile with ajv's draft-07 engine, all others with 2020-12. */
export function isDraft07(schema: JsonSchema): boolean {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  return /draft-0[4-7]/.test(dialect);
}

// ajv resolves `$ref: "#"` (a schema that refers to its own root, e.g. a tree) against a
// registered schema or a base URI. Schemas are not registered (addUsedSchema: false), so a
// schema without an `$id` is compiled under this one: local references resolve as in the
// document, and nothing outside it can be reached through it.
export const ANONYMOUS_BASE = "capgate:schema";

/** The schema as it is compiled: under ANONYMOUS_BASE when it has no `$id` of its own. */
export function rooted(schema: JsonSchema): JsonSchema {
  return typeof schema === "object" && schema !== null && !Array.isArray(schema) && schema.$id === undefined
    ? { ...schema, $id: ANONYMOUS_BASE }
    : schema;
}
