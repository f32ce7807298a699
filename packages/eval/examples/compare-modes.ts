// Compare the gate with every tool exposed, on the starter suite, with your own model.
import { runEval } from "@capgate/eval";

export async function main(model: string): Promise<void> {
  const { summary, out } = await runEval({
    model, // e.g. "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "openai:qwen2.5:7b" with OPENAI_BASE_URL
    modes: ["gate", "exposed"],
    repeat: 3,
    out: "eval-results", // results.json, report.md, report.html, traces/ — resumed if interrupted
    onProgress: (e) => {
      if (e.type === "run_finished")
        console.log(
          `[${e.done}/${e.total}] ${e.record.task} (${e.record.mode}): ${e.record.success ? "ok" : "failed"}`,
        );
    },
  });
  for (const m of summary.modes)
    console.log(
      `${m.mode}: ${m.success.successes}/${m.success.runs} succeeded, ${Math.round(m.meanPromptChars)} prompt chars per run`,
    );
  console.log(`report: ${out}/report.html`);
}
