import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpPool, McpServersMap } from "@capgate/mcp-client";
import { createNodeMcpPool } from "@capgate/mcp-client/stdio";
import { shellQuote } from "@capgate/shell-policy";
import { shellForTests } from "@capgate/test-system-parts";
import {
  type ApprovalRequest,
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolResult,
} from "@capgate/tools";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { capability } from "./capability.js";

// The official reference server, run from its installed files with this Node (never downloaded).
const require = createRequire(import.meta.url);
const ENTRY = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const EVERYTHING_ARGV = [process.execPath, ENTRY, "stdio"];
// The MCP client's hostile server (10,000 tools, hostile names and schemas), built on the SDK.
const HOSTILE = fileURLToPath(
  new URL("../../../mcp-client/test/fixtures/hostile-sdk-server.mjs", import.meta.url),
);
const EVERYTHING_LINE = shellQuote(EVERYTHING_ARGV);

const workspaces: string[] = [];
const contexts: ExecuteContext[] = [];
const pools: McpPool[] = [];

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "capgate-mcp-cap-")));
  workspaces.push(dir);
  return dir;
}

function context(over: Partial<ExecuteContext> = {}): ExecuteContext {
  const ws = workspace();
  const ctx: ExecuteContext = {
    workspace: ws,
    signal: new AbortController().signal,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: "C.UTF-8" },
    profile: { name: "Orchestrator", maySpawnWorkers: true },
    limits: { ...DEFAULT_LIMITS, timeoutMs: 30_000 },
    // The sandbox on where bubblewrap works (or is required); off on a machine without it.
    policy: { shell: shellForTests() },
    services: {},
    resources: createHostResources(),
    stateDir: workspace(),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
    ...over,
  };
  contexts.push(ctx);
  return ctx;
}

function pool(servers: McpServersMap): McpPool {
  const p = createNodeMcpPool(servers);
  pools.push(p);
  return p;
}

const everything = () => ({ command: process.execPath, args: [ENTRY, "stdio"] });

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.resources.closeAll()));
  await Promise.all(pools.splice(0).map((p) => p.close()));
});
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

async function rejection(
  call: Promise<ToolResult>,
): Promise<{ code: string; property?: string; message: string }> {
  try {
    await call;
  } catch (error) {
    return error as { code: string; property?: string; message: string };
  }
  throw new Error("expected the call to be rejected");
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !isAlive(pid);
}

