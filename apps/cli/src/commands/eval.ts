import { isAbsolute, relative, resolve } from "node:path";
import type { EvalMode } from "@capgate/eval";
import { interruptible } from "@capgate/host/terminal";
import { type GlobalOptions, intOption, loadCliConfig } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";

export interface EvalCommandOptions {
  model?: string;
  suite?: string;
  tasks?: string;
  mode?: string;
  repeat?: string;
  concurrency?: string;
  distractors?: string;
  out?: string;
  list?: boolean;
  keepWorkspaces?: boolean;
  json?: boolean;
}

/**
 * `capgate eval`: run a task suite in gate, exposed and code mode and report success and
 * prompt size side by side (the work is @capgate/eval's; this parses and renders).
 */
export async function evalCommand(
  options: EvalCommandOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const { describeEvalProgress, describeModeSummary, loadSuite, runEval, starterSuiteDir, selectTasks } =
    await import("@capgate/eval");
  const suite = loadSuite(options.suite ? resolve(options.suite) : starterSuiteDir());
  const ids = list(options.tasks);
  if (options.list) {
    const tasks = selectTasks(suite, ids);
    if (options.json) {
      printJson(
        io,
        tasks.map((t) => ({ id: t.id, tags: t.tags, goal: t.goal })),
      );
    } else {
      for (const t of tasks) io.out(`${t.id}  [${t.tags.join(", ")}]  ${t.goal}`);
    }
    return ExitCode.ok;
  }
  const { withCapabilityPlugins } = await import("@capgate/harness");
  const config = withCapabilityPlugins(await loadCliConfig(global), global.capability ?? []);
  const model = options.model ?? config.config.model ?? process.env.CAPGATE_MODEL;
  if (!model)
    throw new CliError(
      "no model to evaluate",
      ExitCode.rejected,
      "pass --model openai:<model>, anthropic:<model> or scripted:<dir>",
    );
  if (!options.out)
    throw new CliError(
      "--out DIR is required: results, report and traces go there",
      ExitCode.rejected,
      "e.g. --out eval-results",
    );
  const modes = list(options.mode) as EvalMode[] | undefined;
  const p = paint(io);
  const stop = interruptible(io, {
    message: "\nstopping… finished runs are kept; run the same command again to resume",
  });
  try {
    const result = await runEval({
      model,
      suite,
      ...(ids ? { tasks: ids } : {}),
      ...(modes ? { modes } : {}),
      repeat: intOption(options.repeat, "--repeat", 1, { min: 0 }),
      concurrency: intOption(options.concurrency, "--concurrency", 1, { min: 0 }),
      distractors: intOption(options.distractors, "--distractors", 0, { min: 0 }),
      out: options.out,
      config,
      signal: stop.signal,
      keepWorkspaces: options.keepWorkspaces === true,
      onProgress: (e) => {
        const line = describeEvalProgress(e, p);
        if (line) io.err(line);
      },
    });
    if (options.json) {
      printJson(io, {
        out: result.out,
        ran: result.ran,
        interrupted: result.interrupted,
        modes: result.summary.modes,
        tasks: result.summary.tasks,
      });
    } else {
      for (const m of result.summary.modes) io.out(describeModeSummary(m));
      const where = shown(result.out);
      io.out(p.dim(`results: ${where}/results.json  report: ${where}/report.md, ${where}/report.html`));
    }
    if (io.closed?.aborted) return ExitCode.ok;
    if (result.interrupted) {
      io.err(
        `interrupted: ${result.results.runs.length} runs are recorded in ${shown(result.out)}; run the same command again to resume`,
      );
      return ExitCode.aborted;
    }
    return ExitCode.ok;
  } finally {
    stop.dispose();
  }
}

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
