import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { chromium } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "./index.js";
import { CHROMIUM } from "./test-support/server-process.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-mcp-ui-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A stdio MCP server (raw JSON-RPC) whose tool asks for a form and returns the answer it got.
const ASKER = `
import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const pending = new Map();
let n = 0;
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asker", version: "1" } } });
  else if (m.method === "tools/list")
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", description: "Asks the operator.", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") {
    const id = "e" + ++n;
    pending.set(id, m.id);
    send({ jsonrpc: "2.0", id, method: "elicitation/create", params: { mode: "form", message: "Deploy where?", requestedSchema: { type: "object", properties: { region: { type: "string", enum: ["eu", "us"] }, replicas: { type: "integer", default: 2 } }, required: ["region"] } } });
  } else if (pending.has(m.id)) {
    send({ jsonrpc: "2.0", id: pending.get(m.id), result: { content: [{ type: "text", text: JSON.stringify(m.result ?? m.error) }] } });
    pending.delete(m.id);
  }
});
`;

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not reached");
}

describe("MCP elicitations and logins over the server API", () => {
  it("parks an elicitation for the operator, checks the answer against the form, and passes accept/decline on", async () => {
    const script = join(root, "asker.mjs");
    writeFileSync(script, ASKER);
    const server = await startServer({
      port: 0,
      workspace: root,
      stateDir: join(root, "state-elicit"),
      env: {},
      config: { mcpServers: { asker: { command: process.execPath, args: [script] } } },
    });
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${server.token}`,
          "content-type": "application/json",
          ...init.headers,
        },
      });
    type Pending = {
      elicitationId: string;
      server: string;
      message: string;
      fields: Array<{ name: string }>;
    };
    const nextPending = () =>
      until(async () => {
        const { elicitations } = (await (await api("/elicitations")).json()) as { elicitations: Pending[] };
        return elicitations[0];
      });
    try {
      const call = api("/tools/call", {
        method: "POST",
        body: JSON.stringify({ tool: "asker/ask", arguments: {} }),
      });
      const pending = await nextPending();
      expect(pending).toMatchObject({ server: "asker", message: "Deploy where?" });
      expect(pending.fields.map((f) => f.name)).toEqual(["region", "replicas"]);

      const wrong = await api(`/elicitations/${pending.elicitationId}`, {
        method: "POST",
        body: JSON.stringify({ action: "accept", content: { region: "mars" } }),
      });
      expect(wrong.status).toBe(400);
      expect(((await wrong.json()) as { error: { property: string } }).error.property).toBe("content.region");

      const ok = await api(`/elicitations/${pending.elicitationId}`, {
        method: "POST",
        body: JSON.stringify({ action: "accept", content: { region: "eu" } }),
      });
      expect(ok.status).toBe(200);
      const result = (await (await call).json()) as { summary: string };
      // The default the operator left out is filled in by the client.
      expect(JSON.parse(result.summary)).toEqual({
        action: "accept",
        content: { region: "eu", replicas: 2 },
      });

      const second = api("/tools/call", {
        method: "POST",
        body: JSON.stringify({ tool: "asker/ask", arguments: {} }),
      });
      const again = await nextPending();
      await api(`/elicitations/${again.elicitationId}`, {
        method: "POST",
        body: JSON.stringify({ action: "decline" }),
      });
      expect(JSON.parse(((await (await second).json()) as { summary: string }).summary)).toEqual({
        action: "decline",
      });
      expect(
        (await api(`/elicitations/${again.elicitationId}`, { method: "POST", body: '{"action":"decline"}' }))
          .status,
      ).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("lists OAuth servers' login state and starts a login, answering with the authorization URL", async () => {
    // An authorization server + protected MCP endpoint, just enough to reach the browser step.
    const upstream = createServer((req, res) => {
      const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      if (req.url === "/.well-known/oauth-authorization-server") {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            registration_endpoint: `${base}/register`,
            response_types_supported: ["code"],
            code_challenge_methods_supported: ["S256"],
          }),
        );
      } else if (req.url === "/register" && req.method === "POST") {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          res
            .writeHead(201, { "content-type": "application/json" })
            .end(JSON.stringify({ ...JSON.parse(body), client_id: "dcr-client" }));
        });
      } else
        res
          .writeHead(req.url?.startsWith("/.well-known") ? 404 : 401, { "www-authenticate": "Bearer" })
          .end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", () => resolve()));
    const mcpUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
    const server = await startServer({
      port: 0,
      workspace: root,
      stateDir: join(root, "state-login"),
      env: {},
      config: { mcpServers: { hosted: { url: mcpUrl, oauth: {} }, local: { command: process.execPath } } },
    });
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${server.token}`, ...init.headers },
      });
    try {
      const before = (await (await api("/mcp-logins")).json()) as {
        logins: Array<{ server: string; auth: { state: string } }>;
      };
      expect(before.logins).toEqual([
        { server: "hosted", auth: { state: "logged_out", grant: "authorization_code" } },
      ]);
      expect((await api("/mcp-logins/local", { method: "POST" })).status).toBe(404);

      const started = (await (await api("/mcp-logins/hosted", { method: "POST" })).json()) as {
        authorizationUrl: string;
      };
      const url = new URL(started.authorizationUrl);
      expect(url.pathname).toBe("/authorize");
      expect(url.searchParams.get("client_id")).toBe("dcr-client");
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
      expect(new URL(url.searchParams.get("redirect_uri") as string).hostname).toBe("127.0.0.1");
      const during = (await (await api("/mcp-logins")).json()) as {
        logins: Array<{ pending?: { authorizationUrl: string } }>;
      };
      expect(during.logins[0]?.pending?.authorizationUrl).toBe(started.authorizationUrl);
      // Asking again while it waits gives the same login, not a second listener.
      const again = (await (await api("/mcp-logins/hosted", { method: "POST" })).json()) as {
        authorizationUrl: string;
      };
      expect(again.authorizationUrl).toBe(started.authorizationUrl);
    } finally {
      await server.close();
      upstream.close();
    }
  });
});

