import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpClientError } from "../errors.js";
import type { McpAuthStore, StoredMcpAuth } from "./auth-store.js";
import { JWT_BEARER_GRANT, requestIdentityAssertion } from "./identity-assertion.js";
import type { McpOAuthConfig } from "./oauth-config.js";

/**
 * A person's part of the authorization-code flow, supplied by a host that can reach one
 * (`capgate mcp login`, the server app's login route). Without it the pool is
 * non-interactive: a server that needs a login fails with `mcp_auth_required`.
 */
export interface InteractiveAuthorization {
  /** The exact loopback redirect URI the host listens on (http://127.0.0.1:<port>/callback). */
  readonly redirectUrl: string;
  /** Show the authorization URL to the person (never opens a browser by itself). */
  onAuthorizationUrl(url: URL, server: string): void | Promise<void>;
  /** The authorization code the redirect brought for this `state` (rejects on an error redirect). */
  waitForCode(state: string, signal?: AbortSignal): Promise<string>;
}

/** The login command a person runs for a server; every "needs a login" message names it. */
export function loginCommand(server: string): string {
  return `capgate mcp login ${server}`;
}

// Used as redirect_uri only where no redirect can happen (refreshes in a non-interactive
// pool); a real authorization always uses the interactive host's exact loopback URI.
const PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback";

function scopesOf(value: string | undefined): string[] {
  return (value ?? "").split(" ").filter(Boolean);
}

function randomState(): string {
  const bytes = new Uint8Array(24);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The SDK's OAuthClientProvider for one configured `url` server, backed by an McpAuthStore.
 * The SDK's `auth()` does the protocol (RFC 9728/8414 discovery, RFC 7591 registration,
 * PKCE, RFC 8707 resource indicators, refresh); this class only keeps state and decides
 * what a non-interactive host may do. Token values never appear in anything it throws.
 */
type AuthSdk = typeof import("@modelcontextprotocol/sdk/client/auth.js") &
  typeof import("@modelcontextprotocol/sdk/client/auth-extensions.js");
let authSdk: AuthSdk | undefined;

/** The SDK's OAuth helpers (and zod under them), loaded when the first provider opens. */
async function loadAuthSdk(): Promise<AuthSdk> {
  if (!authSdk) {
    const [auth, extensions] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/auth.js"),
      import("@modelcontextprotocol/sdk/client/auth-extensions.js"),
    ]);
    authSdk = { ...auth, ...extensions };
  }
  return authSdk;
}

export class McpOAuthProvider implements OAuthClientProvider {
  readonly server: string;
  readonly serverUrl: string;
  private readonly config: McpOAuthConfig;
  private readonly store: McpAuthStore;
  private readonly interactive: InteractiveAuthorization | undefined;
  private readonly sdk: AuthSdk;
  private record: StoredMcpAuth;
  private verifier: string | undefined;
  private lastState: string | undefined;
  /** Set by redirectToAuthorization: an authorization is waiting for its redirect. */
  private pending: URL | undefined;
  /** Scope a 403 insufficient_scope asked for, until tokens that carry it arrive. */
  private stepUpScope: string | undefined;
  readonly addClientAuthentication: OAuthClientProvider["addClientAuthentication"];

  private constructor(
    server: string,
    serverUrl: string,
    config: McpOAuthConfig,
    store: McpAuthStore,
    record: StoredMcpAuth,
    interactive: InteractiveAuthorization | undefined,
    sdk: AuthSdk,
  ) {
    this.sdk = sdk;
    this.server = server;
    this.serverUrl = serverUrl;
    this.config = config;
    this.store = store;
    this.record = record;
    this.interactive = interactive;
    if (config.privateKey && config.clientId)
      this.addClientAuthentication = sdk.createPrivateKeyJwtAuth({
        issuer: config.clientId,
        subject: config.clientId,
        privateKey: config.privateKey,
        alg: config.signingAlgorithm ?? "ES256",
      });
  }

