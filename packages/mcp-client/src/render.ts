import { type ContentAnnotations, type ContentBlock, type ToolResult, truncateMiddle } from "@capgate/schema";

/** MCP content annotations (audience, priority, lastModified, …), kept as sent. */
export type McpContentAnnotations = ContentAnnotations;

/**
 * One MCP content block (text, image, audio, resource_link, embedded resource) with its
 * `annotations` and `_meta`, as the server sent it — the same type as @capgate/tools'
 * ToolContent (both are @capgate/schema's ContentBlock). A block that does not have its
 * type's required fields is passed on as a text block describing it, so consumers can
 * rely on the shapes.
 */
export type McpContentBlock = ContentBlock;

/** What every tool call returns: @capgate/schema's ToolResult, the one every capgate host reads. */
export type { ToolResult };

/** Largest summary (and text item, structured content) kept from one call. */
export const DEFAULT_OUTPUT_BYTES = 64 * 1024;

/** Largest base64 payload of one image/audio/blob block passed on in `content` (default 16 MiB, the message limit). */
export const DEFAULT_BINARY_BYTES = 16 * 1024 * 1024;

/** One content item as kept in `data` (binary payloads over the cap are dropped). */
export interface RenderedContent {
  type: string;
  text?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  /** base64 payload of an image/audio/blob item, when within the cap. */
  data?: string;
  /** Decoded size of a binary payload. */
  bytes?: number;
  truncated?: boolean;
}

/** `ToolResult.data` of an MCP call. */
export interface McpCallData {
  server: string;
  tool: string;
  isError: boolean;
  content: RenderedContent[];
  structuredContent?: unknown;
  /** True when the summary, a text item or structured content was cut to the output cap. */
  truncated: boolean;
}

/** The parts of an MCP CallToolResult this renderer reads (kept loose: servers send what they send). */
export interface CallToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

