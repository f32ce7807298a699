import { InvalidArgumentsError, PolicyDeniedError } from "@capgate/tools";

const HOP_BY_HOP = "a hop-by-hop header; capgate manages the connection itself";

/** Request headers a call may not set, with the reason the model is told. */
const REFUSED_HEADERS: Record<string, string> = {
  host: "the Host header always matches the URL (overriding it could reach a different site on the same address); put the host in `url`",
  connection: HOP_BY_HOP,
  "keep-alive": HOP_BY_HOP,
  "proxy-connection": HOP_BY_HOP,
  "transfer-encoding": HOP_BY_HOP,
  te: HOP_BY_HOP,
  trailer: HOP_BY_HOP,
  upgrade: HOP_BY_HOP,
  expect: HOP_BY_HOP,
  "content-length": "it is computed from `body`",
  "accept-encoding": "capgate negotiates compression itself and returns the decoded body",
};

// Characters Node will put in a header value: tab, printable ASCII, Latin-1. No CR/LF (header injection).
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Refuse request headers that would let a call step around the network guard or break the
 * exchange: Host overrides, hop-by-hop and `Proxy-*` headers, Content-Length and
 * Accept-Encoding (policy_denied); values with line breaks or other characters HTTP does
 * not allow, and the same header twice in different case (invalid_arguments). Cookie and
 * Authorization are allowed: they are the caller's explicit choice, and no cookie jar is kept.
 */
export function checkRequestHeaders(headers: Readonly<Record<string, string>> | undefined): void {
  if (!headers) return;
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const property = `headers.${name}`;
    const reason =
      REFUSED_HEADERS[lower] ?? (lower.startsWith("proxy-") ? "proxy headers are not sent" : undefined);
    if (reason) {
      throw new PolicyDeniedError(`Header '${name}' may not be set: ${reason}. Remove it from \`headers\`.`, {
        property,
      });
    }
    const bad = BAD_VALUE_CHAR.exec(value);
    if (bad) {
      const code = bad[0].codePointAt(0)!.toString(16).padStart(4, "0");
      throw new InvalidArgumentsError(
        `Header '${name}' has a character HTTP header values cannot carry (U+${code}${code === "000a" || code === "000d" ? ", a line break" : ""}); send one line of Latin-1 text.`,
        { property },
      );
    }
    const earlier = seen.get(lower);
    if (earlier !== undefined) {
      throw new InvalidArgumentsError(
        `Header '${name}' is given twice ('${earlier}' and '${name}'; names are case-insensitive); keep one.`,
        { property },
      );
    }
    seen.set(lower, name);
  }
}

/** Response headers worth a line in the summary; the rest are in `data.headers`. */
const SHOWN_HEADERS = new Set([
  "content-type",
  "location",
  "content-disposition",
  "etag",
  "last-modified",
  "cache-control",
  "retry-after",
  "www-authenticate",
  "allow",
  "link",
  "x-request-id",
  "request-id",
  "set-cookie",
]);

export function isShownHeader(name: string): boolean {
  return SHOWN_HEADERS.has(name) || name.startsWith("x-ratelimit-") || name.startsWith("ratelimit");
}

/**
 * Set-Cookie with the values hidden (`session=…`): cookies are credentials, and summaries
 * and data end up in traces. Node joins several Set-Cookie headers with ", "; a cookie
 * starts wherever ", name=" follows (an Expires date has no '=' after its comma).
 */
export function redactSetCookie(value: string): string {
  return value
    .split(/,\s*(?=[^;=\s,]+=)/)
    .map((cookie) => `${cookie.split("=")[0]?.trim()}=…`)
    .join(", ");
}

/** Response headers for the caller, Set-Cookie values hidden. */
export function responseHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = name === "set-cookie" ? redactSetCookie(value) : value;
  }
  return out;
}
