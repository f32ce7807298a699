import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CapgateConfig,
  createHarness,
  type Harness,
  parseConfig,
  type ResolvedConfig,
} from "@capgate/harness";
import type { RunEvent } from "@capgate/loop";
import { inferProfileFromGoal, type ProfilePolicy } from "@capgate/profiles";
import { CapgateError } from "@capgate/schema";
import { type CheckOutcome, runChecks } from "./checks.js";
import type { DistractorServer } from "./distractors.js";
import { materialiseWorkspace } from "./fixture.js";
import { metricsFromEvents } from "./metrics.js";
import { modelForRun } from "./model.js";
import { fillDeep, fillPlaceholders, type PlaceholderValues } from "./placeholders.js";
import type { RunRecord } from "./results.js";
import type { EvalMode, Task } from "./types.js";
import { type StaticServer, startStaticServer } from "./web-server.js";

export const DEFAULT_STEPS = 30;
export const DEFAULT_SECONDS = 300;
/** How long a task's MCP servers may take to start and list their tools (npm servers on a busy machine). */
const MCP_LIST_TIMEOUT_MS = 60_000;

export interface RunTaskOptions {
  task: Task;
  mode: EvalMode;
  repeat: number;
  /** The model spec (any that capgate accepts, or `scripted:DIR`). */
  model: string;
  /** The user's config: shell rules, approval, web hosts, limits, their own MCP servers. */
  base: ResolvedConfig;
  /** Where relative paths (a scripted file) resolve. */
  cwd: string;
  /** Where the trace is kept: `<outDir>/traces/<task>/<mode>-<repeat>.jsonl`. */
  outDir: string;
  distractors?: DistractorServer;
  /** The evaluation's interruption: a run stopped by it is not recorded. */
  signal?: AbortSignal;
  /** Keep the run's temporary directory (workspace, state) for inspection. */
  keepWorkspace?: boolean;
  processEnv?: Record<string, string | undefined>;
}

export type RunTaskResult = { record: RunRecord } | { interrupted: true };

/**
 * One run of one task in one mode, from a fresh fixture to a judged result: lay out the
 * workspace, start the task's web server, build a harness with the task's MCP servers
 * (plus the distractors), run the goal loop within the budgets, check the final state,
 * keep the trace, clean up.
 */
export async function runTask(options: RunTaskOptions): Promise<RunTaskResult> {
  const { task, mode, repeat } = options;
  const root = realpathSync(mkdtempSync(join(tmpdir(), `capgate-eval-${task.id}-`)));
  const workspace = join(root, "workspace");
  const scratch = join(root, "scratch");
  const stateDir = join(root, "state");
  mkdirSync(scratch);
  let web: StaticServer | undefined;
  let harness: Harness | undefined;
  const events: RunEvent[] = [];
  const base = {
    task: task.id,
    mode,
    repeat,
    tags: task.tags,
  };
  const notRun = (error: unknown, checks: CheckOutcome[] = []): RunTaskResult => ({
    record: {
      ...base,
      ...metricsFromEvents([], new Set()),
      success: false,
      outcome: "not_run",
      checks,
      ms: 0,
      error: errorText(error),
    },
  });
  try {
    try {
      await materialiseWorkspace(task, workspace);
      if (task.web) web = await startStaticServer(join(task.dir, task.web.dir));
    } catch (error) {
      return notRun(error);
    }
    const values: PlaceholderValues = {
      workspace,
      task: task.dir,
      scratch,
      node: process.execPath,
      ...(web ? { web: web.url } : {}),
    };
    let model: ReturnType<typeof modelForRun>;
    try {
      model = modelForRun(
        options.model,
        { task: task.id, mode },
        { cwd: options.cwd, values, ...(options.processEnv ? { env: options.processEnv } : {}) },
      );
      harness = await createHarness({
        config: runConfig(options, values, web),
        workspace,
        stateDir,
        ...(options.processEnv ? { processEnv: options.processEnv } : {}),
      });
    } catch (error) {
      return notRun(error);
    }
    const mcp = harness.mcp !== undefined;
    if (mcp) await harness.indexMcpTools({ connectTimeoutMs: MCP_LIST_TIMEOUT_MS });
    let profile: string | ProfilePolicy | undefined = task.profile;
    if (mode === "code") {
      try {
        profile = codeModeProfile(harness, task);
      } catch (error) {
        return notRun(error);
      }
    }

    const run = new AbortController();
    const onInterrupt = () => run.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onInterrupt, { once: true });
    let budgetExceeded: RunRecord["budgetExceeded"];
    const stop = (why: "tokens" | "time") => {
      budgetExceeded ??= why;
      run.abort(new Error(`the ${why} budget ran out`));
    };
    const seconds = task.budget?.seconds ?? DEFAULT_SECONDS;
    const timer = setTimeout(() => stop("time"), seconds * 1000);
    let tokens = 0;
    const started = Date.now();
    let result: Awaited<ReturnType<Harness["runGoal"]>>;
    try {
      result = await harness.runGoal({
        goal: fillPlaceholders(task.goal, values, task.file),
        model,
        ...(profile !== undefined ? { profile } : {}),
        maxSteps: task.budget?.steps ?? DEFAULT_STEPS,
        mcp,
        surface: mode === "exposed" ? "exposed" : "gate",
        signal: run.signal,
        onEvent: (event) => {
          events.push(event);
          if (event.type === "model_response" && task.budget?.tokens !== undefined) {
            tokens += (event.usage?.inputTokens ?? 0) + (event.usage?.outputTokens ?? 0);
            if (tokens > task.budget.tokens) stop("tokens");
          }
        },
      });
    } catch (error) {
      // A profile the config does not know, say: the run never started.
      if (options.signal?.aborted) return { interrupted: true };
      return notRun(error);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onInterrupt);
    }
    const ms = Date.now() - started;
    if (options.signal?.aborted) return { interrupted: true };
    const checks = await runChecks(task, { workspace, values, events });
    await harness.close();
    harness = undefined;
    const trace = keepTrace(options, join(stateDir, "runs", `${result.runId}.jsonl`));
    const metrics = metricsFromEvents(events, new Set(Object.keys(options.distractors?.servers ?? {})));
    return {
      record: {
        ...base,
        success: checks.every((c) => c.passed),
        checks,
        ...metrics,
        ms,
        ...(budgetExceeded ? { budgetExceeded } : {}),
        ...(result.error ? { error: result.error } : {}),
        ...(trace ? { trace } : {}),
      },
    };
  } finally {
    await harness?.close().catch(() => undefined);
    await web?.close();
    if (!options.keepWorkspace) rmSync(root, { recursive: true, force: true });
  }
}