// ANSI CSI / OSC sequences, then remaining C0/C1 controls except tab and newline: server
// text goes to a model and often to a terminal, where these only hide or forge output.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Remove terminal escapes and control characters (tab and newline stay; CRLF becomes LF). */
export function stripControl(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(ANSI, "").replace(CONTROL, "");
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function renderItem(item: unknown, cap: number): { line: string; kept: RenderedContent; cut: boolean } {
  if (typeof item !== "object" || item === null)
    return { line: "[malformed content item]", kept: { type: "unknown" }, cut: false };
  const it = item as Record<string, unknown>;
  const type = str(it.type) ?? "unknown";
  switch (type) {
    case "text": {
      const raw = str(it.text) ?? "";
      const cut = truncateMiddle(raw, cap);
      return {
        line: raw,
        kept: { type, text: cut.text, ...(cut.truncated ? { truncated: true } : {}) },
        cut: cut.truncated,
      };
    }
    case "image":
    case "audio": {
      const mimeType = str(it.mimeType) ?? "application/octet-stream";
      const bytes = base64Bytes(it.data);
      const within = typeof it.data === "string" && it.data.length <= cap;
      return {
        line: `[${type}: ${mimeType}, ${bytes} bytes]`,
        kept: { type, mimeType, bytes, ...(within ? { data: it.data as string } : { truncated: true }) },
        cut: !within,
      };
    }
    case "resource_link": {
      const uri = str(it.uri) ?? "";
      const name = str(it.name) ?? uri;
      const description = str(it.description);
      return {
        line: `[resource link: ${name} <${uri}>]${description ? ` ${description}` : ""}`,
        kept: { type, uri, name, ...(str(it.mimeType) ? { mimeType: str(it.mimeType) } : {}) },
        cut: false,
      };
    }
    case "resource": {
      const res = (typeof it.resource === "object" && it.resource !== null ? it.resource : {}) as Record<
        string,
        unknown
      >;
      const uri = str(res.uri) ?? "";
      const mimeType = str(res.mimeType);
      const text = str(res.text);
      if (text !== undefined) {
        const cut = truncateMiddle(text, cap);
        return {
          line: `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}]\n${text}`,
          kept: {
            type,
            uri,
            ...(mimeType ? { mimeType } : {}),
            text: cut.text,
            ...(cut.truncated ? { truncated: true } : {}),
          },
          cut: cut.truncated,
        };
      }
      const bytes = base64Bytes(res.blob);
      const within = typeof res.blob === "string" && res.blob.length <= cap;
      return {
        line: `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}, ${bytes} bytes]`,
        kept: {
          type,
          uri,
          ...(mimeType ? { mimeType } : {}),
          bytes,
          ...(within ? { data: res.blob as string } : { truncated: true }),
        },
        cut: !within,
      };
    }
    default:
      return { line: `[${stripControl(type).slice(0, 40)} content]`, kept: { type }, cut: false };
  }
}

/**
 * Render an MCP CallToolResult as a ToolResult: success = !isError; summary = text content
 * joined (images, audio and resources described in one line each), control characters
 * stripped and capped to `outputBytes` keeping head and tail; data = the content with
 * oversized parts cut or dropped, plus structuredContent when it fits.
 */
export function renderCallToolResult(
  result: CallToolResultLike,
  context: { server: string; tool: string; outputBytes?: number; binaryBytes?: number },
): ToolResult {
  const cap = context.outputBytes ?? DEFAULT_OUTPUT_BYTES;
  const binaryCap = context.binaryBytes ?? DEFAULT_BINARY_BYTES;
  const items = Array.isArray(result.content) ? result.content : [];
  const isError = result.isError === true;
  const lines: string[] = [];
  const content: RenderedContent[] = [];
  const blocks: McpContentBlock[] = [];
  let truncated = false;
  for (const item of items) {
    const r = renderItem(item, cap);
    content.push(r.kept);
    lines.push(r.line);
    truncated ||= r.cut;
    const block = passOn(item, cap, binaryCap, r.line);
    blocks.push(block.block);
    truncated ||= block.cut;
  }
  let structuredContent: unknown;
  let structuredText: string | undefined;
  if (result.structuredContent !== undefined) {
    structuredText = JSON.stringify(result.structuredContent);
    if (structuredText !== undefined && structuredText.length <= cap)
      structuredContent = result.structuredContent;
    else truncated = true;
  }
  let summary = stripControl(lines.join("\n"));
  if (summary.trim() === "" && structuredText !== undefined) summary = structuredText;
  if (summary.trim() === "")
    summary = isError ? `MCP tool '${context.tool}' reported an error without a message.` : "(no content)";
  const cut = truncateMiddle(summary, cap);
  truncated ||= cut.truncated;
  const data: McpCallData = {
    server: context.server,
    tool: context.tool,
    isError,
    content,
    ...(structuredContent !== undefined ? { structuredContent } : {}),
    truncated,
  };
  return {
    success: !isError,
    summary: cut.text,
    data,
    content: blocks,
    ...(structuredContent !== undefined ? { structuredContent } : {}),
  };
}

/**
 * A content block as it is passed on: the server's own object (annotations, `_meta` and
 * all), except that text over the output cap is cut and a binary payload over the binary
 * cap becomes a text note saying what was dropped — so a client of the gate gets exactly
 * what the server sent whenever it fits.
 */
function passOn(
  item: unknown,
  cap: number,
  binaryCap: number,
  line: string,
): { block: McpContentBlock; cut: boolean } {
  const note = (text: string, cut: boolean) => ({ block: { type: "text" as const, text }, cut });
  if (typeof item !== "object" || item === null) return note(line, false);
  const it = item as Record<string, unknown>;
  const isString = (v: unknown): v is string => typeof v === "string";
  switch (it.type) {
    case "text": {
      if (!isString(it.text)) return note(line, false);
      const cut = truncateMiddle(it.text, cap);
      return cut.truncated
        ? { block: { ...(it as McpContentBlock), text: cut.text } as McpContentBlock, cut: true }
        : { block: it as McpContentBlock, cut: false };
    }
    case "image":
    case "audio":
      if (!isString(it.data) || !isString(it.mimeType)) return note(`[malformed ${it.type} content]`, false);
      if (it.data.length > binaryCap)
        return note(`${line} (dropped: over the ${binaryCap}-byte limit)`, true);
      return { block: it as McpContentBlock, cut: false };
    case "resource_link":
      if (!isString(it.uri) || !isString(it.name)) return note("[malformed resource_link content]", false);
      return { block: it as McpContentBlock, cut: false };
    case "resource": {
      const res = (typeof it.resource === "object" && it.resource !== null ? it.resource : {}) as Record<
        string,
        unknown
      >;
      if (!isString(res.uri) || (!isString(res.text) && !isString(res.blob)))
        return note("[malformed resource content]", false);
      if (isString(res.blob) && res.blob.length > binaryCap)
        return note(`${line} (dropped: over the ${binaryCap}-byte limit)`, true);
      if (isString(res.text)) {
        const cut = truncateMiddle(res.text, cap);
        if (cut.truncated)
          return { block: { ...it, resource: { ...res, text: cut.text } } as McpContentBlock, cut: true };
      }
      return { block: it as McpContentBlock, cut: false };
    }
    default:
      return note(line, false);
  }
}
