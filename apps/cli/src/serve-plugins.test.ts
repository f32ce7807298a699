// Capability plugins in the long-running commands: `capgate serve` and `capgate mcp serve`
// load the config's `capabilities` and `--capability` exactly as run/call/capabilities do,
// report a broken one by name on stderr and serve the rest — reached over real HTTP
// (/tools/call, /capabilities, the /mcp gate) and over stdio MCP.
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SANDBOX_OFF_WARNING } from "@capgate/harness";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BIN, type Sandbox, sandbox, start, writePlugins } from "./test-support/cli.js";

const TOKEN = "serve-plugins-test-token-0123456789";
const running: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map(stop));
});

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("close", () => resolve());
    child.kill("SIGTERM");
  });
}

/** `capgate … serve` on 127.0.0.1, a free port; resolves with its URL once it listens, and its stderr so far. */
function serve(args: string[], box: Sandbox): Promise<{ url: string; stderr: () => string }> {
  const child = start([...args, "serve", "--port", "0", "--token", TOKEN], box);
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      stdout += d;
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
      if (url) resolve({ url, stderr: () => stderr });
    });
    child.once("close", (code) =>
      reject(new Error(`capgate serve exited ${code} before listening\n${stderr}\n${stdout}`)),
    );
  });
}

const auth = { authorization: `Bearer ${TOKEN}` };

async function callTool(url: string, tool: string, args: Record<string, unknown>) {
  const response = await fetch(`${url}/tools/call`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ tool, arguments: args }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const text = (r: unknown) => ((r as { content: Array<{ text: string }> }).content[0]?.text ?? "") as string;

/** search → load → call of greet.hello through a gate MCP client. */
async function greetThroughGate(client: Client): Promise<void> {
  const search = await client.callTool({
    name: "capability_search",
    arguments: { query: "say hello to a person by name" },
  });
  expect(text(search)).toContain("greet");
  const load = await client.callTool({ name: "capability_load", arguments: { name: "greet" } });
  expect(load.isError).toBeFalsy();
  const call = await client.callTool({
    name: "capability_call",
    arguments: { tool: "greet.hello", arguments: { who: "Grace" } },
  });
  expect(call.isError).toBeFalsy();
  expect(text(call)).toContain("hello Grace");
}

describe("capability plugins in capgate serve", () => {
  it("--capability: a plugin by path answers /tools/call and the /mcp gate's search; a broken one is named on stderr", async () => {
    const box = sandbox();
    const plugins = writePlugins(box.workspace);
    const { url, stderr } = await serve(["--capability", plugins.greet, "--capability", plugins.broken], box);
    expect(stderr()).toMatch(/^warning: capability '\.\/broken\.mjs' not loaded: fails the manifest check/m);

    const hello = await callTool(url, "greet.hello", { who: "Ada" });
    expect(hello.status).toBe(200);
    expect(hello.body).toMatchObject({ success: true, summary: "hello Ada" });
    // Through the same executor as the built-ins: its schema is enforced.
    const bad = await callTool(url, "greet.hello", { whom: "Ada" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: "invalid_arguments" } });

    const listed = (await (await fetch(`${url}/capabilities`, { headers: auth })).json()) as Array<{
      name: string;
    }>;
    expect(listed.map((c) => c.name)).toContain("greet");

    const client = new Client({ name: "test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: auth } }),
    );
    try {
      await greetThroughGate(client);
    } finally {
      await client.close();
    }
  });

  it("the config's capabilities: loaded from the config file's directory", async () => {
    const box = sandbox();
    writePlugins(box.workspace);
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ capabilities: ["./greet.mjs"] }),
    );
    const { url, stderr } = await serve([], box);
    const hello = await callTool(url, "greet.hello", { who: "Lin" });
    expect(hello.body).toMatchObject({ success: true, summary: "hello Lin" });
    expect(stderr()).not.toContain("warning");
  });

  it("without the plugin the tool is unknown (the test above is not passing by accident)", async () => {
    const box = sandbox();
    writePlugins(box.workspace);
    const { url } = await serve([], box);
    const hello = await callTool(url, "greet.hello", { who: "Ada" });
    expect(hello.status).toBe(404);
    expect(hello.body).toMatchObject({ error: { code: "unknown_tool" } });
  });
});

describe("capability plugins in capgate mcp serve", () => {
  it("--capability: search finds the plugin, load and call reach it; a broken one is named on stderr", async () => {
    const box = sandbox();
    const plugins = writePlugins(box.workspace);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "--capability", plugins.greet, "--capability", plugins.broken, "mcp", "serve"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d) => {
      stderr += d;
    });
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    try {
      await greetThroughGate(client);
      expect(stderr).toMatch(/^warning: capability '\.\/broken\.mjs' not loaded: fails the manifest check/m);
    } finally {
      await client.close();
    }
  });

  it("the config's capabilities, from the workspace's capgate.config.json", async () => {
    const box = sandbox();
    writePlugins(box.workspace);
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ capabilities: ["./greet.mjs"] }),
    );
    const client = new Client({ name: "test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, "mcp", "serve", "--workspace", box.workspace],
        cwd: box.workspace,
        env: box.env as Record<string, string>,
        stderr: "ignore",
      }),
    );
    try {
      await greetThroughGate(client);
    } finally {
      await client.close();
    }
  });
});

describe("the long-running commands tell the operator what every command does", () => {
  it("`capgate serve` and `capgate mcp serve` warn that the OS sandbox is off, as run and call do", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ shell: { sandbox: "off" } }));
    const { stderr } = await serve([], box);
    expect(stderr()).toContain(SANDBOX_OFF_WARNING);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--workspace", box.workspace],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "pipe",
    });
    let served = "";
    transport.stderr?.on("data", (d) => {
      served += d;
    });
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      // Its start line follows the notices on stderr, a pipe apart from the MCP channel: wait for it.
      await vi.waitFor(() => expect(served).toContain("capgate mcp serve ·"), { timeout: 30_000 });
      expect(served).toContain(SANDBOX_OFF_WARNING);
    } finally {
      await client.close();
    }
  });
});
