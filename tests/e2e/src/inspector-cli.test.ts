import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { RunningServer } from "@capgate/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, everything, sandbox, serveSandbox, resultText as text } from "./support.js";

// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, a third-party client people
// script against servers) on the gate: one method per process, JSON on stdout, as a user
// runs it — over stdio (`capgate mcp serve`) and over Streamable HTTP (`/mcp`).

const run = promisify(execFile);
const TOKEN = "e2e-token-inspector-inspector-0";
const GATE_TOOLS = ["capability_search", "capability_load", "capability_call", "memory_search"];
// The CLI looks for its own package.json at "../package.json" relative to the working
// directory (a quirk of 1.0.3), so it runs from its build directory.
const INSPECTOR_BUILD = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector-cli/package.json")),
  "build",
);

type Target = { args: string[]; env: Record<string, string> };

async function inspect(target: Target, method: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    [join(INSPECTOR_BUILD, "index.js"), ...target.args, ...method],
    {
      cwd: INSPECTOR_BUILD,
      env: target.env,
      timeout: 90_000,
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** What the CLI prints for a failed method: it exits non-zero with the error on stderr. */
async function inspectError(target: Target, method: string[]): Promise<string> {
  const failed = await run(process.execPath, [join(INSPECTOR_BUILD, "index.js"), ...target.args, ...method], {
    cwd: INSPECTOR_BUILD,
    env: target.env,
    timeout: 90_000,
  }).then(
    (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      out: `${error.stdout ?? ""}${error.stderr ?? ""}`,
    }),
  );
  expect(failed.code).not.toBe(0);
  return failed.out;
}

async function checkGate(target: Target) {
  const tools = await inspect(target, ["--method", "tools/list"]);
  expect((tools.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(GATE_TOOLS);

  const found = await inspect(target, [
    "--method",
    "tools/call",
    "--tool-name",
    "capability_search",
    "--tool-arg",
    "query=echo a message",
  ]);
  expect(text(found)).toContain("everything/echo(message: string)");

  // --tool-arg values are parsed as JSON, so `arguments` arrives as an object.
  const echo = await inspect(target, [
    "--method",
    "tools/call",
    "--tool-name",
    "capability_call",
    "--tool-arg",
    "tool=everything/echo",
    'arguments={"message":"from the inspector"}',
  ]);
  expect(echo.isError ?? false).toBe(false);
  expect(echo.content).toEqual([{ type: "text", text: "Echo: from the inspector" }]);

  // A schema error names the property, as a tool result the model can read.
  const bad = await inspect(target, [
    "--method",
    "tools/call",
    "--tool-name",
    "capability_call",
    "--tool-arg",
    "tool=everything/echo",
    'arguments={"message":7}',
  ]);
  expect(bad.isError).toBe(true);
  expect(text(bad)).toMatch(/message/);

  // Prompts pass through as <server>/<prompt>.
  const prompts = await inspect(target, ["--method", "prompts/list"]);
  expect((prompts.prompts as Array<{ name: string }>).map((p) => p.name)).toContain("everything/args-prompt");
  const prompt = await inspect(target, [
    "--method",
    "prompts/get",
    "--prompt-name",
    "everything/args-prompt",
    "--prompt-args",
    "city=Lyon",
  ]);
  expect(JSON.stringify(prompt.messages)).toContain("Lyon");

  // A tool the gate does not have: one clear error, not a doubled "MCP error" prefix.
  const unknown = await inspectError(target, ["--method", "tools/call", "--tool-name", "no_such_tool"]);
  expect(unknown).toContain("no_such_tool");
  expect(unknown).not.toMatch(/MCP error -?\d+: MCP error/);
}

describe("the MCP Inspector's CLI on the gate", () => {
  it("over stdio (capgate mcp serve)", async () => {
    const box = sandbox({ mcpServers: { everything: everything() } });
    await checkGate({
      args: [
        process.execPath,
        CLI_BIN,
        "mcp",
        "serve",
        "--workspace",
        box.workspace,
        "--config",
        box.configFile,
      ],
      env: childEnv(box.home),
    });
  }, 300_000);

  describe("over Streamable HTTP (/mcp)", () => {
    let server: RunningServer;
    let home: string;
    beforeAll(async () => {
      const box = sandbox({ mcpServers: { everything: everything() } });
      home = box.home;
      server = await serveSandbox(box, TOKEN);
    }, 60_000);
    afterAll(async () => {
      await server?.close();
    });

    it("passes the same checks, with the token as a header", async () => {
      await checkGate({
        args: [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${TOKEN}`],
        env: childEnv(home),
      });
    }, 300_000);

    it("without the token is refused", async () => {
      const out = await inspectError(
        { args: [`${server.url}/mcp`, "--transport", "http"], env: childEnv(home) },
        ["--method", "tools/list"],
      );
      expect(out).toMatch(/401|nauthori/);
    }, 120_000);
  });
});
