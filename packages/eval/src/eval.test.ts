import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@capgate/harness";
import type { RunEvent } from "@capgate/loop";
import { validate } from "@capgate/schema";
import { needs, shellForTests } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import { startProviderServer } from "../test-support/provider-server.js";
import { distractorTools } from "./distractors.js";
import { runEval } from "./eval.js";
import { type RunRecord, resultsSchema } from "./results.js";
import { loadSuite, starterSuiteDir } from "./suite.js";

const SCRIPTS = join(starterSuiteDir(), "scripted");
const SCRIPTED = `scripted:${SCRIPTS}`;
const suite = loadSuite(starterSuiteDir());
// Without a working bubblewrap (and not required), the commands the gate runs go unsandboxed.
const config = parseConfig({ shell: shellForTests() }, { baseDir: tmpdir() });
const parts = needs(["git"]);
const out = () => mkdtempSync(join(tmpdir(), "capgate-eval-out-"));
const record = (runs: RunRecord[], task: string, mode: string) => {
  const found = runs.find((r) => r.task === task && r.mode === mode);
  if (!found) throw new Error(`no run of ${task} in ${mode} mode`);
  return found;
};
const trace = (dir: string, r: RunRecord): RunEvent[] =>
  readFileSync(join(dir, r.trace ?? "missing"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as RunEvent);

describe.skipIf(parts.skip)(`capgate eval end to end${parts.note}`, () => {
  it("runs tasks in gate and exposed mode: checkers decide, one fails, distractors join, results and reports are written", async () => {
    const dir = out();
    const tasks = ["fix-typo", "count-csv-rows", "git-commit-change", "web-json-count", "mcp-sum"];
    const seen: string[] = [];
    const result = await runEval({
      model: SCRIPTED,
      suite,
      tasks,
      modes: ["gate", "exposed"],
      distractors: 3,
      concurrency: 2,
      out: dir,
      config,
      onProgress: (e) => seen.push(e.type),
    });
    expect(result.interrupted).toBe(false);
    expect(result.ran).toBe(10);
    expect(seen.filter((t) => t === "run_finished")).toHaveLength(10);
    const saved = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect(validate(resultsSchema, saved)).toEqual({ ok: true });
    const runs = saved.runs as RunRecord[];
    for (const task of tasks) {
      for (const mode of ["gate", "exposed"]) {
        const r = record(runs, task, mode);
        expect(r.success, `${task} ${mode}: ${JSON.stringify(r.checks)} ${r.error ?? ""}`).toBe(
          task !== "count-csv-rows",
        );
        expect(r.promptTokens).toBeNull(); // the scripted model reports no usage
        expect(r.promptChars).toBeGreaterThan(r.firstPromptChars);
        expect(r.distractorCalls).toBe(0);
        const events = trace(dir, r);
        expect(events[0]?.type).toBe("run_started");
        expect(events.at(-1)?.type).toBe("run_ended");
        expect(events.filter((e) => e.type === "model_request")).toHaveLength(r.modelCalls);
      }
      // The baseline's first prompt carries every tool; the gate's the eight and what is loaded.
      expect(record(runs, task, "exposed").firstPromptChars).toBeGreaterThan(
        record(runs, task, "gate").firstPromptChars,
      );
    }
    const failed = record(runs, "count-csv-rows", "gate");
    expect(failed.outcome).toBe("finished"); // the model claimed success; the checker disagrees
    expect(failed.checks[0]).toMatchObject({ passed: false });
    expect(failed.checks[0]?.detail).toContain("138");
    expect(record(runs, "mcp-sum", "gate").checks.map((c) => c.passed)).toEqual([true, true]);
    const md = readFileSync(join(dir, "report.md"), "utf8");
    expect(md).toContain("| gate | 4/5");
    expect(md).toContain("| exposed | 4/5");
    expect(md).toContain("count-csv-rows (gate #1, finished)");
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("<svg");
    expect(html).toContain("Success rate (95 % CI)");
    expect(html).not.toMatch(/<script|<link|src="http/); // self-contained
  }, 300_000);

  it("resumes an interrupted evaluation without redoing finished runs", async () => {
    const dir = out();
    const controller = new AbortController();
    const options = {
      model: SCRIPTED,
      suite,
      tasks: ["fix-typo", "write-config", "bump-version"],
      modes: ["gate" as const],
      out: dir,
      config,
    };
    const first = await runEval({
      ...options,
      signal: controller.signal,
      onProgress: (e) => {
        if (e.type === "run_finished") controller.abort(new Error("interrupted"));
      },
    });
    expect(first.interrupted).toBe(true);
    expect(first.results.runs).toHaveLength(1);
    const before = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")).runs[0];
    const second = await runEval(options);
    expect(second.interrupted).toBe(false);
    expect(second.ran).toBe(2);
    expect(second.results.runs.map((r) => r.task)).toEqual(["bump-version", "fix-typo", "write-config"]);
    // The first run is kept as it was, not run again.
    expect(second.results.runs.find((r) => r.task === before.task)).toEqual(before);
    expect(second.results.runs.every((r) => r.success)).toBe(true);
    // Nothing left to do: a third call runs nothing.
    expect((await runEval(options)).ran).toBe(0);
    await expect(runEval({ ...options, model: "scripted:/elsewhere" })).rejects.toThrow(
      /holds results of another evaluation/,
    );
  }, 180_000);

  it("runs code mode with the built-in script capability preloaded, beside gate and exposed by default", async () => {
    const provider = await startProviderServer(suite.tasks, SCRIPTS);
    try {
      const dir = out();
      const result = await runEval({
        model: "openai:test-model",
        suite,
        tasks: ["fix-typo"],
        out: dir,
        config,
        processEnv: { ...process.env, OPENAI_BASE_URL: provider.openaiUrl },
      });
      // script is built in, so the default modes include code.
      expect(result.results.runs.map((r) => r.mode)).toEqual(["gate", "exposed", "code"]);
      expect(result.results.runs.every((r) => r.success)).toBe(true);
      const code = provider.requests.filter((q) => q.mode === "gate" && q.system.includes("script.run("));
      const gate = provider.requests.filter((q) => q.mode === "gate" && !q.system.includes("script.run("));
      expect(code.length).toBe(record(result.results.runs, "fix-typo", "code").modelCalls);
      expect(gate.length).toBe(record(result.results.runs, "fix-typo", "gate").modelCalls);
    } finally {
      await provider.close();
    }
  }, 180_000);

  it("records the provider's token usage and counts prompt characters as sent, in every mode", async () => {
    const provider = await startProviderServer(suite.tasks, SCRIPTS);
    try {
      const env = {
        ...process.env,
        OPENAI_BASE_URL: provider.openaiUrl,
        ANTHROPIC_BASE_URL: provider.anthropicUrl,
        ANTHROPIC_API_KEY: "test-key",
      };
      const dir = out();
      const result = await runEval({
        model: "openai:test-model",
        suite,
        tasks: ["fix-typo", "mcp-memory-store"],
        modes: ["gate", "exposed"],
        distractors: 2,
        out: dir,
        config,
        processEnv: env,
      });
      const distractors = distractorTools()
        .slice(0, 2)
        .map((t) => `${t.name}__${t.name}(request: string)`);
      for (const r of result.results.runs) {
        expect(r.success, `${r.task} ${r.mode}: ${JSON.stringify(r.checks)} ${r.error ?? ""}`).toBe(true);
        const requests = provider.requests.filter((q) => q.task === r.task && q.mode === r.mode);
        expect(requests).toHaveLength(r.modelCalls);
        expect(r.promptTokens).toBe(requests.reduce((n, q) => n + q.usage.prompt, 0));
        expect(r.completionTokens).toBe(requests.reduce((n, q) => n + q.usage.completion, 0));
        // What capgate counts is what the provider received: the system prompt and the messages.
        expect(r.promptChars).toBe(requests.reduce((n, q) => n + q.chars, 0));
        expect(r.firstPromptChars).toBe(requests[0]?.chars);
        const system = requests[0]?.system ?? "";
        if (r.mode === "exposed") {
          const mcp = r.task === "mcp-memory-store" ? ["- memory__create_entities("] : [];
          for (const line of ["- fs_read(path: string", ...mcp, ...distractors.map((d) => `- ${d}`)])
            expect(system).toContain(line);
          expect(system).not.toContain("capability_search");
        } else {
          expect(system).toContain("- capability_search(");
          for (const d of distractors) expect(system).not.toContain(d);
        }
      }

      const anthropic = await runEval({
        model: "anthropic:claude-test",
        suite,
        tasks: ["fix-typo"],
        modes: ["gate"],
        out: out(),
        config,
        processEnv: env,
      });
      const [run] = anthropic.results.runs;
      const sent = provider.requests.filter((q) => q.api === "anthropic");
      expect(run?.success).toBe(true);
      expect(run?.promptTokens).toBe(sent.reduce((n, q) => n + q.usage.prompt, 0));
      expect(run?.completionTokens).toBe(sent.reduce((n, q) => n + q.usage.completion, 0));

      // Native tool calling: exposed mode offers every tool under a provider-safe name, and
      // the tool definitions count as prompt characters.
      const nativeDir = out();
      const native = await runEval({
        model: "openai:test-model?nativeTools=true",
        suite,
        tasks: ["fix-typo"],
        modes: ["exposed"],
        out: nativeDir,
        config,
        processEnv: env,
      });
      const nativeRun = native.results.runs[0]!;
      expect(nativeRun.success).toBe(true);
      const nativeRequests = provider.requests.filter((q) => q.tools.length > 0);
      expect(nativeRequests[0]?.tools).toEqual(
        expect.arrayContaining(["fs_write", "fs_read", "finish", "verify"]),
      );
      const requests = trace(nativeDir, nativeRun).filter((e) => e.type === "model_request");
      const toolsChars = requests.reduce(
        (n, e) => n + (e.type === "model_request" ? (e.toolsChars ?? 0) : 0),
        0,
      );
      expect(toolsChars).toBeGreaterThan(0);
      expect(nativeRun.promptChars).toBe(nativeRequests.reduce((n, q) => n + q.chars, 0) + toolsChars);
    } finally {
      await provider.close();
    }
  }, 300_000);

  it("stops a run whose tokens exceed its budget, and a task without a script is recorded, not fatal", async () => {
    const root = mkdtempSync(join(tmpdir(), "capgate-eval-budget-"));
    const fixTypo = suite.tasks.find((t) => t.id === "fix-typo")!;
    mkdirSync(join(root, "suite", "tasks"), { recursive: true });
    mkdirSync(join(root, "scripts"));
    writeFileSync(
      join(root, "suite", "tasks", "fix-typo.json"),
      JSON.stringify({
        goal: fixTypo.goal,
        tags: ["budget"],
        workspace: fixTypo.workspace,
        check: fixTypo.check,
        budget: { tokens: 100 },
      }),
    );
    writeFileSync(
      join(root, "suite", "tasks", "unscripted.yaml"),
      "goal: nothing here\ncheck:\n  - file: a.txt\n",
    );
    writeFileSync(join(root, "scripts", "fix-typo.json"), readFileSync(join(SCRIPTS, "fix-typo.json")));
    const small = loadSuite(join(root, "suite"));
    const provider = await startProviderServer(small.tasks, join(root, "scripts"));
    try {
      const result = await runEval({
        model: "openai:test-model",
        suite: small,
        modes: ["gate"],
        out: join(root, "out"),
        config,
        processEnv: { ...process.env, OPENAI_BASE_URL: provider.openaiUrl },
      });
      const budget = record(result.results.runs, "fix-typo", "gate");
      expect(budget).toMatchObject({
        outcome: "aborted",
        budgetExceeded: "tokens",
        success: false,
        modelCalls: 1,
      });
      const scripted = await runEval({
        model: `scripted:${join(root, "scripts")}`,
        suite: small,
        tasks: ["unscripted"],
        modes: ["gate"],
        out: join(root, "out2"),
        config,
      });
      expect(scripted.results.runs[0]).toMatchObject({ outcome: "not_run", success: false });
      expect(scripted.results.runs[0]?.error).toMatch(/no scripted replies for task unscripted/);
      expect(existsSync(join(root, "out2", "report.md"))).toBe(true);
    } finally {
      await provider.close();
    }
  }, 180_000);
});
