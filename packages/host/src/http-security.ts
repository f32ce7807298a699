import { randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { CapgateError } from "@capgate/schema";

/** 32 random bytes, base64url: 43 characters, safe in a URL fragment and a header. */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}

const TOKEN_PATTERN = /^[\x21-\x7e]{16,512}$/;

/** A token given by the operator must be long enough to guess at no cost and fit in a header. */
export function checkToken(token: string, source: string): string {
  if (!TOKEN_PATTERN.test(token)) {
    throw new CapgateError(
      "invalid_token",
      `The token from ${source} must be 16 to 512 visible ASCII characters without spaces; it has ${token.length} characters${/\s/.test(token) ? " and contains whitespace" : ""}. Leave it unset to have one generated.`,
      { property: "token" },
    );
  }
  return token;
}

/** The longest token accepted (TOKEN_PATTERN): every comparison covers this many bytes. */
const MAX_TOKEN_BYTES = 512;

/**
 * Compares a presented bearer token with the expected one in constant time: both are
 * padded with zeros to 512 bytes and compared whole with `timingSafeEqual`, so the time
 * depends neither on where they differ nor on the expected token's length. A presented
 * value that is not of the token form (16–512 visible ASCII characters, as the expected
 * one must be) cannot be it and is refused first — that reveals only what the client
 * sent. Every authenticated request pays for this, so there is no hashing (measured: a
 * SHA-256 per request was the largest cost of the auth hook) and one scratch buffer
 * (the check is synchronous, so requests never share it at the same time).
 */
export function tokenMatcher(expected: string): (presented: string | undefined) => boolean {
  checkToken(expected, "the server");
  const want = Buffer.alloc(MAX_TOKEN_BYTES);
  want.write(expected, "latin1");
  const got = Buffer.alloc(MAX_TOKEN_BYTES);
  return (presented) => {
    if (presented === undefined || !TOKEN_PATTERN.test(presented)) return false;
    got.fill(0);
    // Visible ASCII only (checked above), so latin1 writes one byte per character, exactly.
    got.write(presented, "latin1");
    return timingSafeEqual(want, got) && presented.length === expected.length;
  };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return match?.[1];
}

export interface OriginPolicy {
  /** Host header values accepted (lowercase, with port). */
  hosts: ReadonlySet<string>;
  /** Origin header values accepted (lowercase); `null` never is. */
  origins: ReadonlySet<string>;
}

/**
 * The Host and Origin values a local server accepts: the local names with the bound port
 * (`127.0.0.1`, `localhost`, `[::1]`), the bound address when it is an IP literal, and the
 * operator's extra hosts; origins are the same hosts over http (and https for extra hosts,
 * which may sit behind a TLS proxy) plus extra origins. A DNS-rebinding page has some other
 * name in Host and its own origin in Origin, so both checks refuse it.
 */
export function originPolicy(options: {
  host: string;
  port: number;
  extraHosts?: readonly string[];
  extraOrigins?: readonly string[];
}): OriginPolicy {
  const { port } = options;
  const withPort = (name: string) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`]);
  const local = ["127.0.0.1", "localhost", "[::1]"].flatMap(withPort);
  const bound = options.host.replace(/^\[|\]$/g, "");
  const boundIp = isIP(bound);
  const boundNames =
    boundIp !== 0 && bound !== "0.0.0.0" && bound !== "::"
      ? withPort(boundIp === 6 ? `[${bound}]` : bound)
      : [];
  const extra = (options.extraHosts ?? []).map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0);
  const hosts = new Set([...local, ...boundNames, ...extra].map((h) => h.toLowerCase()));
  const origins = new Set<string>();
  for (const h of [...local, ...boundNames]) origins.add(`http://${h.toLowerCase()}`);
  for (const h of extra) {
    origins.add(`http://${h}`);
    origins.add(`https://${h}`);
  }
  for (const o of options.extraOrigins ?? []) {
    const trimmed = o.trim().toLowerCase().replace(/\/+$/, "");
    if (trimmed.length > 0 && trimmed !== "null") origins.add(trimmed);
  }
  return { hosts, origins };
}

export type OriginVerdict =
  | { ok: true }
  | { ok: false; code: "forbidden_host" | "forbidden_origin"; message: string };

/** Host must be one of ours; Origin, when present, must be one of ours (`null` is not). */
export function checkHostAndOrigin(
  policy: OriginPolicy,
  host: string | undefined,
  origin: string | string[] | undefined,
): OriginVerdict {
  if (host === undefined || !policy.hosts.has(host.toLowerCase())) {
    return {
      ok: false,
      code: "forbidden_host",
      message: `The Host header ${host === undefined ? "is missing" : `'${clip(host)}' is not allowed`}: this server answers only to ${[...policy.hosts].join(", ")}. Add the name to the server's allowed hosts if you reach it through a proxy.`,
    };
  }
  if (origin !== undefined) {
    const value = Array.isArray(origin) ? origin.join(",") : origin;
    if (!policy.origins.has(value.toLowerCase())) {
      return {
        ok: false,
        code: "forbidden_origin",
        message: `The Origin '${clip(value)}' is not allowed: only pages served by this server (${[...policy.origins].join(", ")}) may call it.`,
      };
    }
  }
  return { ok: true };
}

function clip(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 100 ? `${printable.slice(0, 100)}…` : printable;
}
