import { lookup } from "node:dns/promises";
import { CapgateError } from "@capgate/schema";
import type { PolicyCheck } from "@capgate/tools";
import { PolicyDeniedError } from "@capgate/tools";
import ipaddr from "ipaddr.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup` with `all`). */
export type HostResolver = (hostname: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

export interface CheckUrlOptions {
  /**
   * Hosts exempt from the private-address block: `"localhost"`, `"127.0.0.1:3000"`,
   * `"[::1]:8080"`. A bare host allows every port; `host:port` only that port. Entries are
   * canonicalised like URLs (`2130706433:80` is `127.0.0.1:80`). The scheme rule still applies.
   */
  allowHosts?: readonly string[];
  resolve?: HostResolver;
  /** The tool argument the URL came from, named in errors (default "url"). */
  property?: string;
  signal?: AbortSignal;
}

/** A URL that passed the guard, with the addresses a connection to it may use. */
export interface CheckedUrl {
  url: URL;
  /** Host name without IPv6 brackets, lower-case, canonical (IPv4 spellings normalised). */
  hostname: string;
  port: number;
  /** True when the host was let through by `allowHosts` rather than by being public. */
  allowListed: boolean;
  /** Every resolved address — all checked. Connect only to these. */
  addresses: ResolvedAddress[];
}

export interface AddressClass {
  /** True for public unicast addresses. */
  public: boolean;
  /** ipaddr.js range name ("loopback", "private", "linkLocal", "uniqueLocal", …) or our own ("ipv4Compatible", "nonGlobal"). */
  range: string;
  /** For IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4…), that address. */
  embedded?: string;
}

const EMBEDS_IPV4 = new Set(["ipv4Mapped", "rfc6145", "rfc6052", "6to4"]);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse("2000::");

/**
 * Classify one IP address. Only public unicast passes: loopback, unspecified, private,
 * link-local (incl. 169.254.169.254), CGNAT, multicast, broadcast, reserved and
 * documentation ranges do not; IPv6 that embeds IPv4 (mapped `::ffff:a.b.c.d`, compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4) is judged by the embedded address; other IPv6
 * must be global unicast (2000::/3).
 */
export function classifyAddress(address: string): AddressClass {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") {
    const range = (parsed as ipaddr.IPv4).range();
    return { public: range === "unicast", range };
  }
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === "rfc6052" && v6.parts[2] !== 0) {
    // Local-use NAT64 (64:ff9b:1::/48, RFC 8215): where the IPv4 address sits depends on the site's prefix length.
    return { public: false, range: "rfc8215" };
  }
  if (EMBEDS_IPV4.has(range)) {
    const bytes = v6.toByteArray();
    const v4bytes = range === "6to4" ? bytes.slice(2, 6) : bytes.slice(12, 16);
    const v4 = new ipaddr.IPv4(v4bytes);
    const inner = v4.range();
    return { public: inner === "unicast", range: `${range}(${inner})`, embedded: v4.toString() };
  }
  const parts = v6.parts;
  if (parts.slice(0, 6).every((p) => p === 0) && range !== "unspecified" && range !== "loopback") {
    const v4 = new ipaddr.IPv4(v6.toByteArray().slice(12, 16));
    return { public: false, range: "ipv4Compatible", embedded: v4.toString() };
  }
  if (range !== "unicast") return { public: false, range };
  if (!v6.match(GLOBAL_UNICAST_V6, 3)) return { public: false, range: "nonGlobal" };
  return { public: true, range };
}

/**
 * Names that mean this machine whatever DNS says (RFC 6761 §6.3: `localhost` and every
 * name under `.localhost`), plus the loopback aliases Debian, Fedora and macOS put in
 * /etc/hosts. They are judged as loopback without a lookup — a resolver (or a hosts file)
 * answering a public address for `localhost.` must not turn it into an allowed host.
 */
const LOOPBACK_NAMES = new Set([
  "localhost",
  "localhost.localdomain",
  "localhost4",
  "localhost4.localdomain4",
  "localhost6",
  "localhost6.localdomain6",
  "ip6-localhost",
  "ip6-loopback",
]);

/** A host name without the one trailing dot of a fully qualified spelling (`localhost.` is `localhost`). */
export function withoutTrailingDot(hostname: string): string {
  return hostname.endsWith(".") && hostname.length > 1 ? hostname.slice(0, -1) : hostname;
}

/** True for `localhost`, `LOCALHOST.`, `app.localhost`, `localhost.localdomain` and the other loopback aliases. */
export function isLoopbackName(hostname: string): boolean {
  const name = withoutTrailingDot(hostname.toLowerCase());
  return LOOPBACK_NAMES.has(name) || name.endsWith(".localhost");
}

const LOOPBACK_ADDRESSES: ResolvedAddress[] = [
  { address: "127.0.0.1", family: 4 },
  { address: "::1", family: 6 },
];

const defaultResolve: HostResolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

interface AllowEntry {
  hostname: string;
  port: number | undefined;
}

const allowCache = new Map<string, AllowEntry>();

/** The allowHosts entry for host:port, an IPv6 address in brackets (`[::1]:8080`, not `::1:8080`, which is another address). */
function allowEntry(hostname: string, port: number): string {
  return hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
}

