import type { GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { type McpContentBlock, renderCallToolResult, stripControl, type ToolResult } from "./render.js";

/** Most resources, templates or prompts one listing keeps per server. */
export const MAX_LISTED_ITEMS = 1_000;
const MAX_URI = 2_048;
const MAX_NAME = 200;
const MAX_DESCRIPTION = 2_000;

/** A resource a server lists (`resources/list`), its text sanitised and capped. */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** A resource template (`resources/templates/list`): read a URI that matches it. */
export interface McpResourceTemplateInfo {
  server: string;
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A prompt a server offers (`prompts/list`). */
export interface McpPromptInfo {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required?: boolean }>;
}

/** A server's resources and templates; `complete` is false when a bound or a bad cursor cut the list. */
export interface McpResourceListing {
  resources: McpResourceInfo[];
  templates: McpResourceTemplateInfo[];
  complete: boolean;
}

/** One message of a prompt as passed on (its content block bounded like a tool result's). */
export interface McpPromptMessage {
  role: "user" | "assistant";
  content: McpContentBlock;
}

function text(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const clean = stripControl(value).trim();
  if (clean === "") return undefined;
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** A URI or name as sent, or undefined when it is not a printable string within bounds (such entries are left out). */
function exact(value: unknown, max: number): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > max) return undefined;
  return /[\p{Cc}\p{Cf}]/u.test(value) ? undefined : value;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

export function toResourceInfo(server: string, raw: unknown): McpResourceInfo | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const uri = exact(r.uri, MAX_URI);
  const name = text(r.name, MAX_NAME);
  if (uri === undefined || name === undefined) return undefined;
  return {
    server,
    uri,
    name,
    ...optional("title", text(r.title, MAX_NAME)),
    ...optional("description", text(r.description, MAX_DESCRIPTION)),
    ...optional("mimeType", text(r.mimeType, 100)),
    ...(typeof r.size === "number" && Number.isFinite(r.size) ? { size: r.size } : {}),
  };
}

export function toTemplateInfo(server: string, raw: unknown): McpResourceTemplateInfo | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const uriTemplate = exact(r.uriTemplate, MAX_URI);
  const name = text(r.name, MAX_NAME);
  if (uriTemplate === undefined || name === undefined) return undefined;
  return {
    server,
    uriTemplate,
    name,
    ...optional("title", text(r.title, MAX_NAME)),
    ...optional("description", text(r.description, MAX_DESCRIPTION)),
    ...optional("mimeType", text(r.mimeType, 100)),
  };
}

export function toPromptInfo(server: string, raw: unknown): McpPromptInfo | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const p = raw as Record<string, unknown>;
  const name = exact(p.name, MAX_NAME);
  if (name === undefined) return undefined;
  const args = Array.isArray(p.arguments) ? p.arguments : [];
  return {
    server,
    name,
    ...optional("title", text(p.title, MAX_NAME)),
    ...optional("description", text(p.description, MAX_DESCRIPTION)),
    arguments: args.flatMap((a) => {
      if (typeof a !== "object" || a === null) return [];
      const arg = a as Record<string, unknown>;
      const argName = exact(arg.name, MAX_NAME);
      if (argName === undefined) return [];
      return [
        {
          name: argName,
          ...optional("description", text(arg.description, MAX_DESCRIPTION)),
          ...(arg.required === true ? { required: true } : {}),
        },
      ];
    }),
  };
}

/**
 * resources/read as a ToolResult: each item becomes an embedded `resource` block, bounded
 * like a tool result (text over the output cap cut, a blob over the binary cap replaced by
 * a note); the summary is its text for the model.
 */
export function renderResourceContents(
  server: string,
  uri: string,
  result: ReadResourceResult,
  caps: { outputBytes: number; binaryBytes?: number },
): ToolResult {
  const items = Array.isArray(result.contents) ? result.contents : [];
  const rendered = renderCallToolResult(
    { content: items.map((resource) => ({ type: "resource", resource })) },
    { server, tool: `resources/read ${uri}`, ...caps },
  );
  return items.length === 0
    ? { ...rendered, summary: `MCP server '${server}' returned no contents for ${uri}.` }
    : rendered;
}

/**
 * prompts/get as a ToolResult: the description, then each message as `[role] text` (other
 * content described), bounded like a tool result; `data.messages` keeps the messages with
 * their content blocks bounded the same way.
 */
export function renderPrompt(
  server: string,
  name: string,
  result: GetPromptResult,
  caps: { outputBytes: number; binaryBytes?: number },
): ToolResult & {
  data: { server: string; prompt: string; description?: string; messages: McpPromptMessage[] };
} {
  const messages: McpPromptMessage[] = [];
  const lines: string[] = [];
  const description = text(result.description, MAX_DESCRIPTION);
  if (description) lines.push(description);
  for (const message of Array.isArray(result.messages) ? result.messages : []) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const one = renderCallToolResult({ content: [message.content] }, { server, tool: name, ...caps });
    const block = one.content?.[0];
    if (block) messages.push({ role, content: block });
    lines.push(`[${role}] ${one.summary}`);
  }
  const all = renderCallToolResult(
    { content: [{ type: "text", text: lines.join("\n\n") || "(empty prompt)" }] },
    { server, tool: name, ...caps },
  );
  return {
    success: true,
    summary: all.summary,
    data: { server, prompt: name, ...(description ? { description } : {}), messages },
  };
}
