import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { CapgateError } from "@capgate/schema";
import { DEFAULT_LIMITS, PolicyDeniedError } from "@capgate/tools";
import { type CheckedUrl, type CheckUrlOptions, checkUrl, type ResolvedAddress } from "./url-guard.js";

export interface GuardedFetchOptions extends Omit<CheckUrlOptions, "property"> {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Largest body kept, in bytes (after decompression); reading stops there (default DEFAULT_LIMITS.fetchBytes). */
  maxBytes?: number;
  /** Total time for all hops and the body (default 30 s). */
  timeoutMs?: number;
  /** Redirects followed, each re-checked (default 5). */
  maxRedirects?: number;
}

export interface GuardedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** The body, at most maxBytes. */
  body: Uint8Array;
  /** The URL of the last hop. */
  finalUrl: string;
  /** True when the body was cut at maxBytes. */
  truncated: boolean;
  /** Every URL redirected to, in order. */
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/**
 * Fetch over http/https through the URL guard. Each hop is checked with `checkUrl` and the
 * connection is made only to the addresses that check resolved (a `lookup` that returns
 * them — no second DNS answer can slip in). Redirects are followed by hand, up to
 * `maxRedirects`, each re-checked; credentials are dropped when the origin changes. The
 * body is cut at `maxBytes` (reading stops; `truncated` is set) and the whole exchange has
 * one `timeoutMs`.
 * @throws PolicyDeniedError (property `url`) for a refused URL or redirect; CapgateError
 *   `network_error`, `timeout`, `aborted` or `too_many_redirects` otherwise.
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions = {}): Promise<GuardedResponse> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxBytes ?? DEFAULT_LIMITS.fetchBytes;
  const maxRedirects = options.maxRedirects ?? 5;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const fail = (error: unknown, target: string): never => {
    if (CapgateError.isInstance(error)) throw error;
    if (timeout.aborted)
      throw new CapgateError("timeout", `request to ${target} timed out after ${timeoutMs} ms`, {
        cause: error,
      });
    if (signal.aborted)
      throw new CapgateError("aborted", `request to ${target} was aborted`, { cause: error });
    throw new CapgateError("network_error", `request to ${target} failed: ${(error as Error).message}`, {
      cause: error,
    });
  };

  let method = (options.method ?? "GET").toUpperCase();
  let body = options.body;
  let headers: Record<string, string> = { ...lowerKeys(options.headers ?? {}) };
  headers["accept-encoding"] ??= "gzip, deflate, br";
  headers["user-agent"] ??= "capgate";
  const redirects: string[] = [];
  let current = url;

  for (;;) {
    let checked: CheckedUrl;
    try {
      checked = await checkUrl(current, { ...options, property: "url", signal });
    } catch (error) {
      if (redirects.length > 0 && error instanceof PolicyDeniedError) {
        throw new PolicyDeniedError(`redirect to ${current} refused: ${error.message}`, {
          property: "url",
          cause: error,
        });
      }
      return fail(error, current);
    }
    let response: IncomingMessage;
    try {
      response = await send(checked, method, headers, body, signal);
    } catch (error) {
      return fail(error, checked.url.href);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECTS.has(status) && location) {
      response.destroy();
      if (redirects.length >= maxRedirects) {
        throw new CapgateError(
          "too_many_redirects",
          `more than ${maxRedirects} redirects, the last to ${location}`,
          {
            property: "url",
          },
        );
      }
      const next = new URL(location, checked.url);
      if (next.origin !== checked.url.origin) headers = withoutCredentials(headers);
      if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
        method = method === "HEAD" ? "HEAD" : "GET";
        body = undefined;
        delete headers["content-type"];
        delete headers["content-length"];
      }
      current = next.href;
      redirects.push(current);
      continue;
    }
    try {
      const { bytes, truncated } = await readCapped(decoded(response), maxBytes, signal);
      return {
        status,
        statusText: response.statusMessage ?? "",
        headers: flatHeaders(response),
        body: bytes,
        finalUrl: checked.url.href,
        truncated,
        redirects,
      };
    } catch (error) {
      return fail(error, checked.url.href);
    }
  }
}

/** A `lookup` that only ever answers with the addresses the guard checked. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const opts = typeof options === "object" && options !== null ? options : {};
    const family = (opts as { family?: number }).family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const list = usable.length > 0 ? usable : addresses;
    if ((opts as { all?: boolean }).all) {
      (callback as (e: null, a: ResolvedAddress[]) => void)(null, list);
    } else {
      const first = list[0]!;
      (callback as (e: null, a: string, f: number) => void)(null, first.address, first.family);
    }
  };
}

function send(
  checked: CheckedUrl,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const { url } = checked;
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        hostname: checked.hostname,
        port: checked.port,
        path: `${url.pathname}${url.search}`,
        method,
        headers: { ...headers, ...(url.username ? basicAuth(url) : {}) },
        lookup: pinnedLookup(checked.addresses),
        agent: false,
        signal,
        ...(url.protocol === "https:" ? { servername: checked.hostname } : {}),
      },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  response.on("error", (e) => decoder.destroy(e));
  return response.pipe(decoder);
}

async function readCapped(
  stream: Readable,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  const onAbort = () => stream.destroy(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      if (total + buf.length > maxBytes) {
        chunks.push(buf.subarray(0, maxBytes - total));
        total = maxBytes;
        truncated = true;
        break; // leaving the loop destroys the stream: stop reading
      }
      chunks.push(buf);
      total += buf.length;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    stream.destroy();
  }
  return { bytes: new Uint8Array(Buffer.concat(chunks, total)), truncated };
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = String(v);
  return out;
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  for (const h of CREDENTIAL_HEADERS) delete out[h];
  return out;
}

function basicAuth(url: URL): Record<string, string> {
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` };
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(response.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}