/** Parse an allowHosts entry; throws `invalid_config` naming it when it is not a host or host:port. */
export function parseAllowHost(entry: string): AllowEntry {
  const cached = allowCache.get(entry);
  if (cached) return cached;
  let text = String(entry).trim().toLowerCase();
  if (ipaddr.IPv6.isValid(text) && !text.startsWith("[")) text = `[${text}]`;
  let url: URL;
  try {
    url = new URL(`http://${text}`);
  } catch {
    throw new CapgateError(
      "invalid_config",
      `allowHosts entry ${JSON.stringify(entry)} is not a host or host:port`,
      {
        property: "allowHosts",
      },
    );
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new CapgateError(
      "invalid_config",
      `allowHosts entry ${JSON.stringify(entry)} must be a host or host:port, not a URL`,
      {
        property: "allowHosts",
      },
    );
  }
  const explicitPort = /(?:\]|^[^:\]]+):(\d+)$/.exec(text)?.[1];
  const parsed = {
    hostname: withoutTrailingDot(stripBrackets(url.hostname)),
    port: explicitPort === undefined ? undefined : Number(explicitPort),
  };
  allowCache.set(entry, parsed);
  return parsed;
}

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** The host as the caller wrote it (before URL canonicalisation), for messages. */
function rawHost(input: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(input);
  return m?.[1];
}

/**
 * Check a URL for a network tool: http/https only; the host resolved and **every** address
 * checked with `classifyAddress` unless the host (or host:port) is in `allowHosts`.
 * Non-canonical IPv4 spellings (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) are
 * normalised by the WHATWG URL parser first, so they are judged as the address they are.
 * Connect only to `addresses` of the result (guardedFetch does) so DNS cannot change the
 * answer between the check and the connection.
 * @throws PolicyDeniedError (property `url`) for a refused URL; CapgateError `network_error` when the host does not resolve.
 */
export async function checkUrl(url: string | URL, options: CheckUrlOptions = {}): Promise<CheckedUrl> {
  const property = options.property ?? "url";
  const input = typeof url === "string" ? url : url.href;
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : new URL(url.href);
  } catch {
    throw new PolicyDeniedError(
      `${property} ${JSON.stringify(input.slice(0, 200))} is not a valid absolute URL.`,
      {
        property,
      },
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyDeniedError(
      `${property} uses the '${parsed.protocol.replace(/:$/, "")}:' scheme; only http and https URLs may be fetched.`,
      { property },
    );
  }
  // `example.com.` and `example.com` are one host: compared (and allow-listed) without the dot.
  const hostname = withoutTrailingDot(stripBrackets(parsed.hostname).toLowerCase());
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  const allowListed = (options.allowHosts ?? []).some((entry) => {
    const allowed = parseAllowHost(entry);
    return allowed.hostname === hostname && (allowed.port === undefined || allowed.port === port);
  });

  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(hostname)) {
    addresses = [{ address: hostname, family: hostname.includes(":") ? 6 : 4 }];
  } else if (isLoopbackName(hostname)) {
    addresses = LOOPBACK_ADDRESSES;
  } else {
    try {
      addresses = await (options.resolve ?? defaultResolve)(hostname, options.signal);
    } catch (error) {
      throw new CapgateError(
        "network_error",
        `could not resolve host '${hostname}': ${(error as Error).message}`,
        {
          property,
          cause: error,
        },
      );
    }
    if (addresses.length === 0) {
      throw new CapgateError("network_error", `host '${hostname}' has no addresses`, { property });
    }
  }
  if (!allowListed) {
    const given = rawHost(input);
    const spelled = given && stripBrackets(given).toLowerCase() !== hostname ? ` (written '${given}')` : "";
    for (const { address } of addresses) {
      const cls = classifyAddress(address);
      if (cls.public) continue;
      const what =
        address === hostname
          ? `is ${cls.range}`
          : isLoopbackName(hostname)
            ? `names this machine (${address}, ${cls.range}; not looked up)`
            : `resolves to ${address} (${cls.range})`;
      throw new PolicyDeniedError(
        `${property} host '${hostname}'${spelled} ${what}${cls.embedded ? `, embedding ${cls.embedded}` : ""}; private, loopback, link-local and other non-public addresses are blocked. Add "${allowEntry(hostname, port)}" to the web policy's allowHosts to reach it deliberately.`,
        { property },
      );
    }
  }
  return { url: parsed, hostname, port, allowListed, addresses };
}

/**
 * A ready-made `policies` entry for a tool whose argument `property` is a URL: refuses
 * private targets before approval is asked, using `ctx.policy.web.allowHosts`. The handler
 * must still fetch with `guardedFetch` (which checks again and pins the address).
 */
export function urlPolicy(property = "url"): PolicyCheck {
  return async (args, ctx) => {
    const url = args[property];
    if (typeof url !== "string")
      throw new PolicyDeniedError(`${property} must be a URL string`, { property });
    try {
      await checkUrl(url, { allowHosts: ctx.policy.web?.allowHosts ?? [], property, signal: ctx.signal });
    } catch (error) {
      // Only refusals stop the call here; a host that does not resolve is the handler's failure to report.
      if (CapgateError.isInstance(error) && error.code === "policy_denied") throw error;
    }
    return undefined;
  };
}
