import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, sandbox } from "./test-support/cli.js";

// A stdio MCP server (raw JSON-RPC) whose tool asks the client for a form and returns the answer.
const ELICIT_SERVER = `
import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let pending;
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "asker", version: "1" } } });
  else if (m.method === "tools/list")
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", description: "Asks the person.", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") {
    pending = m.id;
    send({ jsonrpc: "2.0", id: "e1", method: "elicitation/create", params: { mode: "form", message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } });
  } else if (m.id === "e1")
    send({ jsonrpc: "2.0", id: pending, result: { content: [{ type: "text", text: JSON.stringify(m.result ?? m.error) }] } });
});
`;

describe("capgate mcp login / logout / status", () => {
  it("status shows each configured server's transport and login state (--offline, --json)", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({
        mcpServers: {
          local: { command: process.execPath, args: ["-e", ""] },
          hosted: { url: "https://mcp.example.com/mcp", oauth: {} },
          off: { url: "https://old.example.com/mcp", enabled: false },
        },
      }),
    );
    const r = await cli(["mcp", "status", "--offline", "--json"], box);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{
      server: string;
      transport: string;
      enabled: boolean;
      auth: { state: string };
    }>;
    expect(rows.map((row) => [row.server, row.transport, row.enabled, row.auth.state])).toEqual([
      ["local", "stdio", true, "none"],
      ["hosted", "http", true, "logged_out"],
      ["off", "http", false, "none"],
    ]);
    const text = await cli(["mcp", "status", "--offline"], box);
    expect(text.stdout).toContain("hosted (http) · not checked · auth: logged out");
    expect((await cli(["mcp", "logout", "hosted"], box)).stdout).toContain("had no stored login");
  });

  it("login refuses an unknown server and a server without oauth, naming what to change", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ mcpServers: { local: { command: process.execPath, args: ["-e", ""] } } }),
    );
    const unknown = await cli(["mcp", "login", "nope"], box);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no MCP server named 'nope'");
    expect(unknown.stderr).toContain("local");
    const stdio = await cli(["mcp", "login", "local"], box);
    expect(stdio.code).not.toBe(0);
    expect(stdio.stderr).toContain('"oauth"');
  });

  it("a call to a server that needs a login fails with the login command, not a stack", async () => {
    // Answers every request with 401 and a Bearer challenge, as an OAuth-protected server does.
    const server = createServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    try {
      const box = sandbox();
      writeFileSync(
        join(box.workspace, "capgate.config.json"),
        JSON.stringify({ mcpServers: { locked: { url, oauth: {} } } }),
      );
      const r = await cli(["call", "locked/anything", "{}"], box);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("capgate mcp login locked");
      const status = await cli(["mcp", "status", "--json", "--timeout", "10000"], box);
      const [row] = JSON.parse(status.stdout) as Array<{ connection: { state: string; code?: string } }>;
      expect(row?.connection).toMatchObject({ state: "failed", code: "mcp_auth_required" });
      // A server that did not connect makes the command fail (exit 1), so scripts notice.
      expect(status.code).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe("configured servers from the mcp commands start as a run starts them", () => {
  // Found: `mcp status` built its own pool from the config, so a server marked
  // `sandbox: true` started outside the sandbox (and without the host PATH) when an operator
  // checked it. Every mcp command now starts configured servers through the harness.
  const FEATURE = join(import.meta.dirname, "../../../packages/mcp-client/test/fixtures/feature-server.mjs");

  it("status, tools <name> and capabilities show keep a sandboxed server's sandbox: without bubblewrap it does not start", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({
        shell: { bwrap: join(box.root, "no-bwrap") },
        mcpServers: { boxed: { command: process.execPath, args: [FEATURE], sandbox: true } },
      }),
    );
    const status = await cli(["mcp", "status", "--json", "--timeout", "20000"], box);
    const [row] = JSON.parse(status.stdout) as Array<{
      server: string;
      connection: { state: string; error?: string };
    }>;
    expect(row?.connection.state, status.stdout).toBe("failed");
    expect(row?.connection.error).toMatch(/bubblewrap is not installed/);
    expect(status.code).toBe(1);
    const tools = await cli(["mcp", "tools", "boxed"], box);
    expect(tools.code).not.toBe(0);
    expect(tools.stderr).toMatch(/bubblewrap is not installed/);
  }, 60_000);

  it("tools <name> lists a configured server live, and capabilities show mcp:<name> works on a fresh state dir", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ mcpServers: { feat: { command: process.execPath, args: [FEATURE] } } }),
    );
    const show = await cli(["capabilities", "show", "mcp:feat", "--json"], box);
    expect(show.code, show.stderr).toBe(0);
    expect(
      (JSON.parse(show.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name),
    ).toContain("feat/alpha");
    const tools = await cli(["mcp", "tools", "feat", "--json"], box);
    expect(tools.code, tools.stderr).toBe(0);
    expect((JSON.parse(tools.stdout) as Array<{ name: string }>).map((t) => t.name)).toContain("alpha");
    const unknown = await cli(["mcp", "tools", "nope"], box);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no MCP server named 'nope' in the config (configured: feat)");
    const both = await cli(["mcp", "tools", "feat", "--command", "node x.js"], box);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("not both");
  }, 60_000);
});

describe("elicitation in the CLI", () => {
  it("without a terminal, a server's form request is declined and the person is told why", async () => {
    const box = sandbox();
    const script = join(box.root, "asker.mjs");
    writeFileSync(script, ELICIT_SERVER);
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ mcpServers: { asker: { command: process.execPath, args: [script] } } }),
    );
    const r = await cli(["call", "asker/ask", "{}"], box);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ action: "decline" });
    expect(r.stderr).toContain("input requested by MCP server asker: Your name? — declined: no terminal");
  });
});
