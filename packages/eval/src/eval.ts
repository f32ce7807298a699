import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createHarness, parseConfig, type ResolvedConfig } from "@capgate/harness";
import { CapgateError, closestMatch } from "@capgate/schema";
import { type DistractorServer, startDistractorServer } from "./distractors.js";
import { writeReports } from "./report.js";
import { type ResultsFile, type RunRecord, readResults, runKey, writeResults } from "./results.js";
import { codeModeUnavailable, runTask } from "./run-task.js";
import { loadSuite, starterSuiteDir } from "./suite.js";
import type { EvalSummary } from "./summary.js";
import { EVAL_MODES, type EvalMode, type Suite, type Task } from "./types.js";

export interface EvalOptions {
  /** Any model spec capgate accepts; `scripted:DIR` for per-task scripts. */
  model: string;
  /** A suite directory or a loaded suite (default: the starter suite). */
  suite?: string | Suite;
  /** Task ids to run (default: all). */
  tasks?: readonly string[];
  /** Default: gate and exposed, plus code when the script capability is registered. */
  modes?: readonly EvalMode[];
  repeat?: number;
  /** Runs at once (default 1). */
  concurrency?: number;
  /** Extra MCP servers of one real public tool each (0–199). */
  distractors?: number;
  /** Results, report and traces; an existing results.json there is resumed. */
  out: string;
  /** The user's config (shell rules, approval, web hosts, limits, MCP servers); default empty. */
  config?: ResolvedConfig;
  /** Base for relative paths (a `scripted:` path); default the process's. */
  cwd?: string;
  /** Stops the evaluation: running runs are abandoned (not recorded), results so far are kept. */
  signal?: AbortSignal;
  onProgress?: (event: EvalProgress) => void;
  keepWorkspaces?: boolean;
  processEnv?: Record<string, string | undefined>;
}

export type EvalProgress =
  | { type: "planned"; total: number; done: number; modes: EvalMode[]; tasks: number }
  | { type: "run_started"; task: string; mode: EvalMode; repeat: number }
  | { type: "run_finished"; record: RunRecord; done: number; total: number }
  | { type: "interrupted"; done: number; total: number };

export interface EvalResult {
  results: ResultsFile;
  summary: EvalSummary;
  /** Runs done by this call (the rest came from an earlier, resumed call). */
  ran: number;
  interrupted: boolean;
  out: string;
}

/**
 * Run a suite in every requested mode, `repeat` times, and write `results.json`,
 * `report.md`, `report.html` and the traces to `out`. Each finished run is recorded at
 * once, so an interrupted evaluation resumes where it stopped.
 */
