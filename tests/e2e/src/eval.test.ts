import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, REPO, sandbox } from "./support.js";

const run = promisify(execFile);
const SCRIPTED = `scripted:${join(REPO, "packages", "eval", "suites", "starter", "scripted")}`;

async function capgate(box: ReturnType<typeof sandbox>, args: string[]) {
  try {
    const r = await run(process.execPath, [CLI_BIN, "--config", box.configFile, ...args], {
      cwd: box.root,
      env: childEnv(box.home, { NO_COLOR: "1" }),
      timeout: 300_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("capgate eval", () => {
  it("--list --json prints the starter tasks as { id, tags, goal }", async () => {
    const r = await capgate(sandbox({}), ["eval", "--list", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const tasks = JSON.parse(r.stdout) as Array<{ id: string; tags: string[]; goal: string }>;
    expect(tasks.length).toBeGreaterThanOrEqual(24);
    for (const t of tasks) expect(Object.keys(t)).toEqual(["id", "tags", "goal"]);
  });

  it("rejects an unknown task (with a suggestion) and an unknown mode", async () => {
    const box = sandbox({});
    const typo = await capgate(box, ["eval", "--model", SCRIPTED, "--tasks", "fix-typoo", "--out", "out"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('did you mean "fix-typo"?');
    const mode = await capgate(box, ["eval", "--model", SCRIPTED, "--mode", "codex", "--out", "out"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain("codex");
  });

  it("runs code mode (the built-in script capability) from the command line", async () => {
    const box = sandbox({});
    const run = await capgate(box, [
      "eval",
      "--model",
      SCRIPTED,
      "--tasks",
      "fix-typo",
      "--mode",
      "code",
      "--out",
      "out",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('"code"');
  });

  it("shows progress, stops on Ctrl-C keeping finished runs, and resumes without redoing them", async () => {
    const box = sandbox({});
    const args = [
      CLI_BIN,
      "--config",
      box.configFile,
      "eval",
      "--model",
      SCRIPTED,
      "--tasks",
      "fix-typo,write-config,bump-version",
      "--mode",
      "gate,exposed",
      "--out",
      "results",
    ];
    const child = spawn(process.execPath, args, {
      cwd: box.root,
      env: childEnv(box.home, { NO_COLOR: "1" }),
    });
    let stderr = "";
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    // Interrupt as soon as the first run is reported: an event, not a delay.
    await new Promise<void>((done) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (/\[1\/6\] ✓/.test(stderr)) done();
      });
    });
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain("run the same command again to resume");
    const partial = JSON.parse(readFileSync(join(box.root, "results", "results.json"), "utf8")) as {
      runs: Array<{ task: string; mode: string; ms: number }>;
    };
    expect(partial.runs.length).toBeGreaterThanOrEqual(1);
    expect(partial.runs.length).toBeLessThan(6);

    const again = await capgate(box, args.slice(3));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${partial.runs.length} already done (resuming)`);
    const done = JSON.parse(readFileSync(join(box.root, "results", "results.json"), "utf8")) as {
      runs: Array<{ task: string; mode: string; success: boolean; ms: number }>;
    };
    expect(done.runs).toHaveLength(6);
    expect(done.runs.every((r) => r.success)).toBe(true);
    for (const earlier of partial.runs)
      expect(done.runs.find((r) => r.task === earlier.task && r.mode === earlier.mode)?.ms).toBe(earlier.ms);
    expect(again.stdout).toMatch(/^gate +3\/3 succeeded/m);
    expect(again.stdout).toMatch(/^exposed +3\/3 succeeded/m);
    expect(readFileSync(join(box.root, "results", "report.md"), "utf8")).toContain("gate ÷ exposed");
  });
});
