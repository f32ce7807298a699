import { randomBytes } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from "@modelcontextprotocol/sdk/server/auth/provider.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import express, { type Request, type Response } from "express";

interface Grant {
  clientId: string;
  scopes: string[];
  resource?: string | undefined;
}
interface IssuedToken extends Grant {
  expiresAt: number;
  revoked: boolean;
}

export interface OAuthMcpServer {
  /** The MCP endpoint (Streamable HTTP), behind bearer auth. */
  url: string;
  /** Issuer URL of the authorization server (same origin). */
  issuer: string;
  /** Every request the server saw: method, URL (path + query) and its Authorization header. */
  requests: Array<{ method: string; url: string; authorization?: string | undefined }>;
  /** Every access and refresh token value issued so far (for "never logged" greps). */
  issuedValues(): string[];
  /** Counts of token endpoint calls by grant type, and of dynamic registrations. */
  counts: { authorization_code: number; refresh_token: number; client_credentials: number; register: number };
  /** Scopes of the last authorization request. */
  lastAuthorizationScopes(): string[];
  /** Make every issued access token expired (refresh tokens stay valid). */
  expireAccessTokens(): void;
  /** Revoke every access and refresh token (a new login is needed). */
  revokeAll(): void;
  close(): Promise<void>;
}

export interface OAuthMcpServerOptions {
  /** Access token lifetime in seconds (default 3600). */
  ttlSeconds?: number;
  /** A pre-registered confidential client (also allowed the client_credentials grant). */
  preRegistered?: { clientId: string; clientSecret: string };
  /** Scopes a new login asks for (PRM scopes_supported; default ["mcp"]). The `admin` tool also needs "admin". */
  scopesSupported?: string[];
}

function token(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * A real OAuth-protected MCP server on 127.0.0.1 built on the SDK's own server auth pieces:
 * `mcpAuthRouter` (RFC 8414 + RFC 9728 metadata, dynamic registration, /authorize with
 * PKCE, /token, /revoke) over an in-memory OAuthServerProvider, and `requireBearerAuth` in
 * front of a Streamable HTTP MCP endpoint. Its /authorize approves at once and redirects to
 * the client's redirect URI (the test plays the browser). Tools: `whoami` (the token's
 * client and scopes) and `admin`, which needs the scope "admin" (403 insufficient_scope otherwise).
 */
