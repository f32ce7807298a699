import type { ConfigProblem } from "../errors.js";

/** How a `url` server's OAuth 2.1 client gets its tokens. */
export type McpOAuthGrant = "authorization_code" | "client_credentials" | "jwt_bearer";

/**
 * Enterprise-managed authorization (SEP-990, the `jwt_bearer` grant): the enterprise IdP
 * exchanges the person's ID token for an identity assertion grant (ID-JAG, RFC 8693 token
 * exchange), which the MCP server's authorization server takes as a JWT bearer grant (RFC 7523).
 */
export interface McpIdentityProviderConfig {
  /** The IdP's token endpoint (https, or http on a loopback host). */
  tokenEndpoint: string;
  /** This client's id at the IdP. */
  clientId: string;
  /** The person's ID token from the enterprise SSO login. */
  idToken: string;
}

/**
 * The `oauth` property of a `url` server entry. Everything is optional: `"oauth": {}` means
 * discovery + dynamic client registration + PKCE authorization code with a loopback
 * redirect on 127.0.0.1 (a free port unless `redirectPort` is set).
 */
export interface McpOAuthConfig {
  /**
   * Default `authorization_code` (a person logs in once); `client_credentials` for
   * machine-to-machine; `jwt_bearer` for enterprise-managed authorization (needs `identityProvider`).
   */
  grant?: McpOAuthGrant;
  /** The enterprise IdP of the `jwt_bearer` grant. */
  identityProvider?: McpIdentityProviderConfig;
  /** A pre-registered client id (skips dynamic client registration). */
  clientId?: string;
  /** The pre-registered client's secret (confidential clients; client_secret_basic/post). */
  clientSecret?: string;
  /** PKCS#8 PEM key for `private_key_jwt` client authentication (client_credentials). */
  privateKey?: string;
  /** JWS algorithm for `privateKey` (default ES256). */
  signingAlgorithm?: string;
  /** Scopes to ask for when neither the server's 401 nor its metadata names any. */
  scopes?: string[];
  /** Fixed loopback port for the redirect URI (a pre-registered client's registered URI needs one). */
  redirectPort?: number;
  /** `client_name` sent in dynamic client registration (default "capgate"). */
  clientName?: string;
  /** An https URL of a client ID metadata document (SEP-991), used where the server supports it. */
  clientMetadataUrl?: string;
  /**
   * The authorization server pre-registered credentials belong to: they are then never
   * presented to another one, whatever the MCP server's metadata says.
   */
  authorizationServer?: string;
}

