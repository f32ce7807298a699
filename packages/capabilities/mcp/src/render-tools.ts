import type { McpToolInfo } from "@capgate/mcp-client";
import { fitListing, type JsonSchema, signatureFromSchema } from "@capgate/schema";

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

/** Most characters of list_tools' summary; every tool is still in `data.tools` and callable. */
export const LIST_TOOLS_CHARS = 16_000;

/**
 * What the model reads from list_tools: one signature line per tool (the server's own
 * names, as mcp.call takes them), its description, and the JSON schema where the signature
 * alone would not say how to build the arguments — within LIST_TOOLS_CHARS characters
 * (a server may list thousands of tools: the rest are counted, with how to find them).
 */
export function renderToolList(
  where: string,
  callTarget: { command: string; args?: readonly string[] },
  tools: readonly McpToolInfo[],
  options: { server?: string; budget?: number } = {},
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
  // One entry per tool: its signature line, and its schema on a second line where needed.
  const entries = listed.map((t) => {
    const description = oneLine(t.description, SUMMARY_DESCRIPTION_CHARS);
    const line = `- ${signatureFromSchema(t.name, t.inputSchema)}${description ? ` — ${description}` : ""}`;
    if (!signatureIsLossy(t.inputSchema)) return line;
    // `$schema` tells the model nothing about the arguments.
    const { $schema: _dialect, ...schema } = t.inputSchema as JsonSchema & { $schema?: unknown };
    return `${line}\n  schema: ${JSON.stringify(schema)}`;
  });
  const search = options.server
    ? `, or find them by what they do with capability_search {"query":"mcp:${options.server} <what the tool does>"}`
    : "";
  const { text } = fitListing(
    [
      {
        head: [
          `${where} has ${listed.length} tool${listed.length === 1 ? "" : "s"}; call one with mcp.call ${callExample(callTarget)}:`,
        ],
        items: entries,
        more: (omitted) =>
          `… ${omitted} more tools not shown (${listed.length} in all): mcp.call takes any of them by its name${search}.`,
      },
    ],
    { budget: options.budget ?? LIST_TOOLS_CHARS, maxLine: 8_000 },
  );
  return { summary: text, tools: listed };
}