describe("mcp capability with a configured server (the host's pool)", () => {
  it("lists the server's tools with signatures, descriptions and schemas", async () => {
    const ctx = context({ services: { mcp: pool({ everything: everything() }) } });
    const result = await executeTool("mcp.list_tools", { command: "everything" }, ctx);
    expect(result.success).toBe(true);
    const lines = result.summary.split("\n");
    expect(lines[0]).toMatch(
      /^MCP server 'everything' has \d+ tools; call one with mcp\.call \{"command":"everything","tool":"<name>","arguments":\{…\}\}:$/,
    );
    expect(lines).toContain("- echo(message: string) — Echoes back the input string");
    expect(result.summary).toMatch(/- get-sum\(a: number, b: number\)/);
    // Where the signature hides the argument shape (an enum here), the schema follows it.
    const structured = lines.findIndex((l) => l.startsWith("- get-structured-content(location: enum)"));
    expect(lines[structured + 1]).toMatch(
      /^ {2}schema: \{"type":"object".*"enum":\["New York","Chicago","Los Angeles"\]/,
    );
    expect(lines[lines.findIndex((l) => l.startsWith("- echo(")) + 1]).toMatch(/^- /);
    expect(result.summary).not.toContain("$schema");
    const data = result.data as {
      server: string;
      tools: Array<{ name: string; inputSchema: { type: string } }>;
    };
    expect(data.server).toBe("everything");
    expect(data.tools.find((t) => t.name === "echo")?.inputSchema.type).toBe("object");
  }, 30_000);

  it("calls tools over one pooled session and renders results like the pool", async () => {
    const p = pool({ everything: everything() });
    const ctx = context({ services: { mcp: p } });
    const echo = await executeTool(
      "mcp.call",
      { command: "everything", tool: "echo", arguments: { message: "hello capgate" } },
      ctx,
    );
    expect(echo.success).toBe(true);
    expect(echo.summary).toBe("Echo: hello capgate");
    expect(echo.data).toMatchObject({ server: "everything", tool: "echo", isError: false, truncated: false });
    const pid = await p.pidOf("everything");
    const sum = await executeTool(
      "mcp.call",
      { command: "everything", tool: "get-sum", arguments: { a: 2, b: 3 } },
      ctx,
    );
    expect(sum.summary).toContain("5");
    expect(await p.pidOf("everything")).toBe(pid);

    // Arguments that break the server's inputSchema are a failed result naming the
    // property, checked before anything is sent — not a crash.
    const bad = await executeTool(
      "mcp.call",
      { command: "everything", tool: "get-sum", arguments: { a: "x" } },
      ctx,
    );
    expect(bad.success).toBe(false);
    expect(bad.data).toMatchObject({ code: "invalid_arguments" });
    expect(bad.summary).toMatch(/\ba\b/);
  }, 30_000);

  it("answers an unknown tool with the server's tool names and a suggestion", async () => {
    const ctx = context({ services: { mcp: pool({ everything: everything() }) } });
    const result = await executeTool("mcp.call", { command: "everything", tool: "ecko" }, ctx);
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(
      /^MCP server 'everything' has no tool "ecko"\. Did you mean 'echo'\? Its tools: echo, /,
    );
    expect(result.data).toMatchObject({ code: "unknown_tool", server: "everything" });
  }, 30_000);

  it("a hostile server: list_tools stays within its budget, and a tool the client refuses says why without being sent", async () => {
    const p = pool({ hostile: { command: process.execPath, args: [HOSTILE] } });
    const ctx = context({ services: { mcp: p } });
    const listed = await executeTool("mcp.list_tools", { command: "hostile" }, ctx);
    expect(listed.success).toBe(true);
    expect(listed.summary.length).toBeLessThanOrEqual(16_000);
    expect(listed.summary.split("\n")[0]).toMatch(
      /^MCP server 'hostile' has 10002 tools; call one with mcp\.call/,
    );
    expect(listed.summary).toMatch(
      /\n… \d+ more tools not shown \(10002 in all\): mcp\.call takes any of them by its name, or find them by what they do with capability_search \{"query":"mcp:hostile <what the tool does>"\}\.$/,
    );
    expect((listed.data as { tools: unknown[] }).tools).toHaveLength(10_002);
    for (const [tool, why] of [
      ["ref_loop", "inputSchema has a $ref loop that never reaches a nested value"],
      ["huge_schema", "inputSchema is larger than 65536 characters"],
      ["esc\u001b[31mred", "it contains control or format characters"],
    ]) {
      const refused = await executeTool("mcp.call", { command: "hostile", tool, arguments: {} }, ctx);
      expect(refused.success).toBe(false);
      expect(refused.summary).toContain(why);
      expect(refused.summary).toMatch(/Nothing was sent to the server\.$/);
      expect(refused.data).toMatchObject({ code: "unknown_tool", server: "hostile" });
    }
    const unknown = await executeTool("mcp.call", { command: "hostile", tool: "weather_1" }, ctx);
    expect(unknown.summary).toMatch(/Its tools: echo, calls, weather_00000, .*, … \(10002 in all\)/);
    expect(unknown.summary.length).toBeLessThan(1_000);
    const calls = await executeTool("mcp.call", { command: "hostile", tool: "calls" }, ctx);
    expect(JSON.parse(calls.summary)).toEqual([]);
  }, 60_000);

  it("rejects `args` for a configured server and refuses a disabled one", async () => {
    const ctx = context({
      services: { mcp: pool({ everything: everything(), paused: { ...everything(), enabled: false } }) },
    });
    const withArgs = await rejection(
      executeTool("mcp.call", { command: "everything", tool: "echo", args: ["--x"] }, ctx),
    );
    expect(withArgs).toMatchObject({ code: "invalid_arguments", property: "args" });
    const disabled = await rejection(executeTool("mcp.list_tools", { command: "paused" }, ctx));
    expect(disabled).toMatchObject({ code: "policy_denied", property: "command" });
    expect(disabled.message).toContain("MCP server 'paused' is disabled");
  }, 30_000);

  it("treats an unknown name as a command line, and says which servers exist when it cannot start", async () => {
    const ctx = context({ services: { mcp: pool({ everything: everything() }) } });
    const result = await executeTool("mcp.call", { command: "everythin", tool: "echo" }, ctx);
    expect(result.success).toBe(false);
    expect(result.summary).toContain("ad-hoc MCP server `everythin`");
    expect(result.summary).toContain("configured: everything; did you mean 'everything'?");
    expect(result.data).toMatchObject({ code: "mcp_connect_failed", command: ["everythin"] });
  }, 30_000);

  it("times out with ctx.limits.timeoutMs, naming the server, and keeps the session", async () => {
    const p = pool({ everything: everything() });
    const ctx = context({ services: { mcp: p }, limits: { ...DEFAULT_LIMITS, timeoutMs: 3_000 } });
    await executeTool("mcp.list_tools", { command: "everything" }, ctx);
    const pid = await p.pidOf("everything");
    const slow = await executeTool(
      "mcp.call",
      {
        command: "everything",
        tool: "trigger-long-running-operation",
        arguments: { duration: 30, steps: 2 },
      },
      ctx,
    );
    expect(slow.success).toBe(false);
    expect(slow.summary).toMatch(/^MCP server 'everything': .*trigger-long-running-operation/);
    expect(slow.data).toMatchObject({ code: "mcp_timeout", server: "everything" });
    const after = await executeTool(
      "mcp.call",
      { command: "everything", tool: "echo", arguments: { message: "ok" } },
      ctx,
    );
    expect(after.summary).toBe("Echo: ok");
    expect(await p.pidOf("everything")).toBe(pid);
  }, 30_000);
});

describe("mcp capability with ad-hoc command lines", () => {
  it("spawns the command line without a shell, reuses the session, and closes it with the host's resources", async () => {
    const ctx = context();
    const list = await executeTool("mcp.list_tools", { command: EVERYTHING_LINE }, ctx);
    expect(list.success).toBe(true);
    expect(list.summary.split("\n")[0]).toMatch(/^ad-hoc MCP server `.*index\.js stdio` has \d+ tools/);
    expect(list.summary).toContain("- echo(message: string)");
    const { pid } = list.data as { pid: number; command: string[] };
    expect(list.data).toMatchObject({ command: EVERYTHING_ARGV });

    const echo = await executeTool(
      "mcp.call",
      { command: EVERYTHING_LINE, tool: "echo", arguments: { message: "hi" } },
      ctx,
    );
    expect(echo.summary).toBe("Echo: hi");
    expect(echo.data).toMatchObject({ command: EVERYTHING_ARGV, pid, tool: "echo" });
    expect(isAlive(pid)).toBe(true);

    await ctx.resources.closeAll();
    expect(await gone(pid)).toBe(true);
  }, 30_000);

  it("takes argv from `command` + `args`", async () => {
    const ctx = context();
    const result = await executeTool(
      "mcp.call",
      { command: process.execPath, args: [ENTRY, "stdio"], tool: "get-sum", arguments: { a: 40, b: 2 } },
      ctx,
    );
    expect(result.success).toBe(true);
    expect(result.summary).toContain("42");
    expect(result.data).toMatchObject({ command: EVERYTHING_ARGV });
  }, 30_000);

  it("gives the server ctx.env (not the host's environment) and caps its output", async () => {
    process.env.CAPGATE_TEST_HOST_SECRET = "do-not-pass";
    try {
      const ctx = context({
        env: { PATH: process.env.PATH, CAPGATE_TEST_MARK: "from-ctx-env" },
        limits: { ...DEFAULT_LIMITS, timeoutMs: 30_000, outputBytes: 2_000 },
      });
      const env = await executeTool("mcp.call", { command: EVERYTHING_LINE, tool: "get-env" }, ctx);
      expect(env.success).toBe(true);
      expect(env.summary).toContain('"CAPGATE_TEST_MARK": "from-ctx-env"');
      expect(env.summary).not.toContain("do-not-pass");

      const big = "x".repeat(10_000);
      const echo = await executeTool(
        "mcp.call",
        { command: EVERYTHING_LINE, tool: "echo", arguments: { message: big } },
        ctx,
      );
      expect(Buffer.byteLength(echo.summary)).toBeLessThanOrEqual(2_000);
      expect(echo.summary).toMatch(/…\[\d+ bytes truncated\]…/);
      expect(echo.data).toMatchObject({ truncated: true });
    } finally {
      delete process.env.CAPGATE_TEST_HOST_SECRET;
    }
  }, 30_000);

  it("names the command line when the program is not an MCP server", async () => {
    const ctx = context();
    const result = await executeTool(
      "mcp.list_tools",
      { command: "sh -c 'echo not an mcp server; exit 3'" },
      ctx,
    );
    expect(result.success).toBe(false);
    expect(result.summary).toContain("ad-hoc MCP server `sh -c 'echo not an mcp server; exit 3'`:");
    expect(result.summary).toContain("code 3");
    expect(result.data).toMatchObject({
      code: "mcp_connect_failed",
      command: ["sh", "-c", "echo not an mcp server; exit 3"],
    });
  }, 30_000);
});

describe("ad-hoc commands pass the shell policy before anything is spawned", () => {
  // Inside the context's workspace: the only place a sandboxed spawn could write it.
  const marker = (ctx: ExecuteContext) => join(ctx.workspace, "spawned");

  it("a spawn is visible: without a rule, `sh -c 'touch M'` does run (the control case)", async () => {
    const ctx = context();
    const m = marker(ctx);
    const result = await executeTool(
      "mcp.list_tools",
      { command: `sh -c ${shellQuote([`touch ${m}`])}` },
      ctx,
    );
    expect(result.success).toBe(false); // not an MCP server, but it ran
    expect(existsSync(m)).toBe(true);
  }, 30_000);

  const DENIED: [string, (m: string) => { command: string; args?: string[] }, string][] = [
    ["a GUI opener", () => ({ command: "xdg-open https://example.com" }), "command"],
    [
      "a GUI opener inside sh -c",
      (m) => ({ command: `sh -c ${shellQuote([`touch ${m}; xdg-open x`])}` }),
      "command",
    ],
    [
      "a GUI opener smuggled through args",
      (m) => ({ command: "sh", args: ["-c", `touch ${m}; xdg-open x`] }),
      "command",
    ],
    [
      "a GUI opener behind env in args",
      () => ({ command: "env", args: ["FOO=1", "sensible-browser", "x"] }),
      "command",
    ],
    ["a command list", (m) => ({ command: `touch ${m} && node srv.js` }), "command"],
    ["a command substitution", (m) => ({ command: `node $(touch ${m})` }), "command"],
    ["a pipe", (m) => ({ command: `touch ${m} | cat` }), "command"],
    ["a redirection", (m) => ({ command: `node srv.js > ${m}` }), "command"],
    ["a variable prefix", (m) => ({ command: `X=1 touch ${m}` }), "command"],
  ];

  it.each(DENIED)("refuses %s, and nothing runs", async (_name, build, property) => {
    const ctx = context();
    const m = marker(ctx);
    const call = build(m);
    for (const tool of ["mcp.list_tools", "mcp.call"]) {
      const args = tool === "mcp.call" ? { ...call, tool: "echo" } : call;
      const error = await rejection(executeTool(tool, args, ctx));
      expect(error, tool).toMatchObject({ code: "policy_denied", property });
    }
    expect(existsSync(m)).toBe(false);
  });

  it("tells the model to use browser_panel for GUI openers", async () => {
    const error = await rejection(executeTool("mcp.list_tools", { command: "xdg-open x" }, context()));
    expect(error.message).toContain("browser_panel");
  });

  it("applies configured deny rules and asks the operator for ask rules", async () => {
    const m = join(workspace(), "spawned");
    const command = `sh -c ${shellQuote([`touch ${m}`])}`;
    const denyCtx = context({ policy: { shell: { deny: [{ prefix: ["sh"], reason: "no shells here" }] } } });
    const denied = await rejection(executeTool("mcp.list_tools", { command }, denyCtx));
    expect(denied.code).toBe("policy_denied");
    expect(denied.message).toContain("no shells here");

    const asked: ApprovalRequest[] = [];
    const askCtx = context({
      policy: { shell: { ask: [{ prefix: ["sh"], reason: "shells need a yes" }] } },
      approve: async (request) => {
        asked.push(request);
        return false;
      },
    });
    const refused = await rejection(executeTool("mcp.list_tools", { command }, askCtx));
    expect(refused.code).toBe("policy_denied");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.description).toContain("shells need a yes");
    expect(existsSync(m)).toBe(false);
  });

  it("checks again inside the handler, so a direct call cannot bypass the policy", async () => {
    const ctx = context();
    const m = marker(ctx);
    const handler = capability.handlers.get("mcp.list_tools")!;
    await expect(
      handler({ command: `sh -c ${shellQuote([`touch ${m}; xdg-open x`])}` }, ctx),
    ).rejects.toMatchObject({
      code: "policy_denied",
    });
    await expect(handler({ command: `touch ${m} && true` }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
    });
    expect(existsSync(m)).toBe(false);
  });
});