export async function runEval(options: EvalOptions): Promise<EvalResult> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const out = resolve(cwd, options.out);
  const suite =
    typeof options.suite === "object"
      ? options.suite
      : loadSuite(resolve(cwd, options.suite ?? starterSuiteDir()));
  const tasks = selectTasks(suite, options.tasks);
  const base = options.config ?? parseConfig({}, { source: "the default config", baseDir: cwd });
  const repeat = positive(options.repeat ?? 1, "repeat");
  const concurrency = positive(options.concurrency ?? 1, "concurrency");
  const distractorCount = options.distractors ?? 0;
  const hasScript = await scriptAvailable(base, options.processEnv);
  const modes = [...new Set(options.modes ?? EVAL_MODES.filter((m) => m !== "code" || hasScript))];
  for (const mode of modes) {
    if (!EVAL_MODES.includes(mode))
      throw new CapgateError("invalid_mode", `unknown mode "${mode}": use gate, exposed or code`, {
        property: "mode",
      });
  }
  if (modes.includes("code") && !hasScript) throw codeModeUnavailable();

  const now = new Date().toISOString();
  const earlier = readResults(out);
  if (
    earlier &&
    (earlier.model !== options.model ||
      earlier.distractors !== distractorCount ||
      earlier.suite.name !== suite.name)
  ) {
    throw new CapgateError(
      "results_mismatch",
      `${out} holds results of another evaluation (model ${earlier.model}, suite ${earlier.suite.name}, distractors ${earlier.distractors}); choose another --out or move it away.`,
      { property: "out" },
    );
  }
  const results: ResultsFile = earlier ?? {
    format: 1,
    model: options.model,
    suite: { name: suite.name, dir: suite.dir },
    distractors: distractorCount,
    started: now,
    updated: now,
    runs: [],
  };
  const finished = new Set(results.runs.map(runKey));
  const plan: Array<{ task: Task; mode: EvalMode; repeat: number }> = [];
  for (let r = 1; r <= repeat; r++)
    for (const task of tasks) for (const mode of modes) plan.push({ task, mode, repeat: r });
  const todo = plan.filter((p) => !finished.has(runKey({ task: p.task.id, mode: p.mode, repeat: p.repeat })));
  const total = plan.length;
  let done = total - todo.length;
  mkdirSync(out, { recursive: true });
  options.onProgress?.({ type: "planned", total, done, modes, tasks: tasks.length });

  let distractors: DistractorServer | undefined;
  let ran = 0;
  try {
    if (distractorCount > 0) distractors = await startDistractorServer(distractorCount);
    let next = 0;
    const worker = async () => {
      while (next < todo.length && !options.signal?.aborted) {
        const item = todo[next++]!;
        options.onProgress?.({
          type: "run_started",
          task: item.task.id,
          mode: item.mode,
          repeat: item.repeat,
        });
        const outcome = await runTask({
          task: item.task,
          mode: item.mode,
          repeat: item.repeat,
          model: options.model,
          base,
          cwd,
          outDir: out,
          ...(distractors ? { distractors } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.keepWorkspaces ? { keepWorkspace: true } : {}),
          ...(options.processEnv ? { processEnv: options.processEnv } : {}),
        });
        if ("interrupted" in outcome) return;
        results.runs.push(outcome.record);
        results.updated = new Date().toISOString();
        writeResults(out, results);
        ran++;
        done++;
        options.onProgress?.({ type: "run_finished", record: outcome.record, done, total });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, todo.length)) }, worker));
  } finally {
    await distractors?.close();
  }
  const interrupted = options.signal?.aborted === true && done < total;
  if (interrupted) options.onProgress?.({ type: "interrupted", done, total });
  // Runs in plan order, whatever order they finished in.
  const order = new Map(plan.map((p, i) => [runKey({ task: p.task.id, mode: p.mode, repeat: p.repeat }), i]));
  results.runs.sort((a, b) => (order.get(runKey(a)) ?? 1e9) - (order.get(runKey(b)) ?? 1e9));
  writeResults(out, results);
  const summary = writeReports(out, results);
  return { results, summary, ran, interrupted, out };
}

/** The tasks to run, in suite order; an unknown id is an error with a suggestion. */
export function selectTasks(suite: Suite, ids: readonly string[] | undefined): Task[] {
  if (!ids || ids.length === 0) return suite.tasks;
  const known = suite.tasks.map((t) => t.id);
  for (const id of ids) {
    if (known.includes(id)) continue;
    const guess = closestMatch(id, known);
    throw new CapgateError(
      "unknown_task",
      `no task "${id}" in the suite ${suite.name}${guess ? `; did you mean "${guess}"?` : ""} (capgate eval --list shows them)`,
      { property: "tasks" },
    );
  }
  return suite.tasks.filter((t) => ids.includes(t.id));
}

/** Whether a harness built from this config registers the `script` capability (code mode). */
export async function scriptAvailable(
  config: ResolvedConfig,
  processEnv?: Record<string, string | undefined>,
): Promise<boolean> {
  const { mcpServers: _m, workspace: _w, stateDir: _s, ...rest } = config.config;
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "capgate-eval-probe-")));
  try {
    const harness = await createHarness({
      config: parseConfig(rest, { baseDir: config.baseDir }),
      workspace: scratch,
      stateDir: join(scratch, "state"),
      ...(processEnv ? { processEnv } : {}),
    });
    try {
      return harness.registry.get("script") !== undefined;
    } finally {
      await harness.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function positive(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1)
    throw new CapgateError("usage", `${name} must be a whole number of at least 1; got ${n}`, {
      property: name,
    });
  return n;
}
