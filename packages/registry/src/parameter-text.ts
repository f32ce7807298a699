import type { ToolManifest } from "@capgate/schema";

const PARAMETER_TEXT_MAX = 1000;

/**
 * The words of a tool's arguments: each top-level property's name and description
 * (`path: the file to read`), at most 1,000 characters in all, so an enormous schema from
 * an MCP server costs no more to index than a long description.
 */
export function parameterText(tool: ToolManifest): string {
  return propertyText(tool.inputSchema);
}

/**
 * The words of what a tool returns (its `outputSchema`'s top-level properties, as for
 * arguments): an MCP tool that declares `{ incidents, total }` is about incidents even when
 * its description is terse.
 */
export function outputText(tool: ToolManifest): string {
  return tool.outputSchema ? propertyText(tool.outputSchema) : "";
}

function propertyText(schema: ToolManifest["inputSchema"]): string {
  const props = schema.properties;
  if (typeof props !== "object" || props === null) return "";
  let out = "";
  for (const [name, schema] of Object.entries(props)) {
    const d =
      typeof schema === "object" && schema !== null && typeof schema.description === "string"
        ? schema.description
        : "";
    out += `${name}${d === "" ? "" : `: ${d}`}\n`;
    if (out.length >= PARAMETER_TEXT_MAX) return out.slice(0, PARAMETER_TEXT_MAX);
  }
  return out;
}