/** The user's config with this run's MCP servers and web host added; their workspace and state dir are the run's own. */
function runConfig(
  options: RunTaskOptions,
  values: PlaceholderValues,
  web: StaticServer | undefined,
): ResolvedConfig {
  const { workspace: _w, stateDir: _s, ...config } = options.base.config;
  const servers: NonNullable<CapgateConfig["mcpServers"]> = { ...(config.mcpServers ?? {}) };
  for (const [name, entry] of Object.entries(
    fillDeep(options.task.mcpServers ?? {}, values, options.task.file),
  ))
    servers[name] = entry as unknown as NonNullable<CapgateConfig["mcpServers"]>[string];
  for (const [name, entry] of Object.entries(options.distractors?.servers ?? {})) {
    // A task's own server keeps its name; a distractor that would clash steps aside.
    let key = name;
    for (let n = 2; servers[key] !== undefined; n++) key = `${name}_${n}`;
    servers[key] = entry;
  }
  const allowHosts = [...(config.web?.allowHosts ?? []), ...(web ? [web.host] : [])];
  const merged: CapgateConfig = {
    ...config,
    ...(Object.keys(servers).length > 0 ? { mcpServers: servers } : {}),
    ...(allowHosts.length > 0 ? { web: { ...config.web, allowHosts } } : {}),
  };
  return parseConfig(merged, {
    source: `the config of task ${options.task.id}`,
    baseDir: options.base.baseDir,
  });
}

/** Code mode: the task's profile with the `script` capability preloaded. */
function codeModeProfile(harness: Harness, task: Task): ProfilePolicy {
  if (!harness.registry.get("script")) throw codeModeUnavailable();
  const name = task.profile ?? inferProfileFromGoal(task.goal);
  const policy = harness.profiles[name];
  if (!policy) throw new CapgateError("unknown_profile", `task ${task.id}: no profile named ${name}`);
  return { ...policy, preload: [...new Set([...policy.preload, "script"])] };
}

export function codeModeUnavailable(): CapgateError {
  return new CapgateError(
    "code_mode_unavailable",
    "code mode needs the script capability (@capgate/capability-script), and this capgate has none registered: run --mode gate,exposed, or add the capability (built in, or through the config's `capabilities`).",
    { property: "mode" },
  );
}

function keepTrace(options: RunTaskOptions, file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const relative = join("traces", options.task.id, `${options.mode}-${options.repeat}.jsonl`);
  mkdirSync(join(options.outDir, "traces", options.task.id), { recursive: true });
  copyFileSync(file, join(options.outDir, relative));
  return relative;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
