import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { RunEvent } from "@capgate/loop";
import { createScriptedModel } from "@capgate/models";
import { needs, shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import type { CapgateConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";

// script.run over the real built-in tools: fs on a temp workspace, the shell in its sandbox,
// a real stdio MCP server from npm, through every host (goal loop, direct call, MCP gate).

const open: Harness[] = [];
async function harness(config: CapgateConfig = {}, extra: Parameters<typeof createHarness>[0] = {}) {
  const root = mkdtempSync(join(tmpdir(), "capgate-script-"));
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  const h = await createHarness({
    workspace,
    stateDir,
    ...extra,
    config: { ...config, shell: { ...shellForTests(), ...config.shell } },
  });
  open.push(h);
  return { h, workspace, stateDir };
}
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });
const run = (source: string) => act("capability_call", { tool: "script.run", arguments: { source } });
const signal = () => ({ signal: new AbortController().signal });

function trace(stateDir: string, runId: string): RunEvent[] {
  return readFileSync(join(stateDir, "runs", `${runId}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as RunEvent);
}

function everythingServer(): { command: string; args: string[] } {
  const require = createRequire(import.meta.url);
  const entry = join(
    dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
  return { command: process.execPath, args: [entry, "stdio"] };
}

// Each test builds a harness and runs a goal over real tools (an npm MCP server's start, the
// sandbox's): on a busy two-core machine that is tens of seconds, and nothing here is timed.
const WORK_TIMEOUT = 180_000;

describe("script.run in the goal loop, over fs", { timeout: WORK_TIMEOUT }, () => {
  it("loops over files in one step, returns only the digest, and traces every nested call", async () => {
    const { h, workspace, stateDir } = await harness();
    mkdirSync(join(workspace, "notes"));
    for (let i = 1; i <= 5; i++) writeFileSync(join(workspace, "notes", `n${i}.txt`), "line\n".repeat(i));
    const source = `
      const listed = await tools.fs.glob({ pattern: "notes/*.txt" });
      const counts = {};
      for (const path of listed.data.files) {
        const page = await tools.fs.read({ path });
        counts[path] = page.data.content.split("\\n").filter(Boolean).length;
      }
      await tools.fs.write({ path: "digest.json", content: JSON.stringify(counts) });
      return counts;`;
    const model = createScriptedModel([
      act("capability_load", { name: "fs" }),
      act("capability_load", { name: "script" }),
      act("capability_call", { tool: "script.types", arguments: { tools: ["fs"] } }),
      run(source),
      act("verify", { claim: "digest written", command: "test -s digest.json" }),
      act("finish", { summary: "counted" }),
    ]);
    const r = await h.runGoal({ goal: "count lines of the notes", profile: "Orchestrator", model });
    expect(r.outcome).toBe("finished");
    const events = trace(stateDir, r.runId);
    const api = events.find((e) => e.type === "tool_result" && e.tool === "script.types") as {
      summary: string;
    };
    expect(api.summary).toContain("read(args: {");
    expect(api.summary).toContain("declare const tools: {");
    const result = events.find((e) => e.type === "tool_result" && e.tool === "script.run") as {
      summary: string;
      success: boolean;
      step: number;
    };
    expect(result.success).toBe(true);
    const counts = {
      "notes/n1.txt": 1,
      "notes/n2.txt": 2,
      "notes/n3.txt": 3,
      "notes/n4.txt": 4,
      "notes/n5.txt": 5,
    };
    expect(result.summary).toContain(JSON.stringify(counts));
    expect(JSON.parse(readFileSync(join(workspace, "digest.json"), "utf8"))).toEqual(counts);
    // Seven nested calls, each traced under the script.run of its step; their texts never reached the model.
    const nested = events.filter((e) => (e.type === "tool_called" || e.type === "tool_result") && e.parent);
    expect(nested.map((e) => (e.type === "tool_called" ? e.tool : `${e.type}`))).toHaveLength(14);
    expect(
      nested.every((e) => "parent" in e && e.parent?.step === result.step && e.parent.tool === "script.run"),
    ).toBe(true);
    expect(JSON.stringify(model.calls.at(-1)?.messages)).not.toContain("line\\nline\\nline");
  });
});

describe("script.run over a real stdio MCP server", { timeout: WORK_TIMEOUT }, () => {
  it("calls MCP tools by name, reads their structured results, and gets the gate's errors", async () => {
    const { h, stateDir } = await harness({ mcpServers: { every: everythingServer() } });
    await h.indexMcpTools();
    const source = `
      const sum = await tools.call("every/get-sum", { a: 2, b: 40 });
      const weather = await tools.call("every/get-structured-content", { location: "Chicago" });
      let refused;
      try { await tools.call("every/get-sum", { a: 1, c: 2 }); } catch (e) { refused = { code: e.code, property: e.property }; }
      return { sum: sum.summary, humidity: weather.structuredContent.humidity, refused };`;
    const model = createScriptedModel([
      act("capability_load", { name: "mcp:every" }),
      act("capability_load", { name: "script" }),
      act("capability_call", { tool: "script.types", arguments: { tools: ["mcp:every"] } }),
      run(source),
      act("mark_impossible", { reason: "done" }),
    ]);
    const r = await h.runGoal({ goal: "sum", profile: "Orchestrator", model, mcp: true });
    const events = trace(stateDir, r.runId);
    const api = events.find((e) => e.type === "tool_result" && e.tool === "script.types") as {
      summary: string;
    };
    // The output schema the server declares types the structured result.
    expect(api.summary).toMatch(
      /call\(name: "every\/get-structured-content", args: \{[\s\S]*humidity: number;/,
    );
    const result = events.find((e) => e.type === "tool_result" && e.tool === "script.run") as {
      summary: string;
    };
    const value = JSON.parse(result.summary.split("\n")[1] ?? "null") as {
      sum: string;
      humidity: number;
      refused: { code: string; property?: string };
    };
    expect(value.sum).toContain("42");
    expect(value.humidity).toBe(82);
    expect(value.refused.code).toBe("invalid_arguments");
    const via = events
      .filter((e) => e.type === "tool_result" && e.parent)
      .map((e) => e.type === "tool_result" && e.via);
    expect(via.slice(0, 2)).toEqual(["mcp", "mcp"]);
  });
});

const shell = needs(["bwrap"]);
describe.skipIf(shell.skip)(
  `script.run over the shell in its sandbox${shell.note}`,
  { timeout: WORK_TIMEOUT },
  () => {
    it("runs commands through the shell policy: a GUI opener is refused inside the script as it is outside", async () => {
      const { h } = await harness({}, {});
      const out = await h.callTool("script.run", {
        source: `
        const ran = await tools.shell.run({ command: "echo from-the-sandbox" });
        let refused;
        try { await tools.shell.run({ command: "xdg-open https://example.com" }); } catch (e) { refused = e.code; }
        return { out: ran.data.stdout.trim(), refused };`,
      });
      expect(out.result.success).toBe(true);
      expect((out.result.data as { value: unknown }).value).toEqual({
        out: "from-the-sandbox",
        refused: "policy_denied",
      });
    });
  },
);

describe("script.run as a direct call (capgate call, /tools/call)", { timeout: WORK_TIMEOUT }, () => {
  it("reaches every registered tool, like the operator's own calls, with the same approvals", async () => {
    const asked: string[] = [];
    const { h, workspace } = await harness(
      { approval: "on-risk" },
      {
        approve: async (request) => {
          asked.push(`${request.tool} ${JSON.stringify(request.arguments)}`);
          return request.arguments.path !== "refused.txt";
        },
      },
    );
    const out = await h.callTool("script.run", {
      source: `
        await tools.fs.write({ path: "granted.txt", content: "yes" });
        try { await tools.fs.write({ path: "refused.txt", content: "no" }); } catch (e) { return e.message; }`,
    });
    expect((out.result.data as { value: unknown }).value).toBe(
      "The operator denied fs.write; it was not run.",
    );
    expect(readFileSync(join(workspace, "granted.txt"), "utf8")).toBe("yes");
    expect(existsSync(join(workspace, "refused.txt"))).toBe(false);
    expect(asked).toEqual([
      'fs.write {"path":"granted.txt","content":"yes"}',
      'fs.write {"path":"refused.txt","content":"no"}',
    ]);
  });
});

describe("script.run: a script's concurrent calls ask the operator one at a time", {
  timeout: WORK_TIMEOUT,
}, () => {
  it("queues approvals in the order they are asked, never two questions at once", async () => {
    let open = 0;
    let most = 0;
    const order: string[] = [];
    const { h } = await harness(
      { approval: "on-risk" },
      {
        approve: async (request) => {
          open++;
          most = Math.max(most, open);
          order.push(String(request.arguments.path));
          await new Promise((resolve) => setTimeout(resolve, 20));
          open--;
          return true;
        },
      },
    );
    const out = await h.callTool("script.run", {
      source: `await Promise.all(["a", "b", "c", "d"].map((n) => tools.fs.write({ path: n + ".txt", content: n })));
               return "all written";`,
    });
    expect((out.result.data as { value: unknown }).value).toBe("all written");
    expect(most).toBe(1);
    expect(order.sort()).toEqual(["a.txt", "b.txt", "c.txt", "d.txt"]);
  });
});

describe("script.run through the MCP gate (capgate mcp serve)", { timeout: WORK_TIMEOUT }, () => {
  it("chains calls in one capability_call, each checked and traced in the gate session's run", async () => {
    const { h, workspace, stateDir } = await harness();
    writeFileSync(join(workspace, "a.txt"), "alpha");
    const gate = h.createGateSession();
    await gate.handlers.capability_load({ name: "fs" }, signal());
    await gate.handlers.capability_load({ name: "script" }, signal());
    const reply = (await gate.handlers.capability_call(
      {
        tool: "script.run",
        arguments: {
          source: `const a = await tools.fs.read({ path: "a.txt" });
                   let missing; try { await tools.git.status() } catch (e) { missing = e.code }
                   return [a.data.content, missing];`,
        },
      },
      signal(),
    )) as { success: boolean; summary: string };
    gate.close();
    expect(reply.success).toBe(true);
    expect(reply.summary).toContain('["alpha","unknown_tool"]');
    const events = trace(stateDir, gate.runId);
    expect(
      events
        .filter((e) => e.type === "tool_result" && e.parent)
        .map((e) => e.type === "tool_result" && [e.tool, e.rejected ?? "ok"]),
    ).toEqual([
      ["fs.read", "ok"],
      ["git.status", "unknown_tool"],
    ]);
  });
});
