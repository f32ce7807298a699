import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cli, processesMatching, sandbox, script, start } from "./test-support/cli.js";

describe("capgate basics", () => {
  it("prints its version and help", async () => {
    const box = sandbox();
    const v = await cli(["--version"], box);
    expect(v).toMatchObject({ code: 0 });
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const h = await cli(["--help"], box);
    expect(h.code).toBe(0);
    for (const c of [
      "run",
      "chat",
      "demo",
      "eval",
      "search",
      "capabilities",
      "call",
      "parse",
      "profiles",
      "mcp",
      "serve",
      "worker",
      "trace",
    ]) {
      expect(h.stdout).toContain(c);
    }
  });

  it("rejects an unknown command with a usage error", async () => {
    const r = await cli(["frobnicate"], sandbox());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command");
  });

  it("search ranks fs first for 'read files', and --json prints SearchHit[]", async () => {
    const box = sandbox();
    const text = await cli(["search", "read files"], box);
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toMatch(/^fs /);
    const json = await cli(["search", "take a screenshot of the desktop", "--json", "--limit", "3"], box);
    const hits = JSON.parse(json.stdout) as Array<{
      capability: string;
      tools: Array<{ signature: string }>;
    }>;
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits.map((h) => h.capability)).toContain("cua");
    expect(hits[0]?.tools[0]?.signature).toMatch(/\(/);
    expect((await cli(["search", "x", "--limit", "0"], box)).code).toBe(2);
  });

  it("lists capabilities and shows one with signatures", async () => {
    const box = sandbox();
    const list = await cli(["capabilities", "--json"], box);
    const manifests = JSON.parse(list.stdout) as Array<{ tools: unknown[] }>;
    expect(manifests).toHaveLength(11);
    expect(manifests.reduce((n, m) => n + m.tools.length, 0)).toBe(49);
    const show = await cli(["capabilities", "show", "fs"], box);
    expect(show.stdout).toContain("fs.patch(path: string, old: string, new: string)");
    const missing = await cli(["capabilities", "show", "fss"], box);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("did you mean 'fs'?");
  });

  it("parse prints the action or the parser's code, exiting non-zero on rejection", async () => {
    const box = sandbox();
    const good = await cli(["parse", '{"name":"capability_load","arguments":{"name":"fs"}}'], box);
    expect(good.code).toBe(0);
    const bad = await cli(["parse", '{"name":"capability_search","arguments":{"q":"x"}}'], box);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("invalid_arguments");
    expect(bad.stderr).toContain("did you mean `query`?");
    const json = await cli(["parse", "--json"], box, { input: "not json" });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "invalid_json" } });
  });

  it("capability lint: ok for a real package, one line per problem for a bad manifest", async () => {
    const box = sandbox();
    const bad = join(box.root, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify({
        name: "Bad",
        version: "1",
        description: "",
        profileFit: [],
        tools: [{ name: "bad.x", description: "d", inputSchema: { type: "object" } }],
      }),
    );
    const r = await cli(["capability", "lint", bad], box);
    expect(r.code).toBe(1);
    const problems = r.stderr.split("\n").filter((l) => l.startsWith("✗"));
    expect(problems.length).toBeGreaterThanOrEqual(4);
    expect(r.stderr).toContain("additionalProperties");
    const fsPackage = fileURLToPath(new URL("../../../packages/capabilities/fs", import.meta.url));
    const ok = await cli(["capability", "lint", fsPackage], box);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("10 tool(s)");
  });

  it("profiles lists the policies and infers with word boundaries", async () => {
    const box = sandbox();
    expect((await cli(["profiles"], box)).stdout).toContain("Orchestrator");
    expect((await cli(["profiles", "infer", "run the tests"], box)).stdout.trim()).toBe("Verifier");
    expect((await cli(["profiles", "infer", "summarise the latest news"], box)).stdout.trim()).not.toBe(
      "Verifier",
    );
  });

  it("names the bad property of a malformed config file", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "capgate.config.json"), JSON.stringify({ approval: "sometimes" }));
    const r = await cli(["search", "files"], box);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("approval");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("capgate call", () => {
  it("exits 0 on success, 1 on tool failure, 2 on rejection", async () => {
    const box = sandbox();
    writeFileSync(join(box.workspace, "hello.txt"), "hello there");
    const ok = await cli(["call", "fs.read", '{"path":"hello.txt"}'], box);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("hello there");
    const json = await cli(["call", "fs.read", '{"path":"hello.txt"}', "--json"], box);
    expect(JSON.parse(json.stdout)).toMatchObject({ success: true, via: "native" });
    expect((await cli(["call", "shell.run", '{"command":"exit 3"}'], box)).code).toBe(1);
    const unknown = await cli(["call", "fs.raed", "{}"], box);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("fs.read");
    const invalid = await cli(["call", "fs.read", '{"pth":"a"}'], box);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("pth");
    const denied = await cli(
      ["call", "shell.run", `{"command":"sh -c 'xdg-open https://example.com'"}`],
      box,
    );
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain("browser_panel.open");
    const escaped = await cli(["call", "fs.read", '{"path":"../../../etc/passwd"}'], box);
    expect(escaped.code).toBe(2);
    expect((await cli(["call", "fs.read", "{not json"], box)).code).toBe(2);
  });

  it("denies a required approval when no terminal can answer", async () => {
    const box = sandbox();
    const r = await cli(["call", "fs.write", '{"path":"a.txt","content":"x"}', "--approval", "on-risk"], box);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no terminal");
    expect(existsSync(join(box.workspace, "a.txt"))).toBe(false);
  });
});

