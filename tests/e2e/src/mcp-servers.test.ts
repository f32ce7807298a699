import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, everything, REPO, sandbox, serverEntry, stdioGateOn } from "./support.js";

const run = promisify(execFile);
const FIXTURES = join(REPO, "packages", "mcp-client", "test", "fixtures");

/** `capgate ARGS` with the box's config, from the box's root; never throws (returns code, stdout, stderr). */
async function capgate(box: ReturnType<typeof sandbox>, args: string[]) {
  try {
    const r = await run(process.execPath, [CLI_BIN, "--config", box.configFile, ...args], {
      cwd: box.root,
      env: childEnv(box.home),
      timeout: 60_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

function servers(box: { workspace: string; home: string }) {
  return {
    filesystem: { command: process.execPath, args: [serverEntry("server-filesystem"), box.workspace] },
    memory: {
      command: process.execPath,
      args: [serverEntry("server-memory")],
      env: { MEMORY_FILE_PATH: join(box.home, "memory.jsonl") },
    },
    everything: everything(),
    checks: { command: process.execPath, args: [join(FIXTURES, "checks-server.mjs")] },
    hostile: { command: process.execPath, args: [join(FIXTURES, "hostile-server.mjs")] },
  };
}

describe("third-party MCP servers through capgate", () => {
  it("capgate capabilities lists configured servers on a fresh state dir, with the right skip counts", async () => {
    const box = sandbox({});
    const configured = sandbox({ mcpServers: servers(box) });
    const r = await capgate(configured, ["capabilities"]);
    expect(r.code, r.stderr).toBe(0);
    for (const name of ["mcp:filesystem", "mcp:memory", "mcp:everything", "mcp:checks", "mcp:hostile"])
      expect(r.stdout).toContain(name);
    // hostile-server: 8 tools, of which a too-long name, a control character, U+202E and a duplicate are skipped.
    expect(r.stdout).toMatch(/mcp:hostile: 4 tools \(live\), 4 skipped/);
    // checks-server: 7 tools, of which `broken` (a schema that does not compile) is refused.
    expect(r.stdout).toMatch(/mcp:checks: 6 tools \(live\), 1 skipped\n/);
    // Now cached: the next listing comes from disk.
    const json = JSON.parse((await capgate(configured, ["capabilities", "--json"])).stdout) as Array<{
      name: string;
      tools: Array<{ name: string; risk?: string; title?: string; outputSchema?: unknown }>;
    }>;
    const checks = json.find((m) => m.name === "mcp:checks");
    expect(checks?.tools.map((t) => t.name)).toContain("checks/get_weather");
    expect(checks?.tools.find((t) => t.name === "checks/shaped")).toMatchObject({
      title: "Shaped result",
      risk: "read",
    });
    expect(checks?.tools.find((t) => t.name === "checks/shaped")?.outputSchema).toMatchObject({
      required: ["n"],
    });
  }, 120_000);

  it("every callable tool is found by search under the name it is called by", async () => {
    const box = sandbox({});
    const configured = sandbox({ mcpServers: servers(box) });
    const weather = await capgate(configured, ["search", "a name with a space", "--json"]);
    expect(weather.stdout).toContain("checks/get_weather");
    const slash = await capgate(configured, ["search", "a name with a slash", "--json"]);
    expect(slash.stdout).toContain("hostile/other/thing");
    const graph = await capgate(configured, ["search", "knowledge graph entities", "--json"]);
    expect(graph.stdout).toContain("memory/create_entities");
    const files = await capgate(configured, ["search", "read text file", "--json"]);
    expect(files.stdout).toContain("filesystem/read_text_file");
    // And called by that name.
    expect((await capgate(configured, ["call", "checks/get_weather", "{}"])).stdout).toContain(
      "get weather ran",
    );
  }, 120_000);

  it("capgate call: wrong argument types exit 2 naming the property; filesystem and memory calls work", async () => {
    const box = sandbox({});
    const configured = sandbox({ mcpServers: servers(box) });
    // capgate offers its workspace (here the directory it runs in) as the one root, and the
    // filesystem server serves the client's roots in place of its command-line directories.
    writeFileSync(join(configured.root, "hello.txt"), "hello from the filesystem server\n");
    const bad = await capgate(configured, ["call", "everything/get-sum", '{"a":"1","b":2}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("(at arguments.a)");
    expect(bad.stderr).toContain("Nothing was sent to the server");
    const sum = await capgate(configured, ["call", "everything/get-sum", '{"a":1,"b":2}']);
    expect(sum.code, sum.stderr).toBe(0);
    expect(sum.stdout).toContain("3");
    const read = await capgate(configured, [
      "call",
      "filesystem/read_text_file",
      JSON.stringify({ path: join(configured.root, "hello.txt") }),
    ]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain("hello from the filesystem server");
    // The directory on its command line is outside the roots capgate gave it.
    writeFileSync(join(box.workspace, "other.txt"), "not offered\n");
    const outside = await capgate(configured, [
      "call",
      "filesystem/read_text_file",
      JSON.stringify({ path: join(box.workspace, "other.txt") }),
    ]);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/outside allowed directories/);
    const create = await capgate(configured, [
      "call",
      "memory/create_entities",
      JSON.stringify({
        entities: [{ name: "capgate", entityType: "project", observations: ["gates tools"] }],
      }),
    ]);
    expect(create.code, create.stderr).toBe(0);
    const graph = await capgate(configured, ["call", "memory/read_graph", "{}", "--json"]);
    expect(JSON.parse(graph.stdout).structuredContent ?? JSON.parse(graph.stdout).summary).toBeTruthy();
    expect(graph.stdout).toContain("gates tools");
    // draft-07 with $ref (packages/mcp-client/src/call-checks.test.ts proves no request reaches the server).
    const rejected = await capgate(configured, ["call", "checks/add", '{"a":"1","b":2}']);
    expect(rejected.code).toBe(2);
    expect(rejected.stderr).toContain("(at arguments.a)");
  }, 120_000);

  it("a server that changes its tool list mid-session: the gate's search follows it", async () => {
    const box = sandbox({
      mcpServers: { feature: { command: process.execPath, args: [join(FIXTURES, "feature-server.mjs")] } },
    });
    const client = await stdioGateOn(box);
    try {
      const before = await client.callTool({ name: "capability_search", arguments: { query: "zeta_tool" } });
      expect(JSON.stringify(before.content)).not.toContain("feature/zeta_tool");
      await client.callTool({
        name: "capability_call",
        arguments: { tool: "feature/add_tool", arguments: { name: "zeta_tool" } },
      });
      let found = false;
      for (let i = 0; i < 50 && !found; i++) {
        const after = await client.callTool({ name: "capability_search", arguments: { query: "zeta_tool" } });
        found = JSON.stringify(after.content).includes("feature/zeta_tool");
        if (!found) await new Promise((r) => setTimeout(r, 100));
      }
      expect(found).toBe(true);
      const called = await client.callTool({
        name: "capability_call",
        arguments: { tool: "feature/zeta_tool", arguments: {} },
      });
      expect(JSON.stringify(called.content)).toContain("zeta_tool ok");
    } finally {
      await client.close();
    }
  }, 60_000);
});
