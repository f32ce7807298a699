import { type JsonSchema, signatureFromSchema, type ToolManifest } from "@capgate/schema";

/** Nesting rendered before a type becomes `unknown` (keeps one tool's declaration readable). */
const MAX_TYPE_DEPTH = 5;
/** Most members of an enum or union written out. */
const MAX_UNION = 24;
const DESCRIPTION_CHARS = 400;
const PROPERTY_DESCRIPTION_CHARS = 160;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The types every declaration uses: what a call resolves to and what a failed one throws. */
export const REPLY_DECLARATIONS = `/** What a successful call resolves to. */
interface ToolReply<Structured = unknown> {
  /** The text the tool would show the model. */
  summary: string;
  /** Details for programs (paths, entries, exit codes…); the shape is the tool's own. */
  data?: unknown;
  /** The structured result, for tools that declare an output schema. */
  structuredContent?: Structured;
}

/** A call that was refused or failed throws one of these; \`code\` and \`property\` are the gate's. */
interface ToolError extends Error {
  /** e.g. "invalid_arguments", "unknown_tool", "policy_denied", "tool_failed". */
  code: string;
  tool: string;
  /** The argument to blame, e.g. "arguments.path". */
  property?: string;
  /** For code "tool_failed": what the tool returned. */
  result?: ToolReply;
}

/** console.log lines are returned with the result (capped); nothing else is printed anywhere. */
declare const console: { log(...values: unknown[]): void; error(...values: unknown[]): void };`;

/**
 * TypeScript declarations of `tools` for the given tools: one method per tool, its
 * argument object rendered from the input schema (names and optionality as in the one-line
 * signature, which heads its comment), its result typed from the output schema when the
 * tool declares one. `capability.verb` names become `tools.capability.verb(args)`; other
 * names (MCP tools `server/tool`) are overloads of `tools.call(name, args)`.
 */
export function toolDeclarations(tools: readonly ToolManifest[]): string {
  const groups = new Map<string, string[]>();
  const overloads: string[] = [];
  const overloaded: string[] = [];
  for (const tool of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const method = methodOf(tool.name);
    const args = argumentsType(tool.inputSchema);
    const reply = tool.outputSchema ? `ToolReply<${typeOf(tool.outputSchema, 1)}>` : "ToolReply";
    const about = `${signatureFromSchema(tool.name, tool.inputSchema)} — ${tool.description}`;
    const params = `args${args.optional ? "?" : ""}: ${args.type}`;
    if (method) {
      const lines = groups.get(method.capability) ?? [];
      lines.push(
        `${docComment(about, "    ")}\n    ${propertyKey(method.verb)}(${params}): Promise<${reply}>;`,
      );
      groups.set(method.capability, lines);
    } else {
      overloaded.push(JSON.stringify(tool.name));
      overloads.push(
        `${docComment(about, "  ")}\n  call(name: ${JSON.stringify(tool.name)}, ${params}): Promise<${reply}>;`,
      );
    }
  }
  const members: string[] = [];
  for (const [capability, lines] of groups)
    members.push(`  ${propertyKey(capability)}: {\n${lines.join("\n")}\n  };`);
  // The catch-all takes any other name; a name declared above must match its own overload.
  const other = overloaded.length > 0 ? `N extends ${overloaded.join(" | ")} ? never : N` : "N";
  members.push(
    ...overloads,
    '  /** Any tool by its full name, e.g. tools.call("fs.read", { path: "a.txt" }) or an MCP tool "server/tool". */',
    `  call<N extends string>(name: ${other}, args?: Record<string, unknown>): Promise<ToolReply>;`,
  );
  return `${REPLY_DECLARATIONS}\n\ndeclare const tools: {\n${members.join("\n")}\n};\n`;
}

/** `fs.read` → tools.fs.read; names that are not `identifier.identifier` (or whose capability is `call`) go through tools.call. */
function methodOf(name: string): { capability: string; verb: string } | undefined {
  const dot = name.indexOf(".");
  if (dot <= 0) return undefined;
  const capability = name.slice(0, dot);
  const verb = name.slice(dot + 1);
  if (!IDENTIFIER.test(capability) || !IDENTIFIER.test(verb) || capability === "call" || verb === "then")
    return undefined;
  return { capability, verb };
}

function argumentsType(schema: JsonSchema): { type: string; optional: boolean } {
  const required = Array.isArray(schema.required) ? schema.required.length : 0;
  return { type: objectType(schema, 0, true), optional: required === 0 };
}

/** A JSON Schema as a TypeScript type, bounded in depth and width. */
export function typeOf(schema: JsonSchema | boolean | undefined, depth: number): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (depth > MAX_TYPE_DEPTH) return "unknown";
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) {
    if (schema.enum.length > MAX_UNION) return baseType(schema, depth);
    return union(schema.enum.map(literal));
  }
  const variants = (schema.oneOf ?? schema.anyOf) as Array<JsonSchema | boolean> | undefined;
  if (Array.isArray(variants)) {
    if (variants.length > MAX_UNION) return "unknown";
    return union(variants.map((v) => typeOf(v, depth + 1)));
  }
  return baseType(schema, depth);
}

function baseType(schema: JsonSchema, depth: number): string {
  const t = schema.type;
  if (Array.isArray(t)) return union(t.map((one) => baseType({ ...schema, type: one }, depth)));
  switch (t) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const items = Array.isArray(schema.items)
        ? undefined
        : (schema.items as JsonSchema | boolean | undefined);
      const inner = typeOf(items, depth + 1);
      return /[|&\s]/.test(inner) && !inner.startsWith("{") ? `Array<${inner}>` : `${inner}[]`;
    }
    case "object":
      return objectType(schema, depth, false);
    case undefined:
      return schema.properties ? objectType(schema, depth, false) : "unknown";
    default:
      return "unknown";
  }
}

function objectType(schema: JsonSchema, depth: number, documented: boolean): string {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema | boolean>;
  const keys = Object.keys(props);
  const extra = schema.additionalProperties;
  if (keys.length === 0) {
    if (extra === false) return "{}";
    return `Record<string, ${typeof extra === "object" ? typeOf(extra as JsonSchema, depth + 1) : "unknown"}>`;
  }
  if (depth > MAX_TYPE_DEPTH) return "Record<string, unknown>";
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  // The signature's order: required first, then optional, each in schema order.
  const ordered = [...keys.filter((k) => required.has(k)), ...keys.filter((k) => !required.has(k))];
  const indent = "  ".repeat(depth + 3);
  const members = ordered.map((key) => {
    const prop = props[key];
    const description =
      documented && typeof prop === "object" && typeof prop.description === "string"
        ? `${docComment(clip(prop.description, PROPERTY_DESCRIPTION_CHARS), indent)}\n`
        : "";
    return `${description}${indent}${propertyKey(key)}${required.has(key) ? "" : "?"}: ${typeOf(prop, depth + 1)};`;
  });
  // Open objects take more keys; `unknown` keeps the index signature compatible with every member.
  if (extra !== false) members.push(`${indent}[key: string]: unknown;`);
  return `{\n${members.join("\n")}\n${"  ".repeat(depth + 2)}}`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.length === 0 ? "never" : unique.join(" | ");
}

function literal(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return JSON.stringify(value);
  return "unknown";
}

function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function docComment(text: string, indent: string): string {
  const safe = clip(text, DESCRIPTION_CHARS).replaceAll("*/", "*\\/").replace(/\s+/g, " ").trim();
  return `${indent}/** ${safe} */`;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