describe("capgate run / demo / trace", () => {
  it("demo fixes the project offline and prints where the trace is", async () => {
    const box = sandbox();
    const r = await cli(["demo"], box);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("finish refused");
    expect(r.stdout).toContain("verify passed");
    expect(r.stdout).toContain("✓ finished");
    const tracePath = /trace: (\S+\.jsonl)/.exec(r.stdout)?.[1] ?? "";
    expect(existsSync(tracePath)).toBe(true);
    const runId = /capgate trace (\S+)/.exec(r.stdout)?.[1] ?? "";
    const trace = await cli(["trace", runId], box);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain("fs.patch");
    const list = await cli(["trace"], box);
    expect(list.stdout).toContain(runId);
  });

  it("demo still finishes where bubblewrap cannot start (its own scripted commands run unsandboxed, said so)", async () => {
    const box = sandbox();
    writeFileSync(
      join(box.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { bwrap: join(box.root, "no-such-bwrap") } }),
    );
    const r = await cli(["demo"], box);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("verify passed");
    expect(r.stdout).toContain("math.js now adds");
    expect(r.stderr).toContain("bubblewrap is not installed");
    expect(r.stderr).not.toContain("capgate.config.json) — commands");
    // A model's command under the same config is still refused, never silently unsandboxed.
    const call = await cli(["call", "shell.run", '{"command":"true"}'], box);
    expect(call.code).not.toBe(0);
    expect(call.stderr).toContain("bubblewrap");
  });

  it("maps outcomes to exit codes: finished 0, impossible 3, step limit 4, model error 1", async () => {
    const box = sandbox({ runsCommands: true });
    const finished = script(box, [
      ["verify", { claim: "ok", command: "true" }],
      ["finish", { summary: "done" }],
    ]);
    expect((await cli(["run", "say hello", "--model", `scripted:${finished}`], box)).code).toBe(0);
    const impossible = script(box, [["mark_impossible", { reason: "no network" }]]);
    expect((await cli(["run", "g", "--model", `scripted:${impossible}`], box)).code).toBe(3);
    const loop = script(box, [
      ["goal_update", { progress: "a" }],
      ["goal_update", { progress: "b" }],
    ]);
    expect((await cli(["run", "g", "--model", `scripted:${loop}`, "--max-steps", "2"], box)).code).toBe(4);
    const short = script(box, [["goal_update", { progress: "a" }]]);
    const error = await cli(["run", "g", "--model", `scripted:${short}`], box);
    expect(error.code).toBe(1);
    expect(error.stderr).toContain("no reply 2");
  });

  it("--json prints every event as one JSON line", async () => {
    const box = sandbox();
    const s = script(box, ["prose is not an action", ["mark_impossible", { reason: "r" }]]);
    const r = await cli(["run", "g", "--model", `scripted:${s}`, "--json"], box);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; code?: string });
    expect(events[0]?.type).toBe("run_started");
    expect(events.find((e) => e.type === "action_rejected")?.code).toBe("invalid_json");
    expect(events.at(-1)?.type).toBe("run_ended");
  });

  it("explains a missing or malformed scripted model file", async () => {
    const box = sandbox();
    const missing = await cli(["run", "g", "--model", "scripted:/nope/replies.json"], box);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("/nope/replies.json");
    const bad = join(box.root, "bad.json");
    writeFileSync(bad, "[1, 2");
    const malformed = await cli(["run", "g", "--model", `scripted:${bad}`], box);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain("bad.json");
    const noModel = await cli(["run", "g"], box);
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toContain("No model is configured");
  });

  it("Ctrl-C aborts the run cleanly: run_ended aborted, its processes gone", async () => {
    const box = sandbox({ runsCommands: true });
    const marker = `sleep 61.${Date.now() % 1000}`;
    const s = script(box, [
      ["capability_load", { name: "shell" }],
      ["capability_call", { tool: "shell.run", arguments: { command: marker } }],
      ["mark_impossible", { reason: "never" }],
    ]);
    const child = start(["run", "g", "--profile", "Orchestrator", "--model", `scripted:${s}`, "--json"], box);
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("the tool call never started")), 20_000);
      const poll = setInterval(() => {
        if (out.includes('"type":"tool_called"') && processesMatching(marker).length > 0) {
          clearInterval(poll);
          clearTimeout(t);
          resolve();
        }
      }, 50);
    });
    child.kill("SIGINT");
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    expect(code).toBe(130);
    const last = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as {
      type: string;
      outcome: string;
      runId: string;
    };
    expect(last).toMatchObject({ type: "run_ended", outcome: "aborted" });
    const trace = readFileSync(join(box.home, "runs", `${last.runId}.jsonl`), "utf8")
      .trim()
      .split("\n");
    expect(JSON.parse(trace.at(-1) ?? "{}")).toMatchObject({ type: "run_ended", outcome: "aborted" });
    expect(processesMatching(marker)).toEqual([]);
  }, 40_000);
});
