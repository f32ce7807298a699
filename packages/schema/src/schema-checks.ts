import type { JsonSchema } from "./json-schema.js";
import { compiledValidator } from "./validate.js";

/** Largest schema of an untrusted tool kept, as JSON text (characters). */
export const MAX_TOOL_SCHEMA_CHARS = 64 * 1024;
/** Deepest nesting of objects and arrays in an untrusted tool's schema (the limit of an action, too). */
export const MAX_TOOL_SCHEMA_DEPTH = 64;

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
// Applied to the same value as the schema holding them: a cycle through these (and `$ref`)
// never reaches a nested value, so validation would never end.
const SAME_VALUE = new Set([
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "dependentSchemas",
  "dependencies",
]);

const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Nesting depth of a JSON value, without recursion (a hostile value may nest thousands deep); stops past `limit`. */
function depthOver(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

interface Node {
  schema: Schema;
  pointer: string;
  /** The schema resource `#…` references inside this node resolve against (nearest `$id`). */
  resource: Schema;
  /** Subschemas applied to the same value. */
  same: Schema[];
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Every subschema with its pointer, anchors by name, and the first problem with a property name. */
function walk(root: Schema): { nodes: Map<Schema, Node>; anchors: Map<string, Schema>; badName?: string } {
  const nodes = new Map<Schema, Node>();
  const anchors = new Map<string, Schema>();
  let badName: string | undefined;
  const queue: Array<{ schema: Schema; pointer: string; resource: Schema }> = [
    { schema: root, pointer: "", resource: root },
  ];
  for (let i = 0; i < queue.length; i++) {
    const { schema, pointer, resource: outer } = queue[i] as (typeof queue)[number];
    if (nodes.has(schema)) continue;
    const id = schema.$id;
    const resource = typeof id === "string" && !id.startsWith("#") && schema !== root ? schema : outer;
    if (typeof id === "string" && id.startsWith("#")) anchors.set(id.slice(1), schema);
    for (const key of ["$anchor", "$dynamicAnchor"])
      if (typeof schema[key] === "string") anchors.set(schema[key] as string, schema);
    const node: Node = { schema, pointer, resource, same: [] };
    nodes.set(schema, node);
    const visit = (child: unknown, at: string, keyword: string) => {
      if (!isObject(child)) return;
      if (SAME_VALUE.has(keyword)) node.same.push(child);
      queue.push({ schema: child, pointer: at, resource });
    };
    for (const keyword of ONE) visit(schema[keyword], `${pointer}/${keyword}`, keyword);
    for (const keyword of MANY) {
      const list = schema[keyword];
      if (!Array.isArray(list)) continue;
      for (const [i, child] of list.entries()) visit(child, `${pointer}/${keyword}/${i}`, keyword);
    }
    for (const keyword of MAP) {
      const map = schema[keyword];
      if (!isObject(map)) continue;
      for (const [key, child] of Object.entries(map)) {
        if (keyword === "properties" && badName === undefined && INVISIBLE.test(key))
          badName = `property name ${JSON.stringify(key).slice(0, 40)}`;
        visit(child, `${pointer}/${keyword}/${escapePointer(key)}`, keyword);
      }
    }
    const required = schema.required;
    if (badName === undefined && Array.isArray(required)) {
      const bad = required.find((r) => typeof r === "string" && INVISIBLE.test(r));
      if (bad !== undefined) badName = `required name ${JSON.stringify(bad).slice(0, 40)}`;
    }
  }
  return { nodes, anchors, ...(badName ? { badName } : {}) };
}

/** The subschema a reference names, when it points inside the document (`#`, `#/…`, `#anchor`). */
function resolveLocal(
  ref: string,
  node: Node,
  root: Schema,
  anchors: Map<string, Schema>,
): Schema | undefined {
  let rest = ref;
  const rootId = root.$id;
  if (typeof rootId === "string" && rootId !== "" && rest.startsWith(rootId))
    rest = rest.slice(rootId.length);
  if (!rest.startsWith("#") && rest !== "") return undefined;
  let fragment = rest.slice(1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    return undefined;
  }
  const base = rest === ref ? node.resource : root;
  if (fragment === "" || fragment === "/") return base;
  if (!fragment.startsWith("/")) return anchors.get(fragment);
  let at: unknown = base;
  for (const raw of fragment.slice(1).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof at !== "object" || at === null || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return isObject(at) ? at : undefined;
}

/**
 * A chain of references and same-value keywords (allOf, not, if, …) that returns to where
 * it started without descending into a property or item: checking any value against such a
 * schema never ends. Returns the loop as pointers (`#/$defs/a → #/$defs/b → #/$defs/a`).
 */
function referenceLoop(root: Schema): { loop?: string; badName?: string } {
  const { nodes, anchors, badName } = walk(root);
  const edges = new Map<Schema, Schema[]>();
  for (const node of nodes.values()) {
    const out = [...node.same];
    for (const key of ["$ref", "$dynamicRef", "$recursiveRef"]) {
      const ref = node.schema[key];
      if (typeof ref !== "string") continue;
      const target = resolveLocal(ref, node, root, anchors);
      if (target) out.push(target);
    }
    edges.set(node.schema, out);
  }
  const pointerOf = (s: Schema) => `#${nodes.get(s)?.pointer ?? "?"}`;
  const state = new Map<Schema, 1 | 2>();
  for (const start of nodes.keys()) {
    if (state.has(start)) continue;
    const path: Array<{ schema: Schema; next: number }> = [{ schema: start, next: 0 }];
    state.set(start, 1);
    while (path.length > 0) {
      const top = path[path.length - 1] as { schema: Schema; next: number };
      const targets = edges.get(top.schema) ?? [];
      if (top.next >= targets.length) {
        state.set(top.schema, 2);
        path.pop();
        continue;
      }
      const target = targets[top.next++] as Schema;
      const seen = state.get(target);
      if (seen === 1) {
        const from = path.findIndex((p) => p.schema === target);
        const loop = [...path.slice(from).map((p) => p.schema), target].map(pointerOf).join(" → ");
        return { loop, ...(badName ? { badName } : {}) };
      }
      if (seen === undefined) {
        state.set(target, 1);
        path.push({ schema: target, next: 0 });
      }
    }
  }
  return badName ? { badName } : {};
}

/**
 * Why a tool schema from an untrusted source (an MCP server) cannot be used to check
 * arguments, or undefined when it can: it must be a JSON object of at most 64 KiB nesting
 * at most 64 levels, with printable property names, without a reference loop that never
 * reaches a nested value, and ajv must compile it. `which` names it in the reason
 * (`inputSchema is larger than 65536 characters`).
 */
export function toolSchemaProblem(schema: unknown, which = "inputSchema"): string | undefined {
  const checked = checkToolSchema(schema, which);
  return "problem" in checked ? checked.problem : undefined;
}

/**
 * toolSchemaProblem, returning the private copy that was checked (and compiled: later
 * validations against that object hit the validator cache at once).
 */
export function checkToolSchema(
  schema: unknown,
  which = "inputSchema",
): { schema: JsonSchema } | { problem: string } {
  if (!isObject(schema)) return { problem: `${which} is not a JSON object` };
  if (depthOver(schema, MAX_TOOL_SCHEMA_DEPTH))
    return { problem: `${which} nests deeper than ${MAX_TOOL_SCHEMA_DEPTH} levels` };
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return { problem: `${which} is not plain JSON` };
  }
  if (text.length > MAX_TOOL_SCHEMA_CHARS)
    return { problem: `${which} is larger than ${MAX_TOOL_SCHEMA_CHARS} characters (${text.length})` };
  const copy = JSON.parse(text) as Schema;
  const { loop, badName } = referenceLoop(copy);
  if (badName) return { problem: `${which} has a ${badName} with control or format characters` };
  if (loop) return { problem: `${which} has a $ref loop that never reaches a nested value (${loop})` };
  try {
    compiledValidator(copy as JsonSchema);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { problem: `${which} does not compile (${message.slice(0, 200)})` };
  }
  return { schema: copy as JsonSchema };
}
