import {
  CapgateError,
  closestMatch,
  MAX_MCP_TOOL_NAME,
  mcpCallableToolName,
  mcpToolLabel,
} from "@capgate/schema";
import { qualifyToolName } from "./routing.js";
import type { McpToolInfo, SkippedTool } from "./tool-list.js";

/** Names quoted in a "no such tool" message (the rest are counted). */
const NAMES_SHOWN = 20;
const UNSENT = "Nothing was sent to the server.";

/**
 * One server's admitted tools by the names a call may use (the callable name, or the
 * server's own), and the refused ones by the name a call would use: the only place a call
 * learns whether its tool exists. A name that is not admitted is refused with why.
 */
export class ToolIndex {
  private readonly byName = new Map<string, McpToolInfo>();
  private readonly refused = new Map<string, SkippedTool>();

  constructor(
    private readonly server: string,
    readonly tools: readonly McpToolInfo[],
    skipped: readonly SkippedTool[],
  ) {
    const prefix = `${server}/`;
    for (const tool of tools) this.byName.set(tool.qualifiedName.slice(prefix.length), tool);
    for (const tool of tools) if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
    for (const skip of skipped)
      if (skip.callable !== undefined && !this.refused.has(skip.callable))
        this.refused.set(skip.callable, skip);
  }

  /** The admitted tool a call's name (after `<server>/`) refers to. */
  find(tool: string): McpToolInfo | undefined {
    return this.byName.get(tool);
  }

  /** The admitted tool, or an `unknown_tool` error saying why there is none (nothing is sent). */
  require(tool: string): McpToolInfo {
    const found = this.byName.get(tool);
    if (found) return found;
    throw new CapgateError("unknown_tool", `${this.refusal(tool) ?? this.noSuchTool(tool)} ${UNSENT}`, {
      property: "tool",
    });
  }

  /**
   * Why capgate refuses a tool by this name although the server may have it: the name
   * itself breaks the admission rule, or the server listed it and admission refused it.
   * Undefined for an admitted tool and for a name the server never listed.
   */
  refusal(tool: string): string | undefined {
    if (this.byName.has(tool)) return undefined;
    const server = this.server;
    if (tool.length > MAX_MCP_TOOL_NAME || mcpCallableToolName(tool) === undefined) {
      const why =
        tool.length > MAX_MCP_TOOL_NAME
          ? `it is longer than ${MAX_MCP_TOOL_NAME} characters`
          : "it contains control or format characters";
      return `${mcpToolLabel(tool)} is not a tool name capgate admits for MCP server '${server}': ${why}. Tools with such names are never listed or called.`;
    }
    const refused = this.refused.get(mcpCallableToolName(tool) as string);
    if (refused)
      return `MCP server '${server}' lists the tool ${refused.name}, but capgate does not admit it: ${refused.reason}. It cannot be called through capgate.`;
    return undefined;
  }

  /** A name the server does not list: a suggestion and a bounded sample of the names it does. */
  private noSuchTool(tool: string): string {
    const server = this.server;
    const callables = this.tools.map((t) => t.qualifiedName.slice(server.length + 1));
    const guess = closestMatch(tool, callables);
    const shown = callables.slice(0, NAMES_SHOWN).join(", ");
    const rest = callables.length > NAMES_SHOWN ? `, … (${callables.length} in all)` : "";
    return `MCP server '${server}' has no tool ${mcpToolLabel(tool)}${guess ? `; did you mean '${qualifyToolName(server, guess)}'?` : "."} Its tools: ${callables.length > 0 ? `${shown}${rest}` : "none"}; capability_search finds them by what they do.`;
  }
}
