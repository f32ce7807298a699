// Reload without restart: `capgate mcp serve` (stdio) and `capgate serve` (HTTP), started
// as a user starts them, put an edited capgate.config.json in force — servers added,
// removed, changed — while unchanged servers keep their processes and sessions, and an
// invalid edit is refused on stderr with the loader's own error.
import type { ChildProcess } from "node:child_process";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@capgate/harness";
import { processesWith } from "@capgate/test-system-parts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, type Sandbox, sandbox, start } from "./test-support/cli.js";

const STATE_SERVER = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "packages",
  "mcp-client",
  "test",
  "fixtures",
  "state-server.mjs",
);
const EVERYTHING = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const stateServer = (marker: string) => ({ command: process.execPath, args: [STATE_SERVER, marker] });
const everything = { command: process.execPath, args: [EVERYTHING, "stdio"] };
const TOKEN = "config-reload-test-token-0123456789";

const running: ChildProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(running.splice(0).map(stop));
});

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("close", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * The config file, outside the workspace (one in it is not watched: the model can write
 * there), written as editors save it: a new file renamed over the old one.
 */
function configPath(box: Sandbox): string {
  return join(box.root, "capgate.config.json");
}

function writeConfig(box: Sandbox, value: unknown): string {
  const path = configPath(box);
  writeFileSync(`${path}.tmp`, typeof value === "string" ? value : JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
  return path;
}

/** What the loader says about a file with this text at `path` (the error a start would print). */
function loaderError(path: string, text: string): string {
  writeFileSync(`${path}.check`, text);
  try {
    loadConfig({ path: `${path}.check` });
  } catch (error) {
    return (error as Error).message.replaceAll(`${path}.check`, path);
  } finally {
    rmSync(`${path}.check`);
  }
  throw new Error("expected the loader to refuse it");
}

/** A process's stderr, with a wait for the next line matching a pattern (the event a reload reports). */
function stderrOf(stream: { on(event: "data", listener: (chunk: Buffer | string) => void): unknown } | null) {
  let text = "";
  let seen = 0;
  const waiters: Array<() => void> = [];
  stream?.on("data", (d) => {
    text += d;
    for (const w of waiters.splice(0)) w();
  });
  // The bound only keeps a broken run from hanging silently: it fails with what stderr said.
  const next = (pattern: RegExp, ms = 120_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no stderr line matching ${pattern} within ${ms} ms; stderr:\n${text}`)),
        ms,
      );
      const look = () => {
        const lines = text.split("\n");
        for (let i = seen; i < lines.length - 1; i++) {
          if (pattern.test(lines[i] as string)) {
            seen = i + 1;
            clearTimeout(timer);
            resolve(lines[i] as string);
            return;
          }
        }
        waiters.push(look);
      };
      look();
    });
  return { next, text: () => text };
}

const pidsOf = (marker: string) =>
  processesWith(marker)
    .map((p) => p.pid)
    .sort();
const text = (r: unknown) => ((r as { content: Array<{ text: string }> }).content[0]?.text ?? "") as string;
const markers = () => {
  const id = `${process.pid}-${Date.now()}`;
  return { kept: `kept-${id}`, gone: `gone-${id}` };
};

describe("capgate mcp serve: an edited config is put in force", () => {
  it("does not watch the workspace's own config file (the model can write it), says so, and reloads it on SIGHUP", async () => {
    const box = sandbox();
    const m = markers();
    const inWorkspace = join(box.workspace, "capgate.config.json");
    writeFileSync(inWorkspace, JSON.stringify({ mcpServers: { kept: stateServer(m.kept) } }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve"],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "pipe",
    });
    const stderr = stderrOf(transport.stderr);
    const client = new Client({ name: "desktop", version: "1" });
    clients.push(client);
    await client.connect(transport);
    expect(await stderr.next(/cannot watch/)).toContain("inside the workspace, where the model can write it");
    // The operator's request reloads it.
    transport.pid !== null && process.kill(transport.pid, "SIGHUP");
    expect(await stderr.next(/config reloaded/)).toContain("no MCP server changed");
  }, 180_000);

  it("adds, removes and keeps servers live, refuses a bad edit, and reloads on SIGHUP", async () => {
    const box = sandbox();
    const m = markers();
    const path = writeConfig(box, { mcpServers: { kept: stateServer(m.kept), gone: stateServer(m.gone) } });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--config", configPath(box)],
      cwd: box.workspace,
      env: box.env as Record<string, string>,
      stderr: "pipe",
    });
    const stderr = stderrOf(transport.stderr);
    const client = new Client({ name: "desktop", version: "1" });
    clients.push(client);
    await client.connect(transport);
    const call = async (tool: string, args: Record<string, unknown> = {}) =>
      client.callTool({ name: "capability_call", arguments: { tool, arguments: args } });

    expect((await call("kept/remember", { value: "v1" })).isError).toBeFalsy();
    expect((await call("gone/remember", { value: "v1" })).isError).toBeFalsy();
    const keptPids = pidsOf(m.kept);
    const session = text(await call("kept/recall"));
    expect(session).toMatch(/value:v1$/);
    expect(pidsOf(m.gone).length).toBeGreaterThan(0);
    const sumQuery = { name: "capability_search", arguments: { query: "sum of two numbers" } };
    expect(text(await client.callTool(sumQuery))).not.toContain("mcp:added");

    writeConfig(box, { mcpServers: { kept: stateServer(m.kept), added: everything } });
    expect(await stderr.next(/config reloaded/)).toContain("added added; removed gone; kept kept");
    // The removed server's processes end; the unchanged one's are the same, its session too.
    await expect.poll(() => pidsOf(m.gone), { timeout: 30_000 }).toEqual([]);
    expect(pidsOf(m.kept)).toEqual(keptPids);
    expect(text(await call("kept/recall"))).toBe(session);
    // The added server is found through the gate's search, and called.
    expect(text(await client.callTool(sumQuery))).toContain("mcp:added");
    expect(text(await call("added/get-sum", { a: 2, b: 3 }))).toContain("5");
    const gone = await call("gone/recall");
    expect(gone.isError).toBe(true);

    // An invalid edit: the error a start would give, and everything keeps working.
    const bad = JSON.stringify({ mcpServers: { kept: stateServer(m.kept) }, mcpServer: {} });
    writeConfig(box, bad);
    const refused = await stderr.next(/config reload refused/);
    expect(refused).toContain("the last good config stays in force");
    const message = loaderError(path, bad);
    expect(stderr.text()).toContain(message);
    expect(text(await call("kept/recall"))).toBe(session);
    expect(text(await call("added/get-sum", { a: 1, b: 1 }))).toContain("2");

    writeConfig(box, { mcpServers: { kept: stateServer(m.kept), added: everything } });
    expect(await stderr.next(/config reloaded/)).toContain("no MCP server changed");
    // SIGHUP reloads on request.
    process.kill(transport.pid as number, "SIGHUP");
    expect(await stderr.next(/config reloaded/)).toContain("no MCP server changed");
    expect(pidsOf(m.kept)).toEqual(keptPids);
    expect(text(await call("kept/recall"))).toBe(session);
  }, 180_000);
});

describe("capgate serve: an edited config is put in force", () => {
  it("adds and removes servers for /tools/call and search, refuses a bad edit, and reloads on SIGHUP", async () => {
    const box = sandbox();
    const m = markers();
    const path = writeConfig(box, { mcpServers: { kept: stateServer(m.kept), gone: stateServer(m.gone) } });
    const child = start(["--config", configPath(box), "serve", "--port", "0", "--token", TOKEN], box);
    running.push(child);
    const stderr = stderrOf(child.stderr);
    let stdout = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on("data", (d) => {
        stdout += d;
        const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
        if (found) resolve(found);
      });
      child.once("close", (code) => reject(new Error(`capgate serve exited ${code}\n${stderr.text()}`)));
    });
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const call = async (tool: string, args: Record<string, unknown> = {}) => {
      const response = await fetch(`${url}/tools/call`, {
        method: "POST",
        headers,
        body: JSON.stringify({ tool, arguments: args }),
      });
      return {
        status: response.status,
        body: (await response.json()) as { summary?: string; message?: string },
      };
    };
    const search = async (q: string) => {
      const response = await fetch(`${url}/capabilities/search?q=${encodeURIComponent(q)}`, { headers });
      return ((await response.json()) as Array<{ capability: string }>).map((hit) => hit.capability);
    };

    expect((await call("kept/remember", { value: "v1" })).status).toBe(200);
    expect((await call("gone/remember", { value: "v1" })).status).toBe(200);
    const keptPids = pidsOf(m.kept);
    const session = (await call("kept/recall")).body.summary;
    expect(await search("sum of two numbers")).not.toContain("mcp:added");
    expect(await search("remember a value")).toContain("mcp:gone");

    writeConfig(box, { mcpServers: { kept: stateServer(m.kept), added: everything } });
    expect(await stderr.next(/config reloaded/)).toContain("added added; removed gone; kept kept");
    await expect.poll(() => pidsOf(m.gone), { timeout: 30_000 }).toEqual([]);
    expect(pidsOf(m.kept)).toEqual(keptPids);
    expect((await call("kept/recall")).body.summary).toBe(session);
    expect(await search("sum of two numbers")).toContain("mcp:added");
    expect(await search("remember a value")).not.toContain("mcp:gone");
    expect((await call("added/get-sum", { a: 2, b: 3 })).body.summary).toContain("5");
    expect((await call("gone/recall")).status).not.toBe(200);

    const bad = '{ "mcpServers": { "kept": ';
    writeConfig(box, bad);
    await stderr.next(/config reload refused, the last good config stays in force/);
    expect(stderr.text()).toContain(loaderError(path, bad));
    expect((await call("kept/recall")).body.summary).toBe(session);
    expect((await call("added/get-sum", { a: 1, b: 1 })).body.summary).toContain("2");

    // SIGHUP reloads on request (the file is still bad: refused again, nothing changes).
    child.kill("SIGHUP");
    await stderr.next(/config reload refused/);
    expect(pidsOf(m.kept)).toEqual(keptPids);
    expect((await call("kept/recall")).body.summary).toBe(session);
  }, 180_000);
});
