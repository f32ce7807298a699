import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, everything, REPO } from "./support.js";

interface Snippet {
  mcpServers: { capgate: { type?: string; command: string; args: string[]; env?: Record<string, string> } };
}

/** The JSON block after `<!-- snippet: NAME -->` in docs/mcp.md, exactly as a user would copy it. */
function snippet(name: string): string {
  const doc = readFileSync(join(REPO, "docs", "mcp.md"), "utf8");
  const at = doc.indexOf(`<!-- snippet: ${name} -->`);
  if (at < 0) throw new Error(`docs/mcp.md has no snippet named ${name}`);
  const match = /```json\n([\s\S]*?)\n```/.exec(doc.slice(at));
  if (!match?.[1]) throw new Error(`snippet ${name} has no JSON block`);
  return match[1];
}

/** A project with a capgate.config.json naming an upstream server, as a user would have it. */
function project() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-desktop-")));
  const dir = join(root, "project");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "capgate.config.json"),
    JSON.stringify({ mcpServers: { everything: everything() } }),
  );
  writeFileSync(join(dir, "README.md"), "the project\n");
  const home = join(root, "capgate-home");
  mkdirSync(home);
  return { root, dir, home };
}

async function check(name: string, env: (box: ReturnType<typeof project>) => Record<string, string>) {
  const box = project();
  // Only the documented placeholders are substituted; everything else is spawned as written.
  const text = snippet(name)
    .replaceAll("/ABSOLUTE/PATH/TO/capgate", REPO)
    .replaceAll("/ABSOLUTE/PATH/TO/project", box.dir);
  expect(text).not.toContain("/ABSOLUTE/PATH");
  const entry = (JSON.parse(text) as Snippet).mcpServers.capgate;
  expect(entry.type ?? "stdio").toBe("stdio");
  const client = new Client({ name: "desktop", version: "0" });
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    // Claude Desktop starts servers in /, not the project.
    cwd: "/",
    env: { ...env(box), ...(entry.env ?? {}) },
    stderr: "pipe",
  });
  await client.connect(transport);
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "capability_search",
      "capability_load",
      "capability_call",
      "memory_search",
    ]);
    // The project's config was found: its upstream is searchable and callable.
    const search = await client.callTool({ name: "capability_search", arguments: { query: "echo" } });
    expect(JSON.stringify(search.content)).toContain("everything/echo");
    const echo = await client.callTool({
      name: "capability_call",
      arguments: { tool: "everything/echo", arguments: { message: "from the desktop" } },
    });
    expect(echo.isError).toBeFalsy();
    expect(JSON.stringify(echo.content)).toContain("from the desktop");
    // The workspace is the project, not the client's cwd.
    await client.callTool({ name: "capability_load", arguments: { name: "fs" } });
    const read = await client.callTool({
      name: "capability_call",
      arguments: { tool: "fs.read", arguments: { path: "README.md" } },
    });
    expect(JSON.stringify(read.content)).toContain("the project");
  } finally {
    await client.close();
  }
}

describe("the desktop snippets in docs/mcp.md work verbatim", () => {
  it("checkout form (Claude Desktop, Cursor)", async () => {
    await check("checkout", (box) => childEnv(box.home));
  }, 60_000);

  it("capgate on PATH", async () => {
    await check("path", (box) => {
      // What `npm install -g capgate` puts on PATH: a `capgate` executable.
      const bin = join(box.root, "bin");
      mkdirSync(bin);
      symlinkSync(CLI_BIN, join(bin, "capgate"));
      const env = childEnv(box.home);
      return { ...env, PATH: `${bin}:${env.PATH ?? ""}` };
    });
  }, 60_000);

  it("Claude Code (.mcp.json)", async () => {
    await check("claude-code", (box) => childEnv(box.home));
  }, 60_000);

  it("an implicit workspace of / is refused with a message naming --workspace", async () => {
    const box = project();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_BIN, "mcp", "serve"],
      cwd: "/",
      env: childEnv(box.home),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const client = new Client({ name: "desktop", version: "0" });
    await expect(client.connect(transport)).rejects.toThrow();
    // The refusal reaches the pipe when the loaded machine delivers it: wait for it (bounded).
    for (let i = 0; i < 750 && !stderr.includes("--workspace"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(stderr).toContain("refusing to serve / as the workspace");
    expect(stderr).toContain("--workspace");
  }, 30_000);

  it("the account's home as an implicit workspace is refused even when HOME names another directory", () => {
    const box = project();
    const home = userInfo().homedir;
    const r = spawnSync(process.execPath, [CLI_BIN, "mcp", "serve"], {
      cwd: home,
      env: { ...childEnv(box.home), HOME: box.home },
      input: "",
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.stderr).toContain("refusing to serve your home directory");
    expect(r.status).toBe(2);
  }, 30_000);
});
