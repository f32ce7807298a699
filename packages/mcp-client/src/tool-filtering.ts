import { type McpToolNames, type McpToolRules, toolExclusion } from "./tool-filter.js";
import type { McpToolInfo } from "./tool-list.js";

/** A listed tool the entry's filter keeps out, with why. */
export interface ExcludedTool {
  info: McpToolInfo;
  why: string;
}

/** The names a glob sees for a listed tool. */
export function namesOf(info: McpToolInfo): McpToolNames {
  return { name: info.name, callable: info.qualifiedName.slice(info.server.length + 1) };
}

/** A listing split by the entry's filter: what stays, and what the config keeps out. */
export function filterTools(
  rules: McpToolRules,
  tools: readonly McpToolInfo[],
): { kept: McpToolInfo[]; excluded: ExcludedTool[] } {
  if (!rules.tools) return { kept: [...tools], excluded: [] };
  const kept: McpToolInfo[] = [];
  const excluded: ExcludedTool[] = [];
  for (const info of tools) {
    const why = toolExclusion(rules, namesOf(info));
    if (why === undefined) kept.push(info);
    else excluded.push({ info, why });
  }
  return { kept, excluded };
}
