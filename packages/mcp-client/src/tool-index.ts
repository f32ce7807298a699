import {
  CapgateError,
  closestMatch,
  MAX_MCP_TOOL_NAME,
  mcpCallableToolName,
  mcpToolLabel,
} from "@capgate/schema";
import { qualifyToolName } from "./routing.js";
import { toolExcludedError } from "./tool-filter.js";
import type { ExcludedTool } from "./tool-filtering.js";
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
  /** Listed tools the config's `tools` filter keeps out, by every name a call could use. */
  private readonly excluded = new Map<string, ExcludedTool>();

  constructor(
    private readonly server: string,
    readonly tools: readonly McpToolInfo[],
    skipped: readonly SkippedTool[],
    /** Tools for the MCP App only: found only for a call that says it comes from the app. */
    appTools: readonly McpToolInfo[] = [],
    excluded: readonly ExcludedTool[] = [],
  ) {
    const prefix = `${server}/`;
    const all = [...tools, ...appTools];
    for (const tool of all) this.byName.set(tool.qualifiedName.slice(prefix.length), tool);
    for (const tool of all) if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
    for (const out of excluded) {
      const callable = out.info.qualifiedName.slice(prefix.length);
      for (const name of [callable, out.info.name])
        if (!this.excluded.has(name)) this.excluded.set(name, out);
    }
    for (const skip of skipped)
      if (skip.callable !== undefined && !this.refused.has(skip.callable))
        this.refused.set(skip.callable, skip);
  }

  /** The admitted tool a call's name (after `<server>/`) refers to; an app-only one only for `app`. */
  find(tool: string, app = false): McpToolInfo | undefined {
    const found = this.byName.get(tool);
    return found && (!found.appOnly || app) ? found : undefined;
  }

  /** The admitted tool, or an `unknown_tool` error saying why there is none (nothing is sent). */
  require(tool: string, app = false): McpToolInfo {
    const found = this.byName.get(tool);
    if (found && (!found.appOnly || app)) return found;
    const out = found ? undefined : this.excluded.get(tool);
    if (out) throw toolExcludedError(this.server, out.info.name, out.why);
    throw new CapgateError("unknown_tool", `${this.refusal(tool) ?? this.noSuchTool(tool)} ${UNSENT}`, {
      property: "tool",
    });
  }

  /** Why the config's `tools` filter keeps out the tool a call's name refers to, or undefined. */
  exclusion(tool: string): string | undefined {
    return this.byName.has(tool) ? undefined : this.excluded.get(tool)?.why;
  }

  /**
   * Why capgate refuses a tool by this name although the server may have it: the name
   * itself breaks the admission rule, or the server listed it and admission refused it.
   * Undefined for an admitted tool and for a name the server never listed.
   */
  refusal(tool: string): string | undefined {
    const server = this.server;
    const found = this.byName.get(tool);
    if (found?.appOnly)
      return `MCP server '${server}' marks the tool ${mcpToolLabel(found.name)} for its app only (MCP Apps: _meta.ui.visibility without "model"): a host that renders the app may call it, the model may not.`;
    if (found) return undefined;
    const out = this.excluded.get(tool);
    if (out) return toolExcludedError(server, out.info.name, out.why).message;
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