export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  const ttl = options.ttlSeconds ?? 3600;
  const scopesSupported = options.scopesSupported ?? ["mcp"];
  const requests: OAuthMcpServer["requests"] = [];
  const clients = new Map<string, OAuthClientInformationFull>();
  if (options.preRegistered)
    clients.set(options.preRegistered.clientId, {
      client_id: options.preRegistered.clientId,
      client_secret: options.preRegistered.clientSecret,
      redirect_uris: [],
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      token_endpoint_auth_method: "client_secret_basic",
    });
  const codes = new Map<string, Grant & { challenge: string; redirectUri: string }>();
  const access = new Map<string, IssuedToken>();
  const refresh = new Map<string, IssuedToken>();
  const counts = { authorization_code: 0, refresh_token: 0, client_credentials: 0, register: 0 };
  let lastScopes: string[] = [];

  const issue = (grant: Grant): OAuthTokens => {
    const a = token();
    const r = token();
    const expiresAt = Math.floor(Date.now() / 1000) + ttl;
    access.set(a, { ...grant, expiresAt, revoked: false });
    refresh.set(r, { ...grant, expiresAt: Number.MAX_SAFE_INTEGER, revoked: false });
    return {
      access_token: a,
      token_type: "bearer",
      expires_in: ttl,
      refresh_token: r,
      scope: grant.scopes.join(" "),
    };
  };
  const invalidGrant = (what: string) => Object.assign(new Error(what), { name: "InvalidGrantError" });

  const provider: OAuthServerProvider = {
    clientsStore: {
      getClient: (id) => clients.get(id),
      registerClient: (client) => {
        counts.register++;
        const id = `dcr-${token()}`;
        // Registered without a scope restriction, so a later step-up may ask for more.
        const { scope: _ignored, ...rest } = client;
        const full = { ...rest, client_id: id, client_id_issued_at: Math.floor(Date.now() / 1000) };
        clients.set(id, full);
        return full;
      },
    },
    async authorize(client, params: AuthorizationParams, res) {
      lastScopes = params.scopes ?? [];
      const code = token();
      codes.set(code, {
        clientId: client.client_id,
        scopes: lastScopes,
        resource: params.resource?.href,
        challenge: params.codeChallenge,
        redirectUri: params.redirectUri,
      });
      const target = new URL(params.redirectUri);
      target.searchParams.set("code", code);
      if (params.state) target.searchParams.set("state", params.state);
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const grant = codes.get(code);
      if (!grant) throw invalidGrant("unknown authorization code");
      return grant.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri) {
      const grant = codes.get(code);
      codes.delete(code);
      if (!grant || grant.clientId !== client.client_id) throw invalidGrant("unknown authorization code");
      if (redirectUri !== undefined && redirectUri !== grant.redirectUri)
        throw invalidGrant("redirect_uri mismatch");
      counts.authorization_code++;
      return issue(grant);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const grant = refresh.get(refreshToken);
      if (!grant || grant.revoked || grant.clientId !== client.client_id)
        throw invalidGrant("refresh token revoked");
      counts.refresh_token++;
      // Rotation: the old refresh token stops working.
      grant.revoked = true;
      return issue({ clientId: grant.clientId, scopes: grant.scopes, resource: grant.resource });
    },
    async verifyAccessToken(value): Promise<AuthInfo> {
      const t = access.get(value);
      if (!t || t.revoked) {
        const { InvalidTokenError } = await import("@modelcontextprotocol/sdk/server/auth/errors.js");
        throw new InvalidTokenError("Token is not valid");
      }
      return {
        token: value,
        clientId: t.clientId,
        scopes: t.scopes,
        expiresAt: t.expiresAt,
        ...(t.resource ? { resource: new URL(t.resource) } : {}),
      };
    },
  };

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  const http: HttpServer = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL("/mcp", base);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);

  const app = express();
  app.use((req, _res, next) => {
    requests.push({ method: req.method, url: req.originalUrl, authorization: req.headers.authorization });
    next();
  });
  // client_credentials for the pre-registered client (the SDK's token handler has no such grant).
  app.post("/token", express.urlencoded({ extended: false }), (req: Request, res: Response, next) => {
    if (req.body?.grant_type !== "client_credentials") return next();
    const pre = options.preRegistered;
    // client_secret_basic or client_secret_post, whichever the client picked from the metadata.
    const basic = (req.headers.authorization ?? "").replace(/^Basic /, "");
    const [id, secret] = basic
      ? Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent)
      : [req.body.client_id, req.body.client_secret];
    if (!pre || id !== pre.clientId || secret !== pre.clientSecret) {
      res.status(401).json({ error: "invalid_client" });
      return;
    }
    counts.client_credentials++;
    const tokens = issue({
      clientId: pre.clientId,
      scopes: String(req.body.scope ?? scopesSupported.join(" "))
        .split(" ")
        .filter(Boolean),
      resource: typeof req.body.resource === "string" ? req.body.resource : undefined,
    });
    const { refresh_token: _none, ...withoutRefresh } = tokens;
    res.json(withoutRefresh);
  });
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      scopesSupported,
      // Tests log in many times from one address.
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  const plainAuth = requireBearerAuth({ verifier: provider, resourceMetadataUrl, expectedResource: mcpUrl });
  const adminAuth = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl,
    expectedResource: mcpUrl,
    requiredScopes: [...scopesSupported, "admin"],
  });
  app.post(
    "/mcp",
    express.json(),
    (req, res, next) => {
      const body = req.body as { method?: string; params?: { name?: string } } | undefined;
      const admin = body?.method === "tools/call" && body.params?.name === "admin";
      (admin ? adminAuth : plainAuth)(req, res, next);
    },
    async (req: Request, res: Response) => {
      const auth = req.auth as AuthInfo;
      const server = new Server({ name: "oauth-test", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          { name: "whoami", description: "The token's client and scopes.", inputSchema: { type: "object" } },
          { name: "admin", description: "Needs the admin scope.", inputSchema: { type: "object" } },
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => ({
        content: [
          {
            type: "text",
            text:
              request.params.name === "admin"
                ? `admin ok for ${auth.clientId}`
                : JSON.stringify({ clientId: auth.clientId, scopes: auth.scopes }),
          },
        ],
      }));
      // Stateless: one server and transport per POST.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  app.all("/mcp", (_req, res) => {
    res.status(405).set("allow", "POST").end();
  });
  handler = app;

  return {
    url: mcpUrl.href,
    issuer: base,
    requests,
    counts,
    issuedValues: () => [...access.keys(), ...refresh.keys()],
    lastAuthorizationScopes: () => [...lastScopes],
    expireAccessTokens() {
      for (const t of access.values()) t.expiresAt = Math.floor(Date.now() / 1000) - 10;
    },
    revokeAll() {
      for (const t of access.values()) t.revoked = true;
      for (const t of refresh.values()) t.revoked = true;
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
