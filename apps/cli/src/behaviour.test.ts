import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BIN,
  cli,
  type Sandbox,
  sandbox,
  withoutSandboxOffWarning,
  writePlugins,
} from "./test-support/cli.js";

/** Run `node BIN …args | head -n 1` through a real pipe that closes after one line. */
function throughHead(
  args: string[],
  box: Sandbox,
): Promise<{ code: string; stdout: string; stderr: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `${quoted} | head -n 1; echo "exit=\${PIPESTATUS[0]}" >&2`], {
      cwd: box.workspace,
      env: { ...box.env, TMPDIR: box.root },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", () => {
      const code = /exit=(\d+)/.exec(stderr)?.[1] ?? "?";
      resolve({ code, stdout, stderr: stderr.replace(/exit=\d+\n?/, "") });
    });
  });
}

describe("capgate in pipes", () => {
  it("stops quietly with exit 0 when the reader closes early, and the demo leaves no temp folder", async () => {
    const box = sandbox({ runsCommands: true });
    for (const args of [["capabilities"], ["search", "files"], ["demo"], ["trace"]]) {
      const r = await throughHead(args, box);
      expect(r.stderr, `capgate ${args.join(" ")}`).not.toContain("EPIPE");
      expect(withoutSandboxOffWarning(r.stderr), `capgate ${args.join(" ")}`).toBe("");
      expect(r.code, `capgate ${args.join(" ")}`).toBe("0");
      expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    }
    expect(readdirSync(box.root).filter((f) => f.startsWith("capgate-demo-"))).toEqual([]);
  }, 120_000);
});

describe("the --json convention", () => {
  it("one JSON document for commands that answer once, on subcommands too", async () => {
    const box = sandbox();
    const infer = await cli(["profiles", "infer", "run the tests", "--json"], box);
    expect(JSON.parse(infer.stdout)).toMatchObject({ profile: "Verifier" });
    const show = await cli(["capabilities", "show", "fs", "--json"], box);
    expect(JSON.parse(show.stdout)).toMatchObject({ name: "fs", source: { kind: "builtin" } });
    const runs = await cli(["trace", "--json"], box);
    expect(JSON.parse(runs.stdout)).toEqual([]);
    const parse = await cli(["parse", '{"name":"finish","arguments":{"summary":"done"}}', "--json"], box);
    expect(JSON.parse(parse.stdout)).toMatchObject({ ok: true, action: { name: "finish" } });
  });

  it("errors under --json are one JSON line on stderr", async () => {
    const box = sandbox();
    const r = await cli(["capabilities", "show", "fss", "--json"], box);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toEqual({
      error: {
        code: "unknown_capability",
        message: "no capability named 'fss'",
        property: "capability",
        hint: "did you mean 'fs'?",
      },
    });
  });
});

describe("errors: one line plus a hint, the right property, SPEC §11 exit codes", () => {
  /** Every stderr line is `error: …` or `hint: …`, at most one of each. */
  const oneLine = (stderr: string) => {
    const lines = stderr.trim().split("\n");
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines[0]).toMatch(/^error: /);
    if (lines[1] !== undefined) expect(lines[1]).toMatch(/^hint: /);
    return lines;
  };

  it("tags each config problem at its own property", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ modle: "x", approval: "sometimes" }),
    );
    const r = await cli(["search", "files"], box);
    expect(r.code).toBe(1);
    const [line] = oneLine(r.stderr);
    expect(line).toMatch(/modle: unexpected property `modle`; did you mean `model`\?/);
    expect(line).toMatch(/approval: must be one of "never", "on-risk", "always"/);
    expect(line).not.toMatch(/\(at modle\)/);
    const json = await cli(["search", "files", "--json"], box);
    const error = (JSON.parse(json.stderr) as { error: { problems: Array<{ property: string }> } }).error;
    expect(error.problems.map((p) => p.property).sort()).toEqual(["approval", "modle"]);
  });

  it("names a missing config file, a missing trace file and bad JSON in words", async () => {
    const box = sandbox();
    const config = await cli(["--config", join(box.root, "nonexistent.json"), "search", "x"], box);
    expect(config.code).toBe(1);
    expect(oneLine(config.stderr)[0]).toContain("nonexistent.json does not exist");
    const trace = await cli(["trace", "nope.jsonl"], box);
    expect(trace.code).toBe(1);
    expect(oneLine(trace.stderr)[0]).toContain("no trace file");
    expect(trace.stderr).not.toContain("~/.capgate");
    const json = await cli(["call", "fs.read", '{"path": "a",}'], box);
    expect(json.code).toBe(2);
    expect(oneLine(json.stderr)[0]).toBe(
      "error: the tool arguments are not valid JSON at column 14: unexpected '}', expected a property name in double quotes",
    );
  });

  it("unknown profiles, tools and commands: exit 2 with did-you-mean, human wording", async () => {
    const box = sandbox();
    for (const args of [
      ["call", "fs.read", '{"path":"a"}', "--profile", "Codr"],
      ["run", "g", "--profile", "Codr"],
    ]) {
      const r = await cli(args, box);
      expect(r.code, args.join(" ")).toBe(2);
      expect(oneLine(r.stderr)).toEqual(["error: no profile named 'Codr'", "hint: did you mean 'Coder'?"]);
    }
    const tool = await cli(["call", "zzz.qqq", "{}"], box);
    expect(tool.code).toBe(2);
    const lines = oneLine(tool.stderr);
    expect(tool.stderr).not.toContain("capability_search");
    expect(lines[1]).toContain("capgate search");
    const command = await cli(["serach", "files"], box);
    expect(command.code).toBe(2);
    expect(oneLine(command.stderr)).toEqual([
      "error: unknown command 'serach'",
      "hint: did you mean 'search'?",
    ]);
  });

  it("a run that ends in an error says so on stderr in one line", async () => {
    const box = sandbox();
    const file = join(box.root, "short.json");
    writeFileSync(file, JSON.stringify(['{"name":"goal_update","arguments":{"progress":"a"}}']));
    const r = await cli(["run", "g", "--model", `scripted:${file}`], box);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("run ended");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("run ended error");
  });
});

describe("--capability", () => {
  it("loads a plugin by path, reports a broken one by name, and shows where each came from", async () => {
    const box = sandbox();
    writePlugins(box.workspace);
    const flags = ["--capability", "./greet.mjs", "--capability", "./broken.mjs"];
    const list = await cli([...flags, "capabilities"], box);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^greet v2\.0\.0 .*\.\/greet\.mjs → /m);
    expect(list.stdout).toMatch(/^fs v.* built-in$/m);
    expect(list.stderr).toMatch(
      /^warning: capability '\.\/broken\.mjs' not loaded: fails the manifest check/m,
    );
    const call = await cli([...flags, "call", "greet.hello", '{"who":"Ada"}'], box);
    expect(call.stdout.trim()).toBe("hello Ada");
    expect(call.code).toBe(0);
  });
});
