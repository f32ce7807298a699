import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type RunEvent, readTraceFile } from "@capgate/loop";
import { type GlobalOptions, openHarness } from "../context.js";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { renderEvent } from "../render.js";

/** `capgate trace RUN_ID|FILE`: pretty-print a stored trace (or the raw JSON lines with --json). */
export async function traceCommand(
  target: string | undefined,
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  let events: RunEvent[];
  let badLines: number[] = [];
  if (target && (target.endsWith(".jsonl") || target.includes("/")) && existsSync(resolve(target))) {
    ({ events, badLines } = readTraceFile(resolve(target)));
  } else {
    const harness = await openHarness(global, {});
    try {
      if (!target) {
        const runs = harness.store.list(20);
        const p = paint(io);
        if (runs.length === 0) io.out(p.dim(`no runs in ${harness.store.dir}`));
        for (const r of runs)
          io.out(
            `${r.runId}  ${(r.outcome ?? "running").padEnd(10)} ${p.dim(r.profile.padEnd(16))} ${r.goal.slice(0, 80)}`,
          );
        return 0;
      }
      if (!harness.store.has(target)) {
        throw new CliError(
          `no trace for '${target}' in ${harness.store.dir}`,
          1,
          "run `capgate trace` to list recent runs, or pass a .jsonl file",
        );
      }
      ({ events, badLines } = harness.store.read(target));
    } finally {
      await harness.close();
    }
  }
  const p = paint(io);
  if (options.json) {
    for (const e of events) io.out(JSON.stringify(e));
  } else {
    for (const e of events) {
      const line =
        e.type === "model_response"
          ? `${p.dim(`  model: ${e.text.replace(/\s+/g, " ").slice(0, 160)}`)}`
          : renderEvent(e, p);
      if (line) io.out(line);
    }
    if (events.at(-1)?.type !== "run_ended")
      io.out(p.yellow("(the run has not ended, or its process was killed: the trace stops here)"));
  }
  if (badLines.length > 0)
    io.err(p.yellow(`skipped ${badLines.length} unreadable line(s): ${badLines.join(", ")}`));
  return 0;
}
