import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResultsFile } from "./results.js";
import { type EvalSummary, type ModeSummary, type Rate, summarise } from "./summary.js";
import { EVAL_MODES, type EvalMode } from "./types.js";

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const ratio = (x: number | undefined) => (x === undefined ? "—" : x.toFixed(3));
const rate = (r: Rate) => `${r.successes}/${r.runs} (${pct(r.rate)}; 95 % CI ${pct(r.low)}–${pct(r.high)})`;
const tokens = (x: number | null) => (x === null ? "not reported" : int(x));

function modesIn(results: ResultsFile): EvalMode[] {
  return EVAL_MODES.filter((m) => results.runs.some((r) => r.mode === m));
}

/** `report.md` and `report.html` in `dir`, from the results so far. */
export function writeReports(dir: string, results: ResultsFile): EvalSummary {
  const summary = summarise(results.runs, modesIn(results));
  writeFileSync(join(dir, "report.md"), markdownReport(results, summary));
  writeFileSync(join(dir, "report.html"), htmlReport(results, summary));
  return summary;
}

export function markdownReport(results: ResultsFile, summary: EvalSummary): string {
  const lines: string[] = [
    `# capgate eval — ${results.suite.name}`,
    "",
    `Model \`${results.model}\`, ${results.runs.length} runs, distractors ${results.distractors}, started ${results.started}, updated ${results.updated}.`,
    "",
    "## By mode",
    "",
    "| mode | success | mean steps | rejections | mean prompt chars / run | mean first prompt chars | prompt tokens | completion tokens | distractor calls | mean time |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...summary.modes.map(
      (m) =>
        `| ${m.mode} | ${rate(m.success)} | ${m.meanSteps.toFixed(1)} | ${m.rejections} | ${int(m.meanPromptChars)} | ${int(m.meanFirstPromptChars)} | ${tokens(m.promptTokens)} | ${tokens(m.completionTokens)} | ${m.distractorCalls} | ${(m.meanMs / 1000).toFixed(1)} s |`,
    ),
    "",
    "## By task",
    "",
    `| task | tags | ${summary.modes.map((m) => `${m.mode} success | ${m.mode} prompt chars`).join(" | ")} | gate ÷ exposed (first prompt) | gate ÷ exposed (run) |`,
    `|---|---|${summary.modes.map(() => "---|---|").join("")}---|---|`,
    ...summary.tasks.map((t) => {
      const cells = summary.modes.map((m) => {
        const s = t.modes[m.mode];
        return s ? `${s.success.successes}/${s.success.runs} | ${int(s.meanPromptChars)}` : "— | —";
      });
      return `| ${t.task} | ${t.tags.join(", ")} | ${cells.join(" | ")} | ${ratio(t.firstPromptRatio)} | ${ratio(t.promptRatio)} |`;
    }),
    "",
    "## Failed runs",
    "",
  ];
  const failed = results.runs.filter((r) => !r.success);
  if (failed.length === 0) lines.push("None.");
  for (const r of failed) {
    const why =
      r.error ??
      r.checks
        .filter((c) => !c.passed)
        .map((c) => `${c.check} — ${c.detail ?? "failed"}`)
        .join("; ");
    lines.push(
      `- ${r.task} (${r.mode} #${r.repeat}, ${r.outcome}): ${why}${r.trace ? ` — trace \`${r.trace}\`` : ""}`,
    );
  }
  lines.push(
    "",
    "Success is decided by each task's checks on the final state, never by the model's claim. The interval is the 95 % Wilson score interval over the runs; with few runs it is wide — repeat (`--repeat`) before reading a difference into it.",
    "",
  );
  return lines.join("\n");
}

const html = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const COLOURS: Record<EvalMode, string> = { gate: "#2563eb", exposed: "#d97706", code: "#059669" };

/** Horizontal bars, one per mode; `whiskers` adds the interval on success rates. */
function barChart(
  title: string,
  modes: ModeSummary[],
  value: (m: ModeSummary) => number,
  label: (m: ModeSummary) => string,
  options: { max?: number; whiskers?: (m: ModeSummary) => [number, number] } = {},
): string {
  const width = 640;
  const left = 90;
  const bar = 26;
  const gap = 12;
  const top = 30;
  const max = options.max ?? Math.max(1, ...modes.map(value));
  const scale = (x: number) => ((width - left - 170) * x) / max;
  const height = top + modes.length * (bar + gap) + 10;
  const rows = modes.map((m, i) => {
    const y = top + i * (bar + gap);
    const w = scale(value(m));
    const whisker = options.whiskers?.(m);
    const ci = whisker
      ? `<line x1="${left + scale(whisker[0])}" x2="${left + scale(whisker[1])}" y1="${y + bar / 2}" y2="${y + bar / 2}" stroke="#111" stroke-width="2"/>` +
        `<line x1="${left + scale(whisker[0])}" x2="${left + scale(whisker[0])}" y1="${y + 6}" y2="${y + bar - 6}" stroke="#111" stroke-width="2"/>` +
        `<line x1="${left + scale(whisker[1])}" x2="${left + scale(whisker[1])}" y1="${y + 6}" y2="${y + bar - 6}" stroke="#111" stroke-width="2"/>`
      : "";
    const end = left + Math.max(w, whisker ? scale(whisker[1]) : 0);
    return (
      `<text x="${left - 8}" y="${y + bar / 2 + 5}" text-anchor="end">${m.mode}</text>` +
      `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${bar}" fill="${COLOURS[m.mode]}"/>` +
      ci +
      `<text x="${end + 8}" y="${y + bar / 2 + 5}">${html(label(m))}</text>`
    );
  });
  return `<figure><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="${html(title)}"><text x="0" y="18" font-weight="bold">${html(title)}</text>${rows.join("")}</svg></figure>`;
}

