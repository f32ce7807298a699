import type { JsonSchema } from "./json-schema.js";
import type { CapabilityManifest, ToolManifest } from "./manifest.js";

function typeLabel(schema: JsonSchema | boolean | undefined): string {
  if (schema === undefined || typeof schema === "boolean") return "any";
  if (Array.isArray(schema.enum)) return "enum";
  if (schema.oneOf || schema.anyOf) return "any";
  if ("const" in schema) return typeof schema.const === "string" ? "string" : "any";
  const t = schema.type;
  if (Array.isArray(t)) return t.map((x) => (x === "array" ? "any[]" : x)).join(" | ");
  switch (t) {
    case "array": {
      const items = Array.isArray(schema.items) ? undefined : schema.items;
      const inner = typeLabel(items);
      return inner.includes(" ") ? "any[]" : `${inner}[]`;
    }
    case "object":
      return "object";
    case undefined:
      return schema.properties ? "object" : "any";
    default:
      return t;
  }
}

/**
 * One line with the exact argument names and types the dispatcher validates against:
 * required first, optional marked `?` — `fs.read(path: string, offset?: integer, limit?: integer)`.
 * Composite types collapse (`enum`, `any`, `object`) so the line stays one line.
 */
export function signatureFromSchema(name: string, schema: JsonSchema): string {
  const props = schema.properties ?? {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const keys = Object.keys(props);
  const ordered = [...keys.filter((k) => required.has(k)), ...keys.filter((k) => !required.has(k))];
  const parts = ordered.map((k) => `${k}${required.has(k) ? "" : "?"}: ${typeLabel(props[k])}`);
  return `${name}(${parts.join(", ")})`;
}

/**
 * A manifest with each tool's one-line `signature` beside it — what `capgate capabilities
 * --json` and the server's `GET /capabilities` give, the same line search hits and
 * capability_load show, so a client needs no renderer of its own.
 */
export function withSignatures<M extends CapabilityManifest>(
  manifest: M,
): M & { tools: Array<ToolManifest & { signature: string }> } {
  return {
    ...manifest,
    tools: manifest.tools.map((tool) => ({
      ...tool,
      signature: signatureFromSchema(tool.name, tool.inputSchema),
    })),
  };
}
