import {
  CapgateError,
  compiledValidator,
  describeIssues,
  type JsonSchema,
  signatureFromSchema,
  validate,
} from "@capgate/schema";
import type { ToolResult } from "./render.js";
import type { McpToolInfo } from "./tool-list.js";

/** A schema of a server's tool that ajv cannot compile: the call goes through unchecked, and this says so. */
export interface SchemaWarning {
  server: string;
  tool: string;
  /** Which schema: the arguments' or the structured result's. */
  schema: "inputSchema" | "outputSchema";
  message: string;
}

/**
 * Checks around one MCP call, from the server's own tool list: the callable name mapped
 * back to the server's name, the arguments validated against `inputSchema` before anything
 * is sent (the same `invalid_arguments` error, naming `arguments.<path>`, as native tools),
 * and structuredContent validated against `outputSchema` afterwards (a mismatch is added to
 * the result, never hidden or turned into a failure). A schema that does not compile is
 * reported once per server and tool (`onWarning`), and the call goes through unchecked.
 */
export class CallChecks {
  private readonly reported = new Set<string>();

  constructor(private readonly onWarning?: (warning: SchemaWarning) => void) {}

  /** The listed tool a callable name (`tool` after `<server>/`) refers to. */
  find(tools: readonly McpToolInfo[], server: string, tool: string): McpToolInfo | undefined {
    const qualified = `${server}/${tool}`;
    return tools.find((t) => t.qualifiedName === qualified) ?? tools.find((t) => t.name === tool);
  }

  /** Throws `invalid_arguments` naming the property; returns a warning when the schema cannot be checked. */
  checkArguments(info: McpToolInfo, args: Record<string, unknown>): SchemaWarning | undefined {
    const compiled = this.compile(info, "inputSchema", info.inputSchema);
    if (compiled !== true) return compiled;
    const checked = validate(info.inputSchema, args);
    if (checked.ok) return undefined;
    const { property, text } = describeIssues(checked.errors, { root: "arguments" });
    throw new CapgateError(
      "invalid_arguments",
      `Invalid arguments for ${info.qualifiedName}: ${text} Signature: ${signatureFromSchema(info.qualifiedName, info.inputSchema)}. Nothing was sent to the server.`,
      { property },
    );
  }

  /** The result with a note when structuredContent does not match the tool's outputSchema. */
  checkResult(info: McpToolInfo, result: ToolResult, warning: SchemaWarning | undefined): ToolResult {
    const notes: string[] = [];
    const problems: string[] = [];
    if (warning) notes.push(`warning: ${warning.message}`);
    const schema = info.outputSchema;
    if (schema && result.success) {
      const compiled = this.compile(info, "outputSchema", schema);
      if (compiled !== true) notes.push(`warning: ${compiled.message}`);
      else if (result.structuredContent === undefined) {
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

  /** true when the schema compiles; otherwise the warning (reported once per server, tool and schema). */
  private compile(
    info: McpToolInfo,
    which: SchemaWarning["schema"],
    schema: JsonSchema,
  ): true | SchemaWarning {
    try {
      compiledValidator(schema);
      return true;
    } catch (error) {
      const warning: SchemaWarning = {
        server: info.server,
        tool: info.name,
        schema: which,
        message: `the ${which} of ${info.qualifiedName} does not compile (${(error as Error).message}); ${which === "inputSchema" ? "the arguments were sent unchecked" : "structuredContent was not checked"}`,
      };
      const key = `${info.server}\u0000${info.name}\u0000${which}`;
      if (!this.reported.has(key)) {
        this.reported.add(key);
        this.onWarning?.(warning);
      }
      return warning;
    }
  }
}
