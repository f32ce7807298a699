import type { JsonSchema } from "./json-schema.js";
import { mcpCallableToolName } from "./manifest.js";
import { checkToolSchema } from "./schema-checks.js";

/** Longest tool name an MCP server may use (before whitespace is mapped to `_`). */
export const MAX_MCP_TOOL_NAME = 128;

/** A tool of an MCP server that capgate lists and calls. */
export interface AdmittedMcpTool {
  /** The server's own name, sent verbatim on calls. */
  name: string;
  /** The name a model calls it by after `<server>/` (`mcpCallableToolName`). */
  callable: string;
  /** A checked private copy of its inputSchema (`{ "type": "object" }` when it sent none). */
  inputSchema: JsonSchema;
  /** A checked private copy of its outputSchema, when it declared a usable one. */
  outputSchema?: JsonSchema;
  /** Why a declared outputSchema is not used (structuredContent then goes unchecked, with a warning). */
  outputSchemaProblem?: string;
  /** The entry as the server sent it: description, title, annotations (untrusted text; sanitise before showing). */
  entry: Readonly<Record<string, unknown>>;
}

/** A tool of an MCP server that capgate neither lists nor calls, and why. */
export interface RefusedMcpTool {
  /** The server's own name, when it sent a string (may hold control characters: show `label`). */
  name?: string;
  /** The name a call would use, when the server's name maps to one. */
  callable?: string;
  /** The name as JSON (escaped), cut to 80 characters: safe to print. */
  label: string;
  reason: string;
}

/**
 * An untrusted name as it may be printed: JSON-quoted with every control or format
 * character escaped (JSON alone leaves U+202E and zero-width characters raw), cut to 80
 * characters.
 */
export function mcpToolLabel(name: unknown): string {
  const quoted = (JSON.stringify(typeof name === "string" ? name : String(name)) ?? "").replace(
    /[\p{Cc}\p{Cf}]/gu,
    (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`,
  );
  return quoted.length > 80 ? `${quoted.slice(0, 79)}…` : quoted;
}

/**
 * The one rule for which tools of an MCP server exist in capgate — for search, load,
 * listing and calling alike, so no surface can offer or call a tool another refuses.
 * A tool is admitted when its entry is an object; its name is a string of 1 to 128
 * characters that maps (whitespace runs → `_`) to a name without control or format
 * characters that no earlier tool of the list took; and its inputSchema passes
 * `toolSchemaProblem` (a JSON object of at most 64 KiB and 64 levels, printable property
 * names, no reference loop, compiled by ajv). A schema capgate cannot check arguments
 * against refuses the tool: nothing is ever sent unchecked. An unusable outputSchema only
 * drops the result check.
 */
export function admitMcpTools(raw: readonly unknown[]): {
  admitted: AdmittedMcpTool[];
  refused: RefusedMcpTool[];
} {
  const admitted: AdmittedMcpTool[] = [];
  const refused: RefusedMcpTool[] = [];
  const taken = new Set<string>();
  for (const item of raw) {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      refused.push({ label: mcpToolLabel(item), reason: "tool entry is not an object" });
      continue;
    }
    const entry = item as Record<string, unknown>;
    const name = entry.name;
    if (typeof name !== "string" || name.length === 0) {
      refused.push({ label: mcpToolLabel(name), reason: "tool name is missing or not a string" });
      continue;
    }
    const refuse = (reason: string, callable?: string) =>
      refused.push({
        name,
        ...(callable !== undefined ? { callable } : {}),
        label: mcpToolLabel(name),
        reason,
      });
    if (name.length > MAX_MCP_TOOL_NAME) {
      refuse(`tool name is longer than ${MAX_MCP_TOOL_NAME} characters`);
      continue;
    }
    const callable = mcpCallableToolName(name);
    if (callable === undefined) {
      refuse("tool name contains control or format characters");
      continue;
    }
    if (taken.has(callable)) {
      refuse(
        callable === name
          ? "duplicate tool name"
          : `tool name maps to ${JSON.stringify(callable)}, which another tool already has`,
        callable,
      );
      continue;
    }
    const input = checkToolSchema(entry.inputSchema === undefined ? { type: "object" } : entry.inputSchema);
    if ("problem" in input) {
      refuse(input.problem, callable);
      continue;
    }
    taken.add(callable);
    const tool: AdmittedMcpTool = { name, callable, inputSchema: input.schema, entry };
    if (entry.outputSchema !== undefined) {
      const output = checkToolSchema(entry.outputSchema, "outputSchema");
      if ("problem" in output) tool.outputSchemaProblem = output.problem;
      else tool.outputSchema = output.schema;
    }
    admitted.push(tool);
  }
  return { admitted, refused };
}
