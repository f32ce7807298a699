import type { JsonSchema } from "./json-schema.js";

// Keywords whose value is one subschema, an array of them, or a map of them (draft-07 and 2020-12).
const ONE = [
  "not",
  "if",
  "then",
  "else",
  "items",
  "additionalItems",
  "additionalProperties",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
const MANY = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A copy of a tool's inputSchema in which a property that is both `required` and carries a
 * `default` may be left out — at any depth, and nothing else changes (types, enums, closed
 * objects, every other required property stay as they are).
 *
 * Why: schema generators (zod's `.default()`, Playwright MCP's `scale`) list such a property
 * as required *and* give its default, and the server fills the default in when it is
 * missing. Checking the arguments against the schema as written would refuse calls the
 * server accepts. capgate forwards the arguments as sent; the server fills its own default.
 */
export function optionalWhereDefaulted(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema) as Schema;
  // Unchanged: the same object, so a validator compiled for it is reused.
  return relaxInPlace(copy) ? (copy as JsonSchema) : schema;
}

/** Drops defaulted names from `required` throughout; true when it changed anything. */
function relaxInPlace(root: Schema): boolean {
  let changed = false;
  const stack: Schema[] = [root];
  const seen = new Set<Schema>();
  while (stack.length > 0) {
    const node = stack.pop() as Schema;
    if (seen.has(node)) continue;
    seen.add(node);
    const properties = node.properties;
    if (Array.isArray(node.required) && isObject(properties)) {
      const kept = node.required.filter(
        (name) =>
          typeof name !== "string" ||
          !Object.hasOwn(properties, name) ||
          !isObject(properties[name]) ||
          !Object.hasOwn(properties[name] as Schema, "default"),
      );
      if (kept.length !== node.required.length) {
        changed = true;
        if (kept.length > 0) node.required = kept;
        else delete node.required;
      }
    }
    for (const key of ONE) if (isObject(node[key])) stack.push(node[key] as Schema);
    for (const key of MANY) {
      const value = node[key];
      if (Array.isArray(value)) for (const item of value) if (isObject(item)) stack.push(item);
    }
    for (const key of MAP) {
      const value = node[key];
      if (isObject(value)) for (const item of Object.values(value)) if (isObject(item)) stack.push(item);
    }
  }
  return changed;
}
