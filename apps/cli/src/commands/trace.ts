import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describeEvent, terminalSafe } from "@capgate/host";
import { type RunEvent, readTraceFile } from "@capgate/loop";
import { type GlobalOptions, openHarness } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import { type CliIO, outputClosed, paint } from "../io.js";
import { printJson, printJsonLine } from "../json.js";

const looksLikeFile = (target: string) => target.endsWith(".jsonl") || target.includes("/");

/**
 * `capgate trace RUN_ID|FILE`: pretty-print a stored trace (with --json its events as JSON
 * lines). Without an argument: the recent runs (with --json one JSON array).
 */
export async function traceCommand(
  target: string | undefined,
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  let events: RunEvent[];
  let badLines: number[] = [];
  if (target && looksLikeFile(target)) {
    const file = resolve(target);
    if (!existsSync(file))
      throw new CliError(
        `no trace file ${file}`,
        ExitCode.failure,
        "`capgate trace` lists the recent runs by id",
        {
          code: "not_found",
          property: "run",
        },
      );
    ({ events, badLines } = readTraceFile(file));
  } else {
    const harness = await openHarness(global, {}, { io });
    try {
      if (!target) {
        const runs = harness.store.list(20);
        if (options.json) {
          printJson(io, runs);
          return ExitCode.ok;
        }
        const p = paint(io);
        if (runs.length === 0) io.out(p.dim(`no runs in ${harness.store.dir}`));
        for (const r of runs) {
          if (outputClosed(io)) break;
          io.out(
            `${r.runId}  ${(r.outcome ?? "running").padEnd(10)} ${p.dim(r.profile.padEnd(16))} ${r.goal.slice(0, 80)}`,
          );
        }
        return ExitCode.ok;
      }
      if (!harness.store.has(target)) {
        throw new CliError(
          `no run '${target}' in ${harness.store.dir}`,
          ExitCode.failure,
          "`capgate trace` lists the recent runs; a trace file is given by its path (…/name.jsonl)",
          { code: "not_found", property: "run" },
        );
      }
      ({ events, badLines } = harness.store.read(target));
    } finally {
      await harness.close();
    }
  }
  const p = paint(io);
  for (const e of events) {
    if (outputClosed(io)) return ExitCode.ok;
    if (options.json) {
      printJsonLine(io, e);
      continue;
    }
    const line =
      e.type === "model_response"
        ? `${p.dim(`  model: ${terminalSafe(e.text.replace(/\s+/g, " ").slice(0, 160))}`)}`
        : describeEvent(e, p);
    if (line) io.out(line);
  }
  if (!options.json && events.at(-1)?.type !== "run_ended")
    io.out(p.yellow("(the run has not ended, or its process was killed: the trace stops here)"));
  if (badLines.length > 0) {
    if (options.json) io.err(JSON.stringify({ warning: { code: "unreadable_lines", lines: badLines } }));
    else io.err(p.yellow(`warning: skipped ${badLines.length} unreadable line(s): ${badLines.join(", ")}`));
  }
  return ExitCode.ok;
}
