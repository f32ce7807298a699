import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { leaveBehind, processesWith, shellForTests, uniqueSleep } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import type { CapgateConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";

const open: Harness[] = [];
async function harness(
  options: Parameters<typeof createHarness>[0] = {},
): Promise<{ h: Harness; workspace: string; stateDir: string }> {
  const root = mkdtempSync(join(tmpdir(), "capgate-harness-"));
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  // Commands run in the sandbox where bubblewrap works (or is required), unsandboxed on a machine without it.
  const config = (options.config ?? {}) as CapgateConfig;
  const shell = { ...shellForTests(), ...config.shell };
  const h = await createHarness({ workspace, stateDir, ...options, config: { ...config, shell } });
  open.push(h);
  return { h, workspace, stateDir };
}
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

describe("createHarness", () => {
  it("registers the eleven built-in capabilities with their 53 tools", async () => {
    const { h } = await harness();
    const manifests = h.registry.list();
    expect(manifests.map((m) => m.name)).toEqual([
      "browser_panel",
      "code",
      "cua",
      "fs",
      "git",
      "mcp",
      "memory",
      "script",
      "shell",
      "web",
      "workers",
    ]);
    expect(manifests.reduce((n, m) => n + m.tools.length, 0)).toBe(53);
    expect(h.registry.search("read files", { limit: 1 })[0]?.capability).toBe("fs");
  });

  it("calls a tool directly: the capability is loaded for the call, policies apply", async () => {
    const { h, workspace } = await harness();
    expect((await h.callTool("fs.write", { path: "notes/a.txt", content: "hello" })).result.success).toBe(
      true,
    );
    expect(readFileSync(join(workspace, "notes/a.txt"), "utf8")).toBe("hello");
    expect((await h.callTool("fs.read", { path: "notes/a.txt" })).result.summary).toContain("hello");
    await expect(h.callTool("fs.reed", { path: "x" })).rejects.toMatchObject({ code: "unknown_tool" });
    await expect(h.callTool("fs.read", { pth: "x" })).rejects.toMatchObject({
      code: "invalid_arguments",
      property: "pth",
    });
    await expect(h.callTool("fs.read", { path: "../../etc/passwd" })).rejects.toMatchObject({
      code: "policy_denied",
    });
    await expect(
      h.callTool("shell.run", { command: "echo hi; xdg-open https://example.com" }),
    ).rejects.toMatchObject({
      code: "policy_denied",
    });
  });

  it("denies a required approval when no approver is installed, and asks the one given", async () => {
    const { h } = await harness({ approval: "on-risk" });
    await expect(h.callTool("fs.write", { path: "a", content: "b" })).rejects.toThrow(/no one can approve/);
    const asked: string[] = [];
    const r = await h.callTool(
      "fs.write",
      { path: "a", content: "b" },
      {
        approve: async (req) => {
          asked.push(req.tool);
          return true;
        },
      },
    );
    expect(r.result.success).toBe(true);
    expect(asked).toEqual(["fs.write"]);
  });

  it("runs a goal end to end with a scripted model through the real capabilities", async () => {
    const { h, workspace } = await harness();
    writeFileSync(join(workspace, "math.js"), "module.exports = (a, b) => a - b;\n");
    const model = createScriptedModel([
      act("capability_search", { query: "edit a file" }),
      act("capability_load", { name: "fs" }),
      act("capability_call", {
        tool: "fs.patch",
        arguments: { path: "math.js", old: "a - b", new: "a + b" },
      }),
      act("verify", {
        claim: "adds",
        command: "node -e \"process.exit(require('./math.js')(2,3)===5?0:1)\"",
      }),
      act("finish", { summary: "fixed" }),
    ]);
    const r = await h.runGoal({ goal: "make math.js add", profile: "Coder", model });
    expect(r.outcome).toBe("finished");
    expect(existsSync(r.tracePath)).toBe(true);
    const lines = readFileSync(r.tracePath, "utf8").trim().split("\n");
    expect(lines.every((l) => JSON.parse(l).runId === r.runId)).toBe(true);
  });

  it("builds a model from the config's spec, with a clear error when none is set", async () => {
    const { h } = await harness();
    expect(() => h.model()).toThrow(/No model is configured/);
    expect(() => h.model("scripted:/nonexistent/replies.json")).toThrow(/replies.json/);
  });

  it("serves the gate: search, load and call through one session router", async () => {
    const { h, workspace } = await harness();
    writeFileSync(join(workspace, "x.txt"), "gate");
    const gate = h.createGateSession();
    const search = (await gate.handlers.capability_search(
      { query: "read files" },
      { signal: new AbortController().signal },
    )) as { summary: string };
    expect(search.summary).toContain("fs");
    await gate.handlers.capability_load({ name: "fs" }, { signal: new AbortController().signal });
    const call = (await gate.handlers.capability_call(
      { tool: "fs.read", path: "x.txt" },
      { signal: new AbortController().signal },
    )) as {
      success: boolean;
      summary: string;
    };
    expect(call).toMatchObject({ success: true });
    expect(call.summary).toContain("gate");
    expect(gate.loaded()).toEqual(["fs"]);
    await gate.close();
  });

  it("a gate session's close stops what its calls started, while the harness goes on", async () => {
    const { h } = await harness();
    const signal = new AbortController().signal;
    const m = uniqueSleep();
    const gate = h.createGateSession({ preload: ["shell"] });
    const started = (await gate.handlers.capability_call(
      { tool: "shell.start", arguments: { command: `${leaveBehind(m)}; wait` } },
      { signal },
    )) as { success: boolean; summary: string };
    expect(started.success, started.summary).toBe(true);
    for (let i = 0; i < 750 && processesWith(m).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(processesWith(m)).toHaveLength(3);
    await gate.close();
    expect(processesWith(m)).toEqual([]);
    // The harness's own calls still work.
    expect((await h.callTool("fs.list", {})).result.success).toBe(true);
  }, 60_000);
});

describe("a killed run", () => {
  it("leaves a trace whose every line parses (SIGKILL while the model is answering)", async () => {
    // A model server that answers twice, then never answers: the run is killed mid-request.
    let requests = 0;
    const replies = [act("capability_load", { name: "fs" }), act("goal_update", { progress: "reading" })];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const text = replies[requests++];
        if (text === undefined) return; // hang
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: `c${requests}`,
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const root = mkdtempSync(join(tmpdir(), "capgate-kill-"));
    const script = join(root, "run.mjs");
    writeFileSync(
      script,
      `import { createHarness } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
const h = await createHarness({ workspace: ${JSON.stringify(root)}, stateDir: ${JSON.stringify(join(root, "state"))} });
await h.runGoal({ goal: "g", profile: "Orchestrator", model: "openai:m?maxRetries=0" });`,
    );
    const child = spawn(process.execPath, [script], {
      env: { ...process.env, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "k" },
      stdio: "ignore",
    });
    const runsDir = join(root, "state", "runs");
    const trace = await new Promise<string>((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error("the run never reached its third model call")),
        30_000,
      );
      const poll = setInterval(() => {
        if (requests < 3 || !existsSync(runsDir)) return;
        const file = readdirSync(runsDir)[0];
        if (!file) return;
        clearInterval(poll);
        clearTimeout(deadline);
        resolve(join(runsDir, file));
      }, 50);
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    server.close();
    const lines = readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const events = lines.map((l) => JSON.parse(l) as { type: string; seq: number });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.type).toBe("model_request");
  }, 60_000);
});

describe("MCP through the harness", () => {
  it("makes a configured server's tools searchable, loadable and callable in chat", async () => {
    const { createRequire } = await import("node:module");
    const { dirname } = await import("node:path");
    const require = createRequire(import.meta.url);
    const entry = join(
      dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
      "dist",
      "index.js",
    );
    const { h } = await harness({
      config: { mcpServers: { every: { command: process.execPath, args: [entry, "stdio"] } } },
    });
    const model = createScriptedModel([
      act("capability_search", { query: "echo a message back" }),
      act("capability_load", { name: "mcp:every" }),
      act("capability_call", { tool: "every/echo", arguments: { message: "through the pool" } }),
      // An MCP tool not marked read-only counts as a change: the chat wants evidence too.
      act("verify", { claim: "nothing broke", command: "true" }),
      act("finish", { summary: "echoed" }),
    ]);
    const events: Array<{ type: string; [k: string]: unknown }> = [];
    const chat = h.createChat({ model, onEvent: (e) => events.push(e) });
    expect((await chat.send("echo something")).reply).toBe("echoed");
    const searched = events.find((e) => e.type === "capability_searched") as unknown as {
      hits: Array<{ capability: string }>;
    };
    expect(searched.hits.map((hit) => hit.capability)).toContain("mcp:every");
    const result = events.find((e) => e.type === "tool_result") as unknown as {
      via: string;
      server: string;
      summary: string;
      success: boolean;
    };
    expect(result).toMatchObject({ via: "mcp", server: "every", success: true });
    expect(result.summary).toContain("through the pool");
    await chat.close();
  }, 60_000);
});

describe("a hostile MCP server through the chat loop's fallthrough", () => {
  it("refuses the tools admission left out, explicitly named or bare, and the model reads why", async () => {
    const { fileURLToPath } = await import("node:url");
    const hostile = fileURLToPath(
      new URL("../../mcp-client/test/fixtures/hostile-sdk-server.mjs", import.meta.url),
    );
    const log = join(mkdtempSync(join(tmpdir(), "capgate-hostile-")), "calls.log");
    const { h } = await harness({
      config: {
        mcpServers: {
          hostile: { command: process.execPath, args: [hostile, "10"], env: { HOSTILE_CALL_LOG: log } },
        },
      },
    });
    const model = createScriptedModel([
      act("capability_call", { tool: "hostile/ref_loop", arguments: { x: 1 } }),
      act("capability_call", { tool: "hostile/esc\u001b[31mred", arguments: {} }),
      act("capability_call", { tool: "huge_schema", arguments: {} }),
      act("capability_call", { tool: "hostile/echo", arguments: { text: "still works" } }),
      act("verify", { claim: "nothing broke", command: "true" }),
      act("finish", { summary: "done" }),
    ]);
    const events: Array<{ type: string; [k: string]: unknown }> = [];
    const chat = h.createChat({ model, onEvent: (e) => events.push(e) });
    expect((await chat.send("try the hostile tools")).reply).toBe("done");
    const results = events.filter((e) => e.type === "tool_result") as unknown as Array<{
      tool: string;
      success: boolean;
      rejected?: string;
      summary: string;
    }>;
    expect(results.map((r) => [r.tool, r.success, r.rejected])).toEqual([
      ["hostile/ref_loop", false, "unknown_tool"],
      ["hostile/esc\u001b[31mred", false, "unknown_tool"],
      ["huge_schema", false, "unknown_tool"],
      ["hostile/echo", true, undefined],
    ]);
    expect(results[0]?.summary).toContain(
      'lists the tool "ref_loop", but capgate does not admit it: inputSchema has a $ref loop',
    );
    expect(results[1]?.summary).toContain("is not a tool name capgate admits for MCP server 'hostile'");
    // A bare name is the native error: the server's refused tool is not reached either way.
    expect(results[2]?.summary).toMatch(/^unknown_tool \(at `tool`\): Unknown tool 'huge_schema'/);
    // What the model read next is the refusal with its reason.
    expect(JSON.stringify(model.calls[1]?.messages)).toContain(
      "does not admit it: inputSchema has a $ref loop",
    );
    expect(readFileSync(log, "utf8")).toBe('"echo"\n');
    await chat.close();
  }, 120_000);
});

describe("host programs never come from the workspace (PATH entries the model can write)", () => {
  it("git tools and a configured MCP server by bare name skip <workspace>/node_modules/.bin on PATH", async () => {
    const root = mkdtempSync(join(tmpdir(), "capgate-hostpath-"));
    const workspace = join(root, "ws");
    const bin = join(workspace, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    const marker = join(root, "planted-program-ran");
    // What a model writes into its workspace: a `git` and an `npx` that would run on the host.
    for (const name of ["git", "planted-mcp"]) {
      writeFileSync(join(bin, name), `#!/bin/sh\necho ${name} >> '${marker}'\nexit 1\n`, { mode: 0o755 });
    }
    for (const args of [
      ["init", "-q"],
      ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "i"],
    ]) {
      await new Promise<void>((done, fail) =>
        spawn("/usr/bin/git", args, { cwd: workspace, stdio: "ignore" }).on("exit", (code) =>
          code === 0 ? done() : fail(new Error(`git ${args[0]} exited ${code}`)),
        ),
      );
    }
    // capgate started from an npm script (or npx, or an activated .venv): the workspace's bin first on PATH.
    const processEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
    const config = {
      shell: shellForTests(),
      mcpServers: { planted: { command: "planted-mcp" } },
    } as unknown as CapgateConfig;
    const h = await createHarness({ workspace, stateDir: join(root, "state"), processEnv, config });
    open.push(h);
    const status = await h.callTool("git.status", {});
    expect(status.result.success, status.result.summary).toBe(true);
    await expect(h.callTool("planted/anything", {})).rejects.toThrow();
    expect(existsSync(marker) ? readFileSync(marker, "utf8") : "").toBe("");
  });

  it("a configured server without cwd starts in its own directory under the state dir, not where capgate runs", async () => {
    // Found in the outside attack: `npx -y @modelcontextprotocol/server-github` started in the
    // workspace ran the model's node_modules/.bin/mcp-server-github on the host (npx, python -m,
    // uv run and node's module lookup load code relative to where they start).
    const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-servercwd-")));
    const workspace = join(root, "ws");
    mkdirSync(workspace);
    const stateDir = join(root, "state");
    const server = join(import.meta.dirname, "../../mcp-client/test/fixtures/cwd-server.mjs");
    const h = await createHarness({
      workspace,
      stateDir,
      config: {
        shell: shellForTests(),
        mcpServers: {
          plain: { command: process.execPath, args: [server] },
          placed: { command: process.execPath, args: [server], cwd: root },
        },
      } as unknown as CapgateConfig,
    });
    open.push(h);
    const plain = await h.callTool("plain/where", {});
    expect(plain.result.summary).toBe(join(stateDir, "mcp-servers", "plain"));
    // A cwd in the entry is the operator's choice, kept.
    expect((await h.callTool("placed/where", {})).result.summary).toBe(root);
  });
});
