// Configured MCP servers opt into the OS sandbox with "sandbox": true: the config accepts it
// on stdio entries only, the harness wraps their command in bubblewrap, a real server works
// through the wrapper, and where the sandbox cannot start the server refuses to start.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";
import { sandboxServers } from "./sandboxed-servers.js";

const system = needs(["bwrap"]);
const itSandbox = (name: string, body: () => Promise<void>, timeout?: number) =>
  it.skipIf(system.skip)(name + system.note, body, timeout);

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sandboxed-mcp-")));
const ws = join(root, "ws");
const stateDir = join(root, "state");
mkdirSync(ws);
const open: Harness[] = [];
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
  rmSync(root, { recursive: true, force: true });
});

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);

describe('"sandbox": true on configured MCP servers', () => {
  it("is accepted on stdio entries and refused, naming the property, on HTTP ones", () => {
    const ok = parseConfig({ mcpServers: { every: { command: "node", args: ["x.js"], sandbox: true } } });
    expect(ok.sandboxedServers).toEqual(["every"]);
    expect(ok.mcpServers.every).not.toHaveProperty("sandbox");
    expect(() =>
      parseConfig({ mcpServers: { remote: { url: "https://example.com/mcp", sandbox: true } } }),
    ).toThrow(/mcpServers\.remote\.sandbox applies to stdio servers/);
    expect(() => parseConfig({ mcpServers: { every: { command: "node", sandbox: "yes" } } })).toThrow(
      /sandbox/,
    );
  });

  itSandbox(
    "wraps the command in bubblewrap, and the server works through it",
    async () => {
      const wrapped = await sandboxServers(
        { every: { command: process.execPath, args: [everything, "stdio"] } },
        ["every"],
        { workspace: ws, stateDir, policy: {}, env: { PATH: process.env.PATH, HOME: root } },
      );
      const entry = wrapped.every as { command: string; args: string[]; env: Record<string, string> };
      expect(entry.command).toBe("/usr/bin/bwrap");
      expect(entry.args).toEqual(expect.arrayContaining(["--die-with-parent", "--unshare-net", everything]));
      expect(entry.env.HTTP_PROXY).toMatch(/^http:\/\/127\.0\.0\.1:/);

      const h = await createHarness({
        workspace: ws,
        stateDir,
        config: {
          mcpServers: { every: { command: process.execPath, args: [everything, "stdio"], sandbox: true } },
        },
      });
      open.push(h);
      const { result } = await h.callTool("every/echo", { message: "from inside the sandbox" });
      expect(result.success).toBe(true);
      expect(result.summary).toContain("from inside the sandbox");
    },
    60_000,
  );

  it("a server that cannot be sandboxed does not start, and says why", async () => {
    const h = await createHarness({
      workspace: ws,
      stateDir,
      config: {
        shell: { bwrap: join(root, "no-bwrap") },
        mcpServers: { every: { command: process.execPath, args: [everything, "stdio"], sandbox: true } },
      },
    });
    open.push(h);
    const outcome = await h.callTool("every/echo", { message: "x" }).then(
      (o) => o.result.summary,
      (error: Error) => error.message,
    );
    // The MCP client reports the tail of the server's stderr: the refusal and its fix.
    expect(outcome).toMatch(/failed to start/);
    expect(outcome).toMatch(/bubblewrap is not installed .*nothing ran.*apt-get install bubblewrap/);
  }, 60_000);
});
