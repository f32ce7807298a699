import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type JsonSchema, validate } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { type CliResult, cli, type Sandbox, sandbox, script } from "./test-support/cli.js";

// Every --json output and the --json error line, checked against the published schemas in
// apps/cli/schemas/ (linked from docs/cli.md): real outputs of the built CLI, not samples.

const SCHEMAS = fileURLToPath(new URL("../schemas/", import.meta.url));
const schema = (name: string): JsonSchema =>
  JSON.parse(readFileSync(join(SCHEMAS, `${name}.schema.json`), "utf8")) as JsonSchema;

function conforms(name: string, value: unknown): void {
  const verdict = validate(schema(name), value);
  expect(verdict.ok ? [] : verdict.errors, `${name}.schema.json`).toEqual([]);
}

function document(name: string, r: CliResult): unknown {
  expect(r.code, r.stderr).toBe(0);
  const value = JSON.parse(r.stdout) as unknown;
  conforms(name, value);
  return value;
}

function lines(name: string, text: string): unknown[] {
  const values = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as unknown);
  for (const value of values) conforms(name, value);
  return values;
}

function errorLine(r: CliResult): { error: { code: string } } {
  expect(r.code).not.toBe(0);
  const last = r.stderr.trim().split("\n").at(-1) ?? "";
  const value = JSON.parse(last) as { error: { code: string } };
  conforms("error", value);
  return value;
}

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const everythingCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(everything)} stdio`;

describe("the published JSON Schemas", () => {
  it("are each a valid 2020-12 document with an $id under apps/cli/schemas", () => {
    const files = readdirSync(SCHEMAS).filter((f) => f.endsWith(".schema.json"));
    expect(files.length).toBeGreaterThanOrEqual(16);
    for (const file of files) {
      const doc = JSON.parse(readFileSync(join(SCHEMAS, file), "utf8")) as { $schema: string; $id: string };
      expect(doc.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(doc.$id.endsWith(`/apps/cli/schemas/${file}`)).toBe(true);
    }
  });

  it("fail an output of the wrong shape (the check is not vacuous)", () => {
    expect(validate(schema("error"), { error: { code: "x" } }).ok).toBe(false);
    expect(validate(schema("call"), { success: true, summary: "s" }).ok).toBe(false);
    expect(validate(schema("run-event"), { type: "tool_called", runId: "r", seq: 1, time: "t" }).ok).toBe(
      false,
    );
  });
});

describe("--json outputs conform to their schemas", () => {
  // Each test starts the CLI several times: room for a loaded machine (nothing here is timed).
  const SLOW = 300_000;
  let box: Sandbox;

  it(
    "capabilities, capabilities show, search, profiles, profiles infer, parse",
    async () => {
      box = sandbox();
      document("capabilities", await cli(["capabilities", "--json"], box));
      document("capability", await cli(["capabilities", "show", "fs", "--json"], box));
      document("search", await cli(["search", "read files", "--json"], box));
      document("profiles", await cli(["profiles", "--json"], box));
      document("profiles-infer", await cli(["profiles", "infer", "fix the failing test", "--json"], box));
      document("profiles-infer", await cli(["profiles", "infer", "hello", "--json"], box));
      document("parse", await cli(["parse", '{"name":"finish","arguments":{"summary":"x"}}', "--json"], box));
      const refused = await cli(["parse", "not json", "--json"], box);
      expect(refused.code).toBe(1);
      conforms("parse", JSON.parse(refused.stdout));
      errorLine(await cli(["capabilities", "show", "fss", "--json"], box));
      // An invalid config: the error line lists every problem.
      const bad = sandbox();
      writeFileSync(
        join(bad.workspace, "capgate.config.json"),
        JSON.stringify({ modle: "x", approval: "sometimes" }),
      );
      const invalid = errorLine(await cli(["capabilities", "--json"], bad)) as {
        error: { code: string; problems?: unknown[] };
      };
      expect(invalid.error.code).toBe("invalid_config");
      expect(invalid.error.problems?.length).toBe(2);
    },
    SLOW,
  );

  it(
    "call (native, failed, refused) and the error line",
    async () => {
      box = sandbox();
      document("call", await cli(["call", "fs.write", '{"path":"a.txt","content":"hi"}', "--json"], box));
      document("call", await cli(["call", "fs.read", '{"path":"a.txt"}', "--json"], box));
      expect(errorLine(await cli(["call", "fs.reed", "{}", "--json"], box)).error.code).toBe("unknown_tool");
      errorLine(await cli(["call", "fs.read", '{"pth":"a"}', "--json"], box));
      errorLine(await cli(["call", "fs.read", '{"path":"../../etc/passwd"}', "--json"], box));
    },
    SLOW,
  );

  it(
    "capability lint",
    async () => {
      box = sandbox();
      const fsPackage = fileURLToPath(new URL("../../../packages/capabilities/fs", import.meta.url));
      document("lint", await cli(["capability", "lint", fsPackage, "--json"], box));
      const bad = join(box.root, "bad.json");
      writeFileSync(
        bad,
        JSON.stringify({ name: "bad", version: "1", description: "", profileFit: [], tools: [] }),
      );
      const r = await cli(["capability", "lint", bad, "--json"], box);
      expect(r.code).toBe(1);
      conforms("lint", JSON.parse(r.stdout));
    },
    SLOW,
  );

  it(
    "mcp tools, mcp call, mcp status",
    async () => {
      box = sandbox();
      document("mcp-tools", await cli(["mcp", "tools", "--command", everythingCommand, "--json"], box));
      document(
        "mcp-call",
        await cli(["mcp", "call", "echo", '{"message":"hi"}', "--command", everythingCommand, "--json"], box),
      );
      writeFileSync(
        join(box.workspace, "capgate.config.json"),
        JSON.stringify({ mcpServers: { hosted: { url: "https://mcp.example.com/mcp", oauth: {} } } }),
      );
      document("mcp-status", await cli(["mcp", "status", "--offline", "--json"], box));
    },
    SLOW,
  );

  it(
    "run, chat and trace event streams, and the list of runs",
    async () => {
      box = sandbox({ runsCommands: true });
      const s = script(box, [
        ["capability_load", { name: "fs" }],
        ["capability_call", { tool: "fs.write", arguments: { path: "x.txt", content: "x" } }],
        ["verify", { claim: "written", command: "test -s x.txt" }],
        ["finish", { summary: "done" }],
      ]);
      const run = await cli(["run", "write x.txt", "--model", `scripted:${s}`, "--json"], box);
      expect(run.code, run.stderr).toBe(0);
      const events = lines("run-event", run.stdout) as Array<{ type: string; runId: string }>;
      expect(events.map((e) => e.type)).toContain("tool_result");
      const runId = events[0]?.runId as string;
      const traced = await cli(["trace", runId, "--json"], box);
      expect(traced.code, traced.stderr).toBe(0);
      lines("run-event", traced.stdout);
      document("runs", await cli(["trace", "--json"], box));
      errorLine(await cli(["trace", "no-such-run", "--json"], box));
      const c = script(box, [["finish", { summary: "the answer" }]]);
      const chat = await cli(["chat", "--model", `scripted:${c}`, "--json"], box, {
        input: "hello\n/exit\n",
      });
      expect(chat.code, chat.stderr).toBe(0);
      const chatLines = lines("run-event", chat.stdout) as Array<{ type: string }>;
      expect(chatLines.map((l) => l.type)).toContain("chat_reply");
    },
    SLOW,
  );

  it(
    "eval --list",
    async () => {
      box = sandbox();
      document("eval-list", await cli(["eval", "--list", "--json"], box));
    },
    SLOW,
  );
});