const OAUTH_KEYS = [
  "grant",
  "clientId",
  "clientSecret",
  "privateKey",
  "signingAlgorithm",
  "scopes",
  "redirectPort",
  "clientName",
  "clientMetadataUrl",
  "authorizationServer",
  "identityProvider",
] as const;
const IDP_KEYS = ["tokenEndpoint", "clientId", "idToken"] as const;
const GRANTS: McpOAuthGrant[] = ["authorization_code", "client_credentials", "jwt_bearer"];
const ALGORITHMS = ["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
// RFC 6749 scope-token characters: printable ASCII except space, `"` and `\`.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isUrl(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/**
 * Check an entry's `oauth` value, pushing one problem per bad property. Secret values are
 * never quoted back in a message (they would land in logs).
 */
export function parseOAuthConfig(
  value: unknown,
  path: string,
  problems: ConfigProblem[],
  closest: (key: string, candidates: readonly string[]) => string | undefined,
): McpOAuthConfig | undefined {
  const before = problems.length;
  if (!isPlainObject(value)) {
    problems.push({
      property: path,
      message: `${path} must be an object (e.g. {} for dynamic registration, or { "clientId": "…" }), got ${describe(value)}`,
    });
    return undefined;
  }
  const out: McpOAuthConfig = {};
  for (const key of Object.keys(value)) {
    if ((OAUTH_KEYS as readonly string[]).includes(key)) continue;
    const guess = closest(key, OAUTH_KEYS);
    problems.push({
      property: `${path}.${key}`,
      message: `${path}.${key} is not a known property${guess ? `; did you mean "${guess}"?` : ""}`,
    });
  }
  const str = (key: "clientId" | "clientSecret" | "privateKey" | "clientName", secret: boolean) => {
    const v = value[key];
    if (v === undefined) return;
    if (typeof v !== "string" || v === "")
      problems.push({
        property: `${path}.${key}`,
        message: `${path}.${key} must be a non-empty string, got ${secret && typeof v === "string" ? "an empty string" : describe(v)}`,
      });
    else out[key] = v;
  };
  str("clientId", false);
  str("clientSecret", true);
  str("privateKey", true);
  str("clientName", false);
  if (value.grant !== undefined) {
    if (!GRANTS.includes(value.grant as McpOAuthGrant))
      problems.push({
        property: `${path}.grant`,
        message: `${path}.grant must be "authorization_code", "client_credentials" or "jwt_bearer", got ${typeof value.grant === "string" ? JSON.stringify(value.grant) : describe(value.grant)}`,
      });
    else out.grant = value.grant as McpOAuthGrant;
  }
  if (value.signingAlgorithm !== undefined) {
    if (!ALGORITHMS.includes(value.signingAlgorithm as string))
      problems.push({
        property: `${path}.signingAlgorithm`,
        message: `${path}.signingAlgorithm must be one of ${ALGORITHMS.join(", ")}, got ${typeof value.signingAlgorithm === "string" ? JSON.stringify(value.signingAlgorithm) : describe(value.signingAlgorithm)}`,
      });
    else out.signingAlgorithm = value.signingAlgorithm as string;
  }
  if (value.scopes !== undefined) {
    if (!Array.isArray(value.scopes))
      problems.push({
        property: `${path}.scopes`,
        message: `${path}.scopes must be an array of scope strings, got ${describe(value.scopes)}`,
      });
    else {
      value.scopes.forEach((s, i) => {
        if (typeof s !== "string" || !SCOPE_TOKEN.test(s))
          problems.push({
            property: `${path}.scopes[${i}]`,
            message: `${path}.scopes[${i}] must be one scope token (printable ASCII, no spaces or quotes), got ${typeof s === "string" ? JSON.stringify(s) : describe(s)}`,
          });
      });
      out.scopes = [...(value.scopes as string[])];
    }
  }
  if (value.redirectPort !== undefined) {
    const p = value.redirectPort;
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > 65_535)
      problems.push({
        property: `${path}.redirectPort`,
        message: `${path}.redirectPort must be an integer port from 1 to 65535, got ${describe(p)}`,
      });
    else out.redirectPort = p;
  }
  if (value.clientMetadataUrl !== undefined) {
    const u = value.clientMetadataUrl;
    if (typeof u !== "string" || !isUrl(u, ["https:"]) || new URL(u).pathname === "/")
      problems.push({
        property: `${path}.clientMetadataUrl`,
        message: `${path}.clientMetadataUrl must be an https:// URL with a path (a client ID metadata document), got ${typeof u === "string" ? JSON.stringify(u) : describe(u)}`,
      });
    else out.clientMetadataUrl = u;
  }
  if (value.authorizationServer !== undefined) {
    const u = value.authorizationServer;
    if (typeof u !== "string" || !isUrl(u, ["https:", "http:"]))
      problems.push({
        property: `${path}.authorizationServer`,
        message: `${path}.authorizationServer must be the authorization server's http(s) URL, got ${typeof u === "string" ? JSON.stringify(u) : describe(u)}`,
      });
    else out.authorizationServer = u;
  }
  if (value.identityProvider !== undefined) {
    const idp = value.identityProvider;
    const p = `${path}.identityProvider`;
    if (!isPlainObject(idp))
      problems.push({
        property: p,
        message: `${p} must be an object { tokenEndpoint, clientId, idToken }, got ${describe(idp)}`,
      });
    else {
      for (const key of Object.keys(idp))
        if (!(IDP_KEYS as readonly string[]).includes(key)) {
          const guess = closest(key, IDP_KEYS);
          problems.push({
            property: `${p}.${key}`,
            message: `${p}.${key} is not a known property${guess ? `; did you mean "${guess}"?` : ""}`,
          });
        }
      const endpoint = idp.tokenEndpoint;
      if (typeof endpoint !== "string" || !isUrl(endpoint, ["https:", "http:"]))
        problems.push({
          property: `${p}.tokenEndpoint`,
          message: `${p}.tokenEndpoint must be the IdP's token endpoint URL, got ${typeof endpoint === "string" ? JSON.stringify(endpoint) : describe(endpoint)}`,
        });
      for (const key of ["clientId", "idToken"] as const)
        if (typeof idp[key] !== "string" || idp[key] === "")
          problems.push({
            property: `${p}.${key}`,
            message: `${p}.${key} must be a non-empty string, got ${typeof idp[key] === "string" ? "an empty string" : describe(idp[key])}`,
          });
      if (problems.length === before)
        out.identityProvider = {
          tokenEndpoint: endpoint as string,
          clientId: idp.clientId as string,
          idToken: idp.idToken as string,
        };
    }
  }
  if (problems.length > before) return undefined;
  // Combinations that cannot work, said before anything is sent.
  if (out.clientSecret !== undefined && out.clientId === undefined)
    problems.push({
      property: `${path}.clientSecret`,
      message: `${path}.clientSecret needs ${path}.clientId (the client the secret belongs to)`,
    });
  const machine = out.grant === "client_credentials" || out.grant === "jwt_bearer";
  if (machine) {
    if (out.clientId === undefined)
      problems.push({
        property: `${path}.clientId`,
        message: `${path}.clientId is required with "grant": "${out.grant}" (such clients are pre-registered)`,
      });
    else if (out.clientSecret === undefined && out.privateKey === undefined)
      problems.push({
        property: `${path}.clientSecret`,
        message: `${path}: "grant": "${out.grant}" needs "clientSecret" or "privateKey" to authenticate the client`,
      });
    if (out.redirectPort !== undefined)
      problems.push({
        property: `${path}.redirectPort`,
        message: `${path}.redirectPort has no use with "grant": "${out.grant}" (there is no browser redirect)`,
      });
  }
  if (out.grant === "jwt_bearer" && out.identityProvider === undefined)
    problems.push({
      property: `${path}.identityProvider`,
      message: `${path}.identityProvider is required with "grant": "jwt_bearer" (the enterprise IdP that issues the ID-JAG)`,
    });
  if (out.grant !== "jwt_bearer" && out.identityProvider !== undefined)
    problems.push({
      property: `${path}.identityProvider`,
      message: `${path}.identityProvider is only used with "grant": "jwt_bearer"`,
    });
  if (!machine && out.privateKey !== undefined)
    problems.push({
      property: `${path}.privateKey`,
      message: `${path}.privateKey is only used with "grant": "client_credentials" or "jwt_bearer" (private_key_jwt)`,
    });
  if (out.signingAlgorithm !== undefined && out.privateKey === undefined)
    problems.push({
      property: `${path}.signingAlgorithm`,
      message: `${path}.signingAlgorithm needs ${path}.privateKey`,
    });
  if (problems.length > before) return undefined;
  return out;
}
