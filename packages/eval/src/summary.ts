import type { RunRecord } from "./results.js";
import type { EvalMode } from "./types.js";

/** A success rate with its 95 % Wilson score interval (sound for small n and rates near 0 or 1). */
export interface Rate {
  successes: number;
  runs: number;
  rate: number;
  low: number;
  high: number;
}

export function wilson(successes: number, runs: number, z = 1.96): Rate {
  if (runs === 0) return { successes, runs, rate: 0, low: 0, high: 0 };
  const p = successes / runs;
  const z2 = z * z;
  const centre = (p + z2 / (2 * runs)) / (1 + z2 / runs);
  const half = (z * Math.sqrt((p * (1 - p)) / runs + z2 / (4 * runs * runs))) / (1 + z2 / runs);
  return { successes, runs, rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** Per mode, over every task and repeat. */
export interface ModeSummary {
  mode: EvalMode;
  success: Rate;
  meanSteps: number;
  meanModelCalls: number;
  rejections: number;
  distractorCalls: number;
  meanPromptChars: number;
  meanFirstPromptChars: number;
  /** Summed over the runs that reported them; null when none did. */
  promptTokens: number | null;
  completionTokens: number | null;
  meanPromptTokens: number | null;
  meanMs: number;
}

/** Per task, per mode. */
export interface TaskSummary {
  task: string;
  tags: string[];
  modes: Partial<
    Record<
      EvalMode,
      { success: Rate; meanPromptChars: number; meanFirstPromptChars: number; meanSteps: number }
    >
  >;
  /** gate ÷ exposed: characters of the first request (the surface) and of the whole run; undefined without both modes. */
  firstPromptRatio?: number;
  promptRatio?: number;
}

export interface EvalSummary {
  modes: ModeSummary[];
  tasks: TaskSummary[];
}

const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

function sumOrNull(xs: Array<number | null>): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}

export function summarise(runs: readonly RunRecord[], modes: readonly EvalMode[]): EvalSummary {
  const byMode = modes.map((mode): ModeSummary => {
    const rs = runs.filter((r) => r.mode === mode);
    const ran = rs.filter((r) => r.outcome !== "not_run");
    const promptTokens = sumOrNull(rs.map((r) => r.promptTokens));
    const withTokens = rs.filter((r) => r.promptTokens !== null);
    return {
      mode,
      success: wilson(rs.filter((r) => r.success).length, rs.length),
      meanSteps: mean(ran.map((r) => r.steps)),
      meanModelCalls: mean(ran.map((r) => r.modelCalls)),
      rejections: rs.reduce((n, r) => n + r.rejections, 0),
      distractorCalls: rs.reduce((n, r) => n + r.distractorCalls, 0),
      meanPromptChars: mean(ran.map((r) => r.promptChars)),
      meanFirstPromptChars: mean(ran.map((r) => r.firstPromptChars)),
      promptTokens,
      completionTokens: sumOrNull(rs.map((r) => r.completionTokens)),
      meanPromptTokens: promptTokens === null ? null : promptTokens / withTokens.length,
      meanMs: mean(ran.map((r) => r.ms)),
    };
  });
  const taskIds = [...new Set(runs.map((r) => r.task))];
  const tasks = taskIds.map((task): TaskSummary => {
    const rs = runs.filter((r) => r.task === task);
    const out: TaskSummary = { task, tags: rs[0]?.tags ?? [], modes: {} };
    for (const mode of modes) {
      const m = rs.filter((r) => r.mode === mode);
      if (m.length === 0) continue;
      const ran = m.filter((r) => r.outcome !== "not_run");
      out.modes[mode] = {
        success: wilson(m.filter((r) => r.success).length, m.length),
        meanPromptChars: mean(ran.map((r) => r.promptChars)),
        meanFirstPromptChars: mean(ran.map((r) => r.firstPromptChars)),
        meanSteps: mean(ran.map((r) => r.steps)),
      };
    }
    const g = out.modes.gate;
    const e = out.modes.exposed;
    if (g && e && e.meanFirstPromptChars > 0 && e.meanPromptChars > 0) {
      out.firstPromptRatio = g.meanFirstPromptChars / e.meanFirstPromptChars;
      out.promptRatio = g.meanPromptChars / e.meanPromptChars;
    }
    return out;
  });
  return { modes: byMode, tasks };
}