  /** Load the server's stored state. A record made for another URL is ignored (and replaced on save). */
  static async open(
    server: string,
    serverUrl: string,
    config: McpOAuthConfig,
    store: McpAuthStore,
    interactive?: InteractiveAuthorization,
  ): Promise<McpOAuthProvider> {
    const sdk = await loadAuthSdk();
    const loaded = await store.load(server).catch(() => undefined);
    const record: StoredMcpAuth =
      loaded && loaded.version === 1 && loaded.serverUrl === serverUrl
        ? loaded
        : { version: 1, server, serverUrl };
    return new McpOAuthProvider(server, serverUrl, config, store, record, interactive, sdk);
  }

  /** Grants without a person in the loop (no redirect): client_credentials and jwt_bearer. */
  private get clientCredentials(): boolean {
    return this.config.grant === "client_credentials" || this.config.grant === "jwt_bearer";
  }

  get redirectUrl(): string | undefined {
    if (this.clientCredentials) return undefined;
    if (this.interactive) return this.interactive.redirectUrl;
    const registered = (this.record.clientInformation as { redirect_uris?: unknown } | undefined)
      ?.redirect_uris;
    return Array.isArray(registered) && typeof registered[0] === "string"
      ? registered[0]
      : PLACEHOLDER_REDIRECT;
  }

  get clientMetadataUrl(): string | undefined {
    return this.config.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    const scope = this.config.scopes?.join(" ");
    return {
      client_name: this.config.clientName ?? "capgate",
      redirect_uris: redirect ? [redirect] : [],
      grant_types:
        this.config.grant === "jwt_bearer"
          ? [JWT_BEARER_GRANT]
          : this.clientCredentials
            ? ["client_credentials"]
            : ["authorization_code", "refresh_token"],
      response_types: this.clientCredentials ? [] : ["code"],
      token_endpoint_auth_method: this.config.privateKey
        ? "private_key_jwt"
        : this.config.clientSecret
          ? "client_secret_basic"
          : "none",
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    this.lastState = randomState();
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const stored = this.record.clientInformation;
    if (this.config.clientId) {
      // Pre-registered: the config is the truth; a stored copy only adds the SDK's issuer stamp.
      const issuer =
        this.config.authorizationServer ??
        (stored?.client_id === this.config.clientId ? stored.issuer : undefined);
      return {
        client_id: this.config.clientId,
        ...(this.config.clientSecret ? { client_secret: this.config.clientSecret } : {}),
        ...(issuer ? { issuer } : {}),
      };
    }
    if (stored) {
      // A registration made for another loopback port cannot take this redirect: register again.
      const uris = (stored as { redirect_uris?: unknown }).redirect_uris;
      if (
        this.interactive &&
        Array.isArray(uris) &&
        uris.length > 0 &&
        !uris.includes(this.interactive.redirectUrl)
      )
        return undefined;
      return stored;
    }
    // Registering a client is the start of a login; a non-interactive host cannot finish one.
    if (!this.interactive && !this.clientCredentials) throw this.loginRequired();
    return undefined;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.record.clientInformation = info;
    await this.persist();
  }

  tokens(): OAuthTokens | undefined {
    const tokens = this.record.tokens;
    if (!tokens) return undefined;
    // A step-up needs a new authorization: hide the refresh token so auth() does not just
    // refresh (a refresh cannot widen the grant) and then retry with the same scopes.
    if (this.stepUpScope && !this.covers(tokens, this.stepUpScope)) {
      const { refresh_token: _dropped, ...rest } = tokens;
      return rest;
    }
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    // Keep the refresh token when a refresh answer leaves it out (RFC 6749 §6).
    const previous = this.record.tokens;
    const kept =
      tokens.refresh_token === undefined && previous?.refresh_token && previous.issuer === tokens.issuer
        ? { ...tokens, refresh_token: previous.refresh_token }
        : tokens;
    this.record.tokens = kept;
    this.record.tokensSavedAt = Date.now();
    if (this.stepUpScope && this.covers(kept, this.stepUpScope)) this.stepUpScope = undefined;
    await this.persist();
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.interactive) throw this.loginRequired();
    // The URL comes from the server's metadata: whoever shows it (a terminal, the viewer's
    // link) must only ever be handed a web address, never `javascript:` or `file:`.
    if (authorizationUrl.protocol !== "https:" && authorizationUrl.protocol !== "http:")
      throw new McpClientError(
        "mcp_auth_failed",
        `MCP server '${this.server}' named an authorization page with the scheme '${authorizationUrl.protocol}'; only http(s) addresses are shown for a login.`,
        { server: this.server },
      );
    this.pending = authorizationUrl;
    await this.interactive.onAuthorizationUrl(authorizationUrl, this.server);
  }

