import type { EvalProgress } from "./eval.js";
import type { RunRecord } from "./results.js";
import type { ModeSummary } from "./summary.js";

/** Colour for terminal lines; identity by default (plain text). */
export interface EvalTextStyle {
  dim(text: string): string;
  green(text: string): string;
  red(text: string): string;
}

const PLAIN: EvalTextStyle = { dim: (s) => s, green: (s) => s, red: (s) => s };
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;

/** A mode's result in one line: success with its 95 % interval, prompt size and steps per run. */
export function describeModeSummary(m: ModeSummary): string {
  const s = m.success;
  const tokens = m.promptTokens === null ? "" : `, ${Math.round(m.meanPromptTokens ?? 0)} prompt tokens/run`;
  return `${m.mode.padEnd(8)} ${s.successes}/${s.runs} succeeded (${pct(s.rate)}, 95 % CI ${pct(s.low)}–${pct(s.high)}), ${Math.round(m.meanPromptChars)} prompt chars/run${tokens}, ${m.meanSteps.toFixed(1)} steps/run`;
}

/** One finished run: ✓ or ✗, the task, its facts and, when it failed, why (the first failed check). */
export function describeRunRecord(r: RunRecord, p: EvalTextStyle = PLAIN): string {
  const mark = r.success ? p.green("✓") : p.red("✗");
  const what = `${r.task} (${r.mode} #${r.repeat})`;
  const tokens = r.promptTokens === null ? "" : `, ${r.promptTokens}+${r.completionTokens ?? 0} tokens`;
  const facts = `${r.steps} steps, ${r.promptChars} chars${tokens}, ${(r.ms / 1000).toFixed(1)} s`;
  if (r.success) return `${mark} ${what} ${p.dim(facts)}`;
  const why = r.error ?? r.checks.find((c) => !c.passed)?.detail ?? r.outcome;
  return `${mark} ${what} ${p.dim(facts)} — ${why}`;
}

/** A progress event as a line for the operator (undefined for those that say nothing). */
export function describeEvalProgress(e: EvalProgress, p: EvalTextStyle = PLAIN): string | undefined {
  if (e.type === "planned")
    return p.dim(
      `${e.tasks} tasks × ${e.modes.join(", ")}: ${e.total} runs${e.done > 0 ? `, ${e.done} already done (resuming)` : ""}`,
    );
  if (e.type === "run_finished") return `[${e.done}/${e.total}] ${describeRunRecord(e.record, p)}`;
  return undefined;
}
