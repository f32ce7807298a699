import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { McpHttpServerConfig } from "./config.js";
import { McpClientError } from "./errors.js";
import { describeAuth } from "./oauth/auth-status.js";
import { McpPool } from "./pool.js";
import type { McpPoolEvent } from "./pool-types.js";
import { fileAuthStore } from "./stdio/file-auth-store.js";
import { loginMcpServer, logoutMcpServer } from "./stdio/login.js";
import { startLoopbackRedirect } from "./stdio/loopback-redirect.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { type OAuthMcpServer, startOAuthMcpServer } from "./test-support/oauth-server.js";

/** The person's browser: open the URL and follow the authorization server's redirect to 127.0.0.1. */
async function browser(url: URL): Promise<void> {
  const answer = await fetch(url, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`no redirect from the authorization endpoint (HTTP ${answer.status})`);
  await fetch(new URL(location, url), { redirect: "manual" });
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<McpClientError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(McpClientError.isInstance(error), String(error)).toBe(true);
  expect((error as McpClientError).code).toBe(code);
  return error as McpClientError;
}

describe("OAuth for url servers (a real OAuth-protected MCP server on the SDK's auth router)", () => {
  let server: OAuthMcpServer;
  let home: string;
  let config: McpHttpServerConfig;
  const shown: URL[] = [];
  const events: McpPoolEvent[] = [];
  const errors: string[] = [];

  const login = () =>
    loginMcpServer("secure", config, {
      store: fileAuthStore(home),
      onAuthorizationUrl: async (url) => {
        shown.push(url);
        await browser(url);
      },
      timeoutMs: 20_000,
    });
  const runPool = () =>
    createNodeMcpPool({ secure: config }, { stateDir: home, onEvent: (e) => events.push(e) });

  beforeAll(async () => {
    server = await startOAuthMcpServer();
    home = await mkdtemp(join(tmpdir(), "capgate-oauth-"));
    config = { url: server.url, oauth: {} };
  });
  afterAll(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  afterEach(() => {
    // Whatever happened, no token value may appear in an event or an error message.
    const secrets = server.issuedValues();
    const text = JSON.stringify(events) + errors.join("\n");
    for (const s of secrets) expect(text.includes(s)).toBe(false);
  });

  it("a run that needs a login fails with mcp_auth_required naming `capgate mcp login`, registering nothing", async () => {
    const pool = runPool();
    try {
      const error = await expectCode(pool.callTool("secure", "whoami", {}), "mcp_auth_required");
      errors.push(error.message);
      expect(error.message).toContain("capgate mcp login secure");
      expect(error.server).toBe("secure");
      expect(server.counts.register).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("login: discovery, dynamic registration, PKCE and the loopback redirect; tokens stored 0600 in a 0700 dir", async () => {
    const result = await login();
    expect(result.tools).toBe(2);
    expect(result.status.state).toBe("logged_in");
    expect(result.status.scopes).toEqual(["mcp"]);
    expect(result.status.refreshable).toBe(true);
    expect(server.counts.register).toBe(1);
    expect(server.counts.authorization_code).toBe(1);
    const url = shown.at(-1) as URL;
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toBeTruthy();
    // RFC 8707: the resource indicator names this MCP server.
    expect(url.searchParams.get("resource")).toBe(server.url);
    const redirect = new URL(url.searchParams.get("redirect_uri") as string);
    expect(redirect.hostname).toBe("127.0.0.1");
    expect(redirect.pathname).toBe("/callback");
    expect(Number(redirect.port)).toBeGreaterThan(0);

    const dir = join(home, "mcp-auth");
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "secure.json"))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["secure.json"]);
  });

  it("a non-interactive pool uses the stored login; tokens go only in the Authorization header of its own server", async () => {
    const pool = runPool();
    try {
      const r = await pool.callTool("secure", "whoami", {});
      expect(r.success).toBe(true);
      expect(JSON.parse(r.summary)).toMatchObject({ scopes: ["mcp"] });
    } finally {
      await pool.close();
    }
    const secrets = server.issuedValues();
    for (const request of server.requests)
      for (const s of secrets) expect(request.url.includes(s)).toBe(false);
    const bearer = server.requests.filter((r) => r.authorization?.startsWith("Bearer "));
    expect(bearer.length).toBeGreaterThan(0);
    for (const r of bearer) expect(r.url.startsWith("/mcp")).toBe(true);
  });

  it("an expired access token is refreshed without a login, and the new one is stored", async () => {
    const before = JSON.parse(await readFile(join(home, "mcp-auth/secure.json"), "utf8"));
    server.expireAccessTokens();
    const refreshes = server.counts.refresh_token;
    const pool = runPool();
    try {
      expect((await pool.callTool("secure", "whoami", {})).success).toBe(true);
    } finally {
      await pool.close();
    }
    expect(server.counts.refresh_token).toBe(refreshes + 1);
    const after = JSON.parse(await readFile(join(home, "mcp-auth/secure.json"), "utf8"));
    expect(after.tokens.access_token).not.toBe(before.tokens.access_token);
    expect(after.tokens.refresh_token).not.toBe(before.tokens.refresh_token);
  });

  it("step-up: a 403 insufficient_scope in a run asks for a new login naming the scope", async () => {
    const pool = runPool();
    try {
      const error = await expectCode(pool.callTool("secure", "admin", {}), "mcp_auth_required");
      errors.push(error.message);
      expect(error.message).toContain("admin");
      expect(error.message).toContain("capgate mcp login secure");
      // The session survives: calls within the granted scope still work.
      expect((await pool.callTool("secure", "whoami", {})).success).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it("step-up with a person at hand: the wider scope is authorized and the refused call goes through", async () => {
    const loopback = await startLoopbackRedirect({
      onAuthorizationUrl: (url) => browser(url),
      timeoutMs: 20_000,
    });
    const pool = new McpPool(
      { secure: config },
      { authStore: fileAuthStore(home), interactiveAuth: loopback, onEvent: (e) => events.push(e) },
    );
    try {
      const r = await pool.callTool("secure", "admin", {});
      expect(r.success).toBe(true);
      expect(r.summary).toMatch(/^admin ok/);
      expect(server.lastAuthorizationScopes().sort()).toEqual(["admin", "mcp"]);
    } finally {
      await pool.close();
      await loopback.close();
    }
  });

  it("a revoked login (access and refresh token) fails with mcp_auth_required, not a connection error", async () => {
    server.revokeAll();
    const pool = runPool();
    try {
      const error = await expectCode(pool.callTool("secure", "whoami", {}), "mcp_auth_required");
      errors.push(error.message);
      expect(error.message).toContain("capgate mcp login secure");
    } finally {
      await pool.close();
    }
    // A new login reuses the dynamic registration (same loopback port) and works again.
    const registrations = server.counts.register;
    expect((await login()).status.state).toBe("logged_in");
    expect(server.counts.register).toBe(registrations);
  });

  it("logout removes the stored login; the next run needs a login again", async () => {
    expect(await logoutMcpServer("secure", fileAuthStore(home))).toBe(true);
    expect(await readdir(join(home, "mcp-auth"))).toEqual([]);
    expect(describeAuth(config, await fileAuthStore(home).load("secure")).state).toBe("logged_out");
    const pool = runPool();
    try {
      errors.push((await expectCode(pool.callTool("secure", "whoami", {}), "mcp_auth_required")).message);
    } finally {
      await pool.close();
    }
  });

  it("stored tokens are never sent to another URL under the same server name", async () => {
    await login();
    const other = await startOAuthMcpServer();
    try {
      const moved: McpHttpServerConfig = { url: other.url, oauth: {} };
      const pool = createNodeMcpPool({ secure: moved }, { stateDir: home });
      try {
        errors.push((await expectCode(pool.callTool("secure", "whoami", {}), "mcp_auth_required")).message);
      } finally {
        await pool.close();
      }
      const ours = server.issuedValues();
      for (const r of other.requests) for (const s of ours) expect(r.authorization ?? "").not.toContain(s);
    } finally {
      await other.close();
    }
  });
});

describe("client_credentials (machine to machine)", () => {
  it("gets a token with the configured client and no person", async () => {
    const server = await startOAuthMcpServer({
      preRegistered: { clientId: "robot", clientSecret: "s3cret-value" },
    });
    const pool = new McpPool({
      m2m: {
        url: server.url,
        oauth: { grant: "client_credentials", clientId: "robot", clientSecret: "s3cret-value" },
      },
    });
    try {
      const r = await pool.callTool("m2m", "whoami", {});
      expect(JSON.parse(r.summary)).toMatchObject({ clientId: "robot" });
      expect(server.counts.client_credentials).toBe(1);
      expect(server.counts.register).toBe(0);
      for (const request of server.requests) expect(request.url).not.toContain("s3cret-value");
    } finally {
      await pool.close();
      await server.close();
    }
  });

  it("a wrong secret is an auth error naming the server, without the secret", async () => {
    const server = await startOAuthMcpServer({ preRegistered: { clientId: "robot", clientSecret: "right" } });
    const pool = new McpPool({
      m2m: {
        url: server.url,
        oauth: { grant: "client_credentials", clientId: "robot", clientSecret: "wrong-secret" },
      },
    });
    try {
      const error = await pool.callTool("m2m", "whoami", {}).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as McpClientError).code).toBe("mcp_auth_failed");
      expect((error as Error).message).toContain("m2m");
      expect((error as Error).message).not.toContain("wrong-secret");
    } finally {
      await pool.close();
      await server.close();
    }
  });
});
