import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHROMIUM,
  FAULT_MCP_SERVER,
  type ServerProcess,
  startServerProcess,
} from "./test-support/server-process.js";

interface ErrorJson {
  error: { code: string; message: string; property?: string };
}

interface ToolJson {
  success: boolean;
  summary: string;
  data?: unknown;
  via: "native" | "mcp";
  server?: string;
}

const FILES = 100;
let server: ServerProcess;
let site: Server;
let siteOrigin: string;

beforeAll(async () => {
  // A local site for the browser panel: page one links to page two.
  site = createServer((req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    if (req.url === "/two") res.end("<!doctype html><title>Two</title><h1>Second page reached</h1>");
    else
      res.end('<!doctype html><title>One</title><h1>First page</h1><a id="next" href="/two">Next page</a>');
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteOrigin = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`many/file-${i}.txt`] = `content of file number ${i}\n`;
  server = await startServerProcess({
    files,
    config: {
      mcpServers: { fault: { command: process.execPath, args: [FAULT_MCP_SERVER], timeoutMs: 20_000 } },
      web: { allowHosts: [siteOrigin] },
      browser: { executablePath: CHROMIUM },
    },
  });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await new Promise((resolve) => site?.close(resolve));
});

const call = async (body: unknown) => {
  const response = await server.api("/tools/call", { body });
  return { status: response.status, json: (await response.json()) as ToolJson & ErrorJson };
};

describe("capabilities", () => {
  it("lists the manifests", async () => {
    const response = await server.api("/capabilities");
    const manifests = (await response.json()) as Array<{ name: string; tools: unknown[] }>;
    expect(manifests.map((m) => m.name)).toEqual(
      expect.arrayContaining([
        "fs",
        "shell",
        "git",
        "web",
        "browser_panel",
        "cua",
        "mcp",
        "workers",
        "memory",
        "code",
      ]),
    );
    // Each tool with the one-line signature search hits and `capgate capabilities --json` give.
    const fs = manifests.find((m) => m.name === "fs") as {
      tools: Array<{ name: string; signature: string }>;
    };
    expect(fs.tools.find((t) => t.name === "fs.read")?.signature).toMatch(/^fs\.read\(path: string/);
  });

  it("searches with ranked hits", async () => {
    const response = await server.api("/capabilities/search?q=read%20files&limit=3");
    expect(response.status).toBe(200);
    const hits = (await response.json()) as Array<{
      capability: string;
      tools: Array<{ signature: string }>;
    }>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits[0]?.capability).toBe("fs");
  });

  it("names the bad query parameter", async () => {
    const missing = await server.api("/capabilities/search");
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as ErrorJson).error.property).toBe("q");
    const limit = await server.api("/capabilities/search?q=files&limit=99");
    expect(limit.status).toBe(400);
    expect(((await limit.json()) as ErrorJson).error.property).toBe("limit");
  });
});

describe("POST /tools/call", () => {
  it("runs a tool and returns its ToolResult with via", async () => {
    const { status, json } = await call({ tool: "fs.read", arguments: { path: "many/file-7.txt" } });
    expect(status).toBe(200);
    expect(json.success).toBe(true);
    expect(json.via).toBe("native");
    expect(json.summary).toContain("content of file number 7");
  });

  it("returns a tool failure as 200 with success false", async () => {
    const { status, json } = await call({ tool: "fs.read", arguments: { path: "no-such-file.txt" } });
    expect(status).toBe(200);
    expect(json.success).toBe(false);
  });

  it("answers 400 invalid_arguments naming the property", async () => {
    const { status, json } = await call({ tool: "fs.read", arguments: { path: "a.txt", limt: 3 } });
    expect(status).toBe(400);
    expect(json.error.code).toBe("invalid_arguments");
    expect(json.error.property).toBe("arguments.limt");
    expect(json.error.message).toContain("limit");
  });

  it("answers 404 unknown_tool with a suggestion", async () => {
    const { status, json } = await call({ tool: "fs.raed", arguments: { path: "a.txt" } });
    expect(status).toBe(404);
    expect(json.error.code).toBe("unknown_tool");
    expect(json.error.message).toContain("fs.read");
  });

  it("answers 403 policy_denied for a GUI opener through the shell", async () => {
    const { status, json } = await call({
      tool: "shell.run",
      arguments: { command: "xdg-open https://example.com" },
    });
    expect(status).toBe(403);
    expect(json.error.code).toBe("policy_denied");
    expect(json.error.message).toContain("browser_panel.open");
  });

  it("answers 403 for a path outside the workspace", async () => {
    const { status, json } = await call({ tool: "fs.read", arguments: { path: "../../../etc/passwd" } });
    expect(status).toBe(403);
    expect(json.error.code).toBe("policy_denied");
  });

  it("answers 400 for an unknown profile", async () => {
    const { status, json } = await call({ tool: "fs.read", arguments: { path: "a.txt" }, profile: "Hacker" });
    expect(status).toBe(400);
    expect(json.error.code).toBe("unknown_profile");
    expect(json.error.property).toBe("profile");
  });

  it("keeps 100 concurrent calls apart: each gets its own file", async () => {
    const results = await Promise.all(
      Array.from({ length: FILES }, (_, i) =>
        call({ tool: "fs.read", arguments: { path: `many/file-${i}.txt` } }),
      ),
    );
    results.forEach(({ status, json }, i) => {
      expect(status).toBe(200);
      expect(json.summary).toMatch(new RegExp(`file-${i}\\.txt[\\s\\S]*content of file number ${i}(?!\\d)`));
      const others = json.summary.match(/file number \d+/g) ?? [];
      expect(others).toEqual([`file number ${i}`]);
    });
  }, 60_000);
});

describe("MCP routing through the gateway", () => {
  it("routes <server>/<tool> to the configured server over the pooled session", async () => {
    const first = await call({ tool: "fault/echo", arguments: { text: "one" } });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ success: true, via: "mcp", server: "fault" });
    expect(first.json.summary).toContain("echo: one");
  });

  it("fails fast with a clear error when the MCP server crashes mid-call, and keeps serving", async () => {
    const crashed = await call({ tool: "fault/crash", arguments: {} });
    expect(crashed.status).toBeGreaterThanOrEqual(500);
    expect(crashed.json.error.code).toMatch(/^mcp_/);
    expect(crashed.json.error.message).toMatch(/fault/);
    // The server is fine and the next call reconnects.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const again = await call({ tool: "fault/echo", arguments: { text: "two" } });
    expect(again.status).toBe(200);
    expect(again.json.summary).toContain("echo: two");
  }, 40_000);
});

const chromiumPart = needs(["chromium"]);

describe.skipIf(chromiumPart.skip)(`one browser panel across requests${chromiumPart.note}`, () => {
  it("opens, clicks and snapshots over three requests on the same page", async () => {
    const opened = await call({ tool: "browser_panel.open", arguments: { url: `http://${siteOrigin}/` } });
    expect(opened.status, JSON.stringify(opened.json)).toBe(200);
    expect(opened.json.success, opened.json.summary).toBe(true);
    expect(opened.json.summary).toContain("First page");
    const clicked = await call({ tool: "browser_panel.click", arguments: { target: "#next" } });
    expect(clicked.json.success, clicked.json.summary).toBe(true);
    const snapshot = await call({ tool: "browser_panel.snapshot", arguments: {} });
    expect(snapshot.json.success, snapshot.json.summary).toBe(true);
    expect(snapshot.json.summary).toContain("Second page reached");
    await call({ tool: "browser_panel.close", arguments: {} });
  }, 90_000);
});