const chromiumPart = needs(["chromium"]);
describe.skipIf(chromiumPart.skip)(`the viewer shows pending MCP requests${chromiumPart.note}`, () => {
  it("an operator answers a server's form from the page (defaults kept), as text, never as markup", async () => {
    const script = join(root, "asker-viewer.mjs");
    writeFileSync(
      script,
      ASKER.replace("Deploy where?", "<img src=x onerror='window.__pwned=1'> Deploy where?"),
    );
    const server = await startServer({
      port: 0,
      workspace: root,
      stateDir: join(root, "state-viewer"),
      env: {},
      config: { mcpServers: { asker: { command: process.execPath, args: [script] } } },
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu"],
    });
    try {
      const call = fetch(`${server.url}/tools/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "asker/ask", arguments: {} }),
      });
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      page.on("console", (m) => pageErrors.push(m.text()));
      await page.goto(`${server.url}/#token=${encodeURIComponent(server.token)}`);
      const form = page.locator("form.elicitation");
      await form.waitFor({ timeout: 15_000 }).catch((error: unknown) => {
        throw new Error(`${String(error)}; page said: ${pageErrors.join(" | ")}`);
      });
      expect(await form.locator(".event-title").textContent()).toContain(
        "<img src=x onerror='window.__pwned=1'>",
      );
      await form.locator('[data-field="region"]').selectOption("us");
      await form.getByRole("button", { name: "Send" }).click();
      const result = (await (await call).json()) as { summary: string };
      expect(JSON.parse(result.summary)).toEqual({
        action: "accept",
        content: { region: "us", replicas: 2 },
      });
      await form.waitFor({ state: "detached" });
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
    } finally {
      await browser.close();
      await server.close();
    }
  }, 60_000);
});
