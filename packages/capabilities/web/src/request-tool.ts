import { type GuardedResponse, guardedFetch } from "@capgate/net-guard";
import { truncateMiddle } from "@capgate/schema";
import type { ArgsOf, ToolContext, ToolResult } from "@capgate/tools";
import { charsetOf, classifyBody, decodeText, describeBinary, parseMediaType } from "./body.js";
import { formatBytes, networkFailure, networkLimits } from "./limits.js";
import type { manifest } from "./manifest.js";
import { isShownHeader, responseHeaders } from "./request-headers.js";

type RequestArgs = ArgsOf<typeof manifest, "web.request">;

const HEADER_ROOM = 1024;

/** What web.request returns in `data`, for programs. */
export interface RequestData {
  method: string;
  url: string;
  finalUrl: string;
  status: number;
  statusText: string;
  /** Every response header (lower-case names), Set-Cookie values hidden. */
  headers: Record<string, string>;
  /** Bytes received (after decompression), at most the size limit. */
  bytes: number;
  truncated: boolean;
  redirects: string[];
  /** The body as text (cut to the output limit), or a one-line description of binary content. */
  body: string;
}

/**
 * web.request: one HTTP exchange through the network guard (redirects followed and
 * re-checked). The body goes out exactly as given; without a Content-Type it is labelled
 * `application/json` when it parses as JSON, `text/plain` otherwise. The answer's status,
 * the headers that matter and the body as text come back; non-2xx is a failure.
 */
export async function sendRequest(args: RequestArgs, ctx: ToolContext): Promise<ToolResult> {
  const { maxBytes, timeoutMs } = networkLimits(ctx);
  // The schema has made every value a string; FromSchema types open maps as unknown.
  const headers = { ...(args.headers ?? {}) } as Record<string, string>;
  if (args.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = isJson(args.body) ? "application/json" : "text/plain; charset=utf-8";
  }
  let response: GuardedResponse;
  try {
    response = await guardedFetch(args.url, {
      method: args.method,
      headers,
      ...(args.body === undefined ? {} : { body: args.body }),
      allowHosts: ctx.policy.web?.allowHosts ?? [],
      maxBytes,
      timeoutMs,
      signal: ctx.signal,
    });
  } catch (error) {
    return networkFailure(error, args.method, args.url);
  }

  const shownHeaders = responseHeaders(response.headers);
  const media = parseMediaType(response.headers["content-type"]);
  const lines = [
    `${args.method} ${response.finalUrl} → ${response.status} ${response.statusText} · ${formatBytes(response.body.length)}`,
  ];
  if (response.redirects.length > 0) lines.push(`Redirected from ${args.url}.`);
  for (const [name, value] of Object.entries(shownHeaders)) {
    if (isShownHeader(name)) lines.push(`${name}: ${value}`);
  }
  if (response.truncated) {
    lines.push(`Truncated: reading stopped at ${formatBytes(maxBytes)} (the size limit).`);
  }
  const header = lines.join("\n");

  let body: string;
  if (response.body.length === 0) {
    body = "(no body)";
  } else {
    const kind = classifyBody(response.body, media);
    if (kind === "binary") {
      body = `(binary body not shown: ${describeBinary(response.body, media)}, ${formatBytes(response.body.length)})`;
    } else {
      const budget = Math.max(1024, ctx.limits.outputBytes - Buffer.byteLength(header) - HEADER_ROOM);
      const text = decodeText(response.body, charsetOf(response.body, media, kind));
      body = truncateMiddle(text, budget).text;
      if (response.truncated) body += `\n…[download stopped at ${formatBytes(response.body.length)}]`;
    }
  }
  const ok = response.status >= 200 && response.status < 300;
  const data: RequestData = {
    method: args.method,
    url: args.url,
    finalUrl: response.finalUrl,
    status: response.status,
    statusText: response.statusText,
    headers: shownHeaders,
    bytes: response.body.length,
    truncated: response.truncated,
    redirects: response.redirects,
    body,
  };
  return {
    success: ok,
    summary: `${ok ? "" : `HTTP ${response.status}: the server answered with an error.\n`}${header}\n\n${body}`,
    data,
  };
}

function isJson(text: string): boolean {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
