import { CapgateError, describeIssues, signatureFromSchema, validate } from "@capgate/schema";
import type { ToolResult } from "./render.js";
import type { McpToolInfo } from "./tool-list.js";

/** An outputSchema capgate cannot use: structuredContent goes unchecked, and the result says so. */
export interface SchemaWarning {
  server: string;
  tool: string;
  /** Which schema: only an outputSchema can be left unused (a tool whose inputSchema is unusable is not admitted). */
  schema: "inputSchema" | "outputSchema";
  message: string;
}

/**
 * Checks around one MCP call of an admitted tool: the arguments validated against its
 * `inputSchema` before anything is sent (the same `invalid_arguments` error, naming
 * `arguments.<path>`, as native tools), and structuredContent validated against its
 * `outputSchema` afterwards (a mismatch is added to the result, never hidden or turned into
 * a failure). An outputSchema admission could not use is reported once per server and tool
 * (`onWarning`) and noted on each result.
 */
export class CallChecks {
  private readonly reported = new Set<string>();

  constructor(private readonly onWarning?: (warning: SchemaWarning) => void) {}

  /** Throws `invalid_arguments` naming the property. Admitted schemas compile; one that fails anyway refuses the call. */
  checkArguments(info: McpToolInfo, args: Record<string, unknown>): void {
    const checked = validate(info.inputSchema, args);
    if (checked.ok) return;
    const { property, text } = describeIssues(checked.errors, { root: "arguments" });
    throw new CapgateError(
      "invalid_arguments",
      `Invalid arguments for ${info.qualifiedName}: ${text} Signature: ${signatureFromSchema(info.qualifiedName, info.inputSchema)}. Nothing was sent to the server.`,
      { property },
    );
  }

  /** The result with a note when structuredContent does not match the tool's outputSchema, or that schema is unusable. */
  checkResult(info: McpToolInfo, result: ToolResult): ToolResult {
    const notes: string[] = [];
    const problems: string[] = [];
    const schema = info.outputSchema;
    if (info.outputSchemaProblem && result.success) notes.push(`warning: ${this.unusable(info)}`);
    else if (schema && result.success) {
      if (result.structuredContent === undefined) {
        problems.push("the tool declares an outputSchema but returned no structuredContent");
      } else {
        const checked = validate(schema, result.structuredContent);
        if (!checked.ok)
          problems.push(
            `structuredContent does not match the tool's outputSchema: ${describeIssues(checked.errors, { under: "structuredContent" }).text}`,
          );
      }
    }
    if (notes.length === 0 && problems.length === 0) return result;
    const data = (typeof result.data === "object" && result.data !== null ? result.data : {}) as Record<
      string,
      unknown
    >;
    return {
      ...result,
      summary: [result.summary, ...notes, ...problems.map((p) => `warning: ${p}`)].join("\n"),
      data: {
        ...data,
        ...(notes.length > 0 ? { schemaWarnings: notes.map((n) => n.replace(/^warning: /, "")) } : {}),
        ...(problems.length > 0 ? { outputSchemaProblems: problems } : {}),
      },
    };
  }

  /** The warning for an unusable outputSchema (reported once per server and tool). */
  private unusable(info: McpToolInfo): string {
    const message = `the ${info.outputSchemaProblem} (tool ${info.qualifiedName}); structuredContent was not checked`;
    const key = `${info.server}\u0000${info.name}`;
    if (!this.reported.has(key)) {
      this.reported.add(key);
      this.onWarning?.({ server: info.server, tool: info.name, schema: "outputSchema", message });
    }
    return message;
  }
}