  saveCodeVerifier(codeVerifier: string): void {
    // In memory only: a login completes in the process that started it.
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier)
      throw new McpClientError(
        "mcp_auth_failed",
        `No login is in progress for MCP server '${this.server}'.`,
        {
          server: this.server,
        },
      );
    return this.verifier;
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    if (!this.clientCredentials) return undefined;
    const wanted = this.stepUpScope ?? scope;
    let params: URLSearchParams;
    if (this.config.grant === "jwt_bearer" && this.config.identityProvider) {
      // auth() saved the discovery state just before asking for the token request.
      const discovery = this.record.discovery;
      const audience = discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl;
      if (!audience)
        throw new McpClientError(
          "mcp_auth_failed",
          `MCP server '${this.server}': no authorization server was discovered for the JWT bearer grant.`,
          { server: this.server },
        );
      const resource = discovery?.resourceMetadata?.resource ?? this.serverUrl;
      const assertion = await requestIdentityAssertion(
        this.server,
        this.config.identityProvider,
        audience,
        resource,
      );
      params = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
    } else params = new URLSearchParams({ grant_type: "client_credentials" });
    if (wanted) params.set("scope", wanted);
    return params;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "client") this.record.clientInformation = undefined;
    if (scope === "all" || scope === "tokens") {
      this.record.tokens = undefined;
      this.record.tokensSavedAt = undefined;
    }
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.record.discovery = undefined;
    await this.persist();
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.record.discovery;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.record.discovery = state;
    await this.persist();
  }

  /** True when an authorization URL was handed out and its redirect is awaited. */
  get authorizationPending(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Wait for the redirect of the pending authorization and hand its code to `finish` (the
   * transport's `finishAuth`, which exchanges it with the PKCE verifier). False when none is pending.
   */
  async completeAuthorization(
    finish: (code: string) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (!this.pending || !this.interactive) return false;
    this.pending = undefined;
    const state = this.lastState;
    if (!state)
      throw new McpClientError("mcp_auth_failed", `The login to MCP server '${this.server}' has no state.`, {
        server: this.server,
      });
    const code = await this.interactive.waitForCode(state, signal);
    await finish(code);
    return true;
  }

  /** Watches answers for 403 insufficient_scope so the next authorization asks for the wider scope. */
  observingFetch(base: FetchLike = fetch): FetchLike {
    return async (url, init) => {
      const response = await base(url, init);
      if (response.status === 403) {
        const { error, scope } = this.sdk.extractWWWAuthenticateParams(response);
        if (error === "insufficient_scope" && scope) this.stepUpScope = this.union(scope);
      }
      return response;
    };
  }

  /** The stored record (for status displays; callers must not print token fields). */
  get stored(): Readonly<StoredMcpAuth> {
    return this.record;
  }

  loginRequired(): McpClientError {
    const why = this.stepUpScope
      ? `needs a new login granting the scope '${this.stepUpScope}'`
      : this.record.tokens
        ? "rejected the stored login and it could not be refreshed"
        : "needs an OAuth login first";
    return new McpClientError(
      "mcp_auth_required",
      `MCP server '${this.server}' ${why}: run \`${loginCommand(this.server)}\`, open the URL it prints, then try again.`,
      { server: this.server, property: `mcpServers.${this.server}.oauth` },
    );
  }

  private covers(tokens: OAuthTokens, scope: string): boolean {
    const granted = new Set(scopesOf(tokens.scope));
    return scopesOf(scope).every((s) => granted.has(s));
  }

  private union(scope: string): string {
    const current = scopesOf(this.record.tokens?.scope);
    return [...new Set([...current, ...scopesOf(scope)])].join(" ");
  }

  private async persist(): Promise<void> {
    await this.store.save(this.server, this.record);
  }
}
