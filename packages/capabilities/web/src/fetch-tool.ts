import { type GuardedResponse, guardedFetch } from "@capgate/net-guard";
import { truncateMiddle } from "@capgate/schema";
import type { ArgsOf, ToolContext, ToolResult } from "@capgate/tools";
import {
  type BodyKind,
  charsetOf,
  classifyBody,
  decodeText,
  describeBinary,
  type MediaType,
  parseMediaType,
} from "./body.js";
import { formatBytes, networkFailure, networkLimits } from "./limits.js";
import type { manifest } from "./manifest.js";
import type { PageLink } from "./readable.js";

type FetchArgs = ArgsOf<typeof manifest, "web.fetch">;

const ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.9,*/*;q=0.5";
// Room kept in the summary for the header lines above the content.
const HEADER_ROOM = 2048;
// Page text is read top-down: keep more of the head than the tail when it must be cut.
const HEAD_SHARE = 0.75;
const MAX_LINKS_IN_DATA = 500;

/** What web.fetch returns in `data`, for programs. */
export interface FetchData {
  url: string;
  finalUrl: string;
  status: number;
  statusText: string;
  contentType: string;
  kind: BodyKind;
  /** Bytes received (after decompression), at most the size limit. */
  bytes: number;
  /** True when reading stopped at the size limit. */
  truncated: boolean;
  redirects: string[];
  title?: string;
  extraction?: "article" | "page";
  links?: PageLink[];
  /** The text shown in the summary (already cut to the output limit). */
  text: string;
}

/**
 * web.fetch: GET through the network guard, then make the body readable — HTML as
 * Markdown, JSON pretty-printed, other text as is, binary described in one line.
 * A non-2xx status is a failure that still shows what the server sent.
 */
export async function fetchPage(args: FetchArgs, ctx: ToolContext): Promise<ToolResult> {
  const { maxBytes, timeoutMs } = networkLimits(ctx, args.max_bytes);
  let response: GuardedResponse;
  try {
    response = await guardedFetch(args.url, {
      allowHosts: ctx.policy.web?.allowHosts ?? [],
      headers: { accept: ACCEPT },
      maxBytes,
      timeoutMs,
      signal: ctx.signal,
    });
  } catch (error) {
    return networkFailure(error, "GET", args.url);
  }

  const media = parseMediaType(response.headers["content-type"]);
  const kind = classifyBody(response.body, media);
  const content = await readableContent(response, kind, media);

  const lines = [
    `${response.status} ${response.statusText} · ${response.finalUrl} · ${media.type || "no content type"} · ${formatBytes(response.body.length)}`,
  ];
  if (response.redirects.length > 0) {
    lines.push(
      `Redirected from ${args.url} (${response.redirects.length} hop${response.redirects.length === 1 ? "" : "s"}).`,
    );
  }
  if (content.title) lines.push(`Title: ${content.title}`);
  if (content.byline) lines.push(`By: ${content.byline}`);
  if (response.truncated) {
    lines.push(
      `Truncated: reading stopped at ${formatBytes(maxBytes)} (the size limit); the rest of the page was not downloaded.`,
    );
  }
  const header = lines.join("\n");
  const budget = Math.max(1024, ctx.limits.outputBytes - Buffer.byteLength(header) - HEADER_ROOM);
  const shown = truncateMiddle(content.text, budget, HEAD_SHARE).text;
  const ok = response.status >= 200 && response.status < 300;

  const data: FetchData = {
    url: args.url,
    finalUrl: response.finalUrl,
    status: response.status,
    statusText: response.statusText,
    contentType: media.type,
    kind,
    bytes: response.body.length,
    truncated: response.truncated,
    redirects: response.redirects,
    ...(content.title ? { title: content.title } : {}),
    ...(content.extraction ? { extraction: content.extraction } : {}),
    ...(content.links ? { links: content.links.slice(0, MAX_LINKS_IN_DATA) } : {}),
    text: shown,
  };
  return {
    success: ok,
    summary: `${ok ? "" : `HTTP ${response.status}: the server answered with an error.\n`}${header}\n\n${shown}`,
    data,
  };
}

interface Content {
  text: string;
  title?: string;
  byline?: string;
  extraction?: "article" | "page";
  links?: PageLink[];
}

async function readableContent(
  response: GuardedResponse,
  kind: BodyKind,
  media: MediaType,
): Promise<Content> {
  const { body } = response;
  if (body.length === 0) return { text: "(empty body)" };
  if (kind === "binary") {
    return {
      text: `(binary content not shown: ${describeBinary(body, media)}, ${formatBytes(body.length)}${response.truncated ? " received before the size limit" : ""}.)`,
    };
  }
  const text = decodeText(body, charsetOf(body, media, kind));
  const cut = response.truncated ? `\n…[download stopped at ${formatBytes(body.length)}]` : "";
  if (kind === "html") {
    const page = (await loadReadable())(text, response.finalUrl);
    return {
      text: (page.markdown || "(the page has no readable text)") + cut,
      title: page.title,
      ...(page.byline ? { byline: page.byline } : {}),
      extraction: page.extraction,
      links: page.links,
    };
  }
  if (kind === "json" && !response.truncated) {
    try {
      return { text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      return { text: `(not valid JSON, shown as sent)\n${text}` };
    }
  }
  return { text: text + cut };
}

/** The HTML → Markdown stack (Readability, linkedom, parse5, Turndown) loads on the first HTML page, not at startup. */
async function loadReadable(): Promise<typeof import("./readable.js").htmlToReadable> {
  return (await import("./readable.js")).htmlToReadable;
}
