import type { McpToolInfo } from "@capgate/mcp-client";
import { type JsonSchema, signatureFromSchema } from "@capgate/schema";

/** Longest description shown per tool in the summary (the full text is in `data`). */
const SUMMARY_DESCRIPTION_CHARS = 300;

/** A tool as mcp.list_tools returns it in `data`. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  risk: McpToolInfo["risk"];
}

/**
 * True when the one-line signature hides something the model needs to build arguments:
 * enum values, nested objects, arrays of objects, unions, untyped properties.
 */
function signatureIsLossy(schema: JsonSchema): boolean {
  for (const prop of Object.values(schema.properties ?? {})) {
    if (typeof prop !== "object" || prop === null) return true;
    if (prop.enum || prop.oneOf || prop.anyOf || prop.type === undefined || prop.type === "object")
      return true;
    if (prop.type === "array") {
      const items = prop.items;
      if (typeof items !== "object" || items === null || Array.isArray(items)) return true;
      if (items.type === "object" || items.type === "array" || items.enum) return true;
    }
  }
  return false;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function callExample(target: { command: string; args?: readonly string[] }): string {
  const example = {
    command: target.command,
    ...(target.args === undefined ? {} : { args: target.args }),
    tool: "<name>",
    arguments: {},
  };
  return JSON.stringify(example).replace(/"arguments":\{\}/, '"arguments":{…}');
}

/**
 * What the model reads from list_tools: one signature line per tool (the server's own
 * names, as mcp.call takes them), its description, and the JSON schema where the signature
 * alone would not say how to build the arguments.
 */
export function renderToolList(
  where: string,
  callTarget: { command: string; args?: readonly string[] },
  tools: readonly McpToolInfo[],
): { summary: string; tools: ListedTool[] } {
  const listed = tools.map(
    (t): ListedTool => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      risk: t.risk,
    }),
  );
  if (listed.length === 0) return { summary: `${where} lists no tools.`, tools: listed };
  const lines = [
    `${where} has ${listed.length} tool${listed.length === 1 ? "" : "s"}; call one with mcp.call ${callExample(callTarget)}:`,
  ];
  for (const t of listed) {
    const description = oneLine(t.description, SUMMARY_DESCRIPTION_CHARS);
    lines.push(`- ${signatureFromSchema(t.name, t.inputSchema)}${description ? ` — ${description}` : ""}`);
    if (signatureIsLossy(t.inputSchema)) {
      // `$schema` tells the model nothing about the arguments.
      const { $schema: _dialect, ...schema } = t.inputSchema as JsonSchema & { $schema?: unknown };
      lines.push(`  schema: ${JSON.stringify(schema)}`);
    }
  }
  return { summary: lines.join("\n"), tools: listed };
}