export function htmlReport(results: ResultsFile, summary: EvalSummary): string {
  const modes = summary.modes;
  const charts = [
    barChart(
      "Success rate (95 % CI)",
      modes,
      (m) => m.success.rate,
      (m) => `${pct(m.success.rate)} (${m.success.successes}/${m.success.runs})`,
      {
        max: 1,
        whiskers: (m) => [m.success.low, m.success.high],
      },
    ),
    barChart(
      "Prompt characters per run (mean)",
      modes,
      (m) => m.meanPromptChars,
      (m) => int(m.meanPromptChars),
    ),
    barChart(
      "First prompt characters (the tool surface)",
      modes,
      (m) => m.meanFirstPromptChars,
      (m) => int(m.meanFirstPromptChars),
    ),
  ];
  if (modes.some((m) => m.meanPromptTokens !== null)) {
    charts.push(
      barChart(
        "Prompt tokens per run (mean, as reported)",
        modes,
        (m) => m.meanPromptTokens ?? 0,
        (m) => (m.meanPromptTokens === null ? "not reported" : int(m.meanPromptTokens)),
      ),
    );
  }
  const modeRows = modes
    .map(
      (m) =>
        `<tr><td>${m.mode}</td><td>${html(rate(m.success))}</td><td>${m.meanSteps.toFixed(1)}</td><td>${m.rejections}</td><td>${int(m.meanPromptChars)}</td><td>${int(m.meanFirstPromptChars)}</td><td>${tokens(m.promptTokens)}</td><td>${tokens(m.completionTokens)}</td><td>${m.distractorCalls}</td><td>${(m.meanMs / 1000).toFixed(1)} s</td></tr>`,
    )
    .join("");
  const taskRows = summary.tasks
    .map((t) => {
      const cells = modes
        .map((m) => {
          const s = t.modes[m.mode];
          return s
            ? `<td class="${s.success.successes === s.success.runs ? "ok" : "bad"}">${s.success.successes}/${s.success.runs}</td><td>${int(s.meanPromptChars)}</td>`
            : "<td>—</td><td>—</td>";
        })
        .join("");
      return `<tr><td>${html(t.task)}</td><td>${html(t.tags.join(", "))}</td>${cells}<td>${ratio(t.firstPromptRatio)}</td><td>${ratio(t.promptRatio)}</td></tr>`;
    })
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>capgate eval — ${html(results.suite.name)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#111;max-width:1100px}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
th{background:#f3f4f6}.ok{background:#dcfce7}.bad{background:#fee2e2}figure{margin:1rem 0}svg text{font:13px system-ui,sans-serif}
</style></head><body>
<h1>capgate eval — ${html(results.suite.name)}</h1>
<p>Model <code>${html(results.model)}</code>, ${results.runs.length} runs, distractors ${results.distractors}, started ${html(results.started)}, updated ${html(results.updated)}.</p>
${charts.join("\n")}
<h2>By mode</h2>
<table><tr><th>mode</th><th>success</th><th>mean steps</th><th>rejections</th><th>mean prompt chars / run</th><th>mean first prompt chars</th><th>prompt tokens</th><th>completion tokens</th><th>distractor calls</th><th>mean time</th></tr>${modeRows}</table>
<h2>By task</h2>
<table><tr><th>task</th><th>tags</th>${modes.map((m) => `<th>${m.mode} success</th><th>${m.mode} prompt chars</th>`).join("")}<th>gate ÷ exposed (first prompt)</th><th>gate ÷ exposed (run)</th></tr>${taskRows}</table>
<p>Success is decided by each task's checks on the final state, never by the model's claim. Intervals are 95 % Wilson score intervals over the runs.</p>
</body></html>
`;
}
