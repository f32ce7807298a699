import { describeEvent } from "@capgate/host";
import { createSpinner, terminalApprover, terminalElicitation } from "@capgate/host/terminal";
import type { RunEvent } from "@capgate/loop";
import { type GlobalOptions, intOption, openHarness } from "../context.js";
import { CliError, ExitCode, exitCodeForOutcome } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJsonLine } from "../json.js";
import { unknownName } from "../suggest.js";

export interface RunOptions {
  profile?: string;
  model?: string;
  workspace?: string;
  maxSteps?: string;
  mcp?: boolean;
  json?: boolean;
  approval?: string;
}

/** `capgate run "<goal>"`: the goal loop, rendered live; exit 0 finished, 3 impossible, 4 step limit, 1 error. */
export async function runCommand(
  goal: string,
  options: RunOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const maxSteps = intOption(options.maxSteps, "--max-steps", undefined);
  if (goal.trim() === "")
    throw new CliError("the goal is empty", ExitCode.rejected, 'e.g. capgate run "make the tests pass"');
  const p = paint(io);
  const spinner = createSpinner(io, !options.json);
  const harness = await openHarness(
    global,
    {
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
    },
    {
      io,
      approve: terminalApprover(
        io,
        () => spinner.stop(),
        () => undefined,
      ),
      onElicitation: terminalElicitation(io, () => spinner.stop()),
    },
  );
  // The profile is checked before the model: a typo in --profile is a usage error (2) whatever the model.
  if (options.profile && !harness.profiles[options.profile]) {
    await harness.close();
    throw await unknownName("profile", options.profile, Object.keys(harness.profiles));
  }
  let model: ReturnType<typeof harness.model>;
  try {
    model = harness.model(options.model);
  } catch (error) {
    await harness.close();
    throw error;
  }
  const controller = new AbortController();
  // The reader of our output went away (`capgate run … | head`): stop the run, exit 0.
  const onClosed = () => controller.abort(new Error("the output pipe was closed"));
  io.closed?.addEventListener("abort", onClosed, { once: true });
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    spinner.stop();
    if (interrupts === 1) {
      io.err(p.yellow("\naborting… (Ctrl-C again to force)"));
      controller.abort(new Error("interrupted"));
    } else {
      process.exit(130);
    }
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  const onEvent = (e: RunEvent) => {
    if (options.json) {
      printJsonLine(io, e);
      return;
    }
    if (e.type === "model_request") {
      spinner.start(`thinking… step ${e.step}`);
      return;
    }
    if (e.type === "model_response") {
      spinner.stop();
      return;
    }
    if (e.type === "tool_called") spinner.stop();
    const line = describeEvent(e, p);
    if (line) {
      spinner.stop();
      // A run that ended in an error says so on stderr, in one line, like every other error.
      if (e.type === "run_ended" && e.outcome === "error") io.err(line);
      else io.out(line);
    }
  };
  try {
    const result = await harness.runGoal({
      goal,
      model,
      ...(options.profile ? { profile: options.profile } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      mcp: options.mcp === true,
      signal: controller.signal,
      onEvent,
    });
    spinner.stop();
    if (!options.json) io.out(p.dim(`trace: ${result.tracePath}`));
    return exitCodeForOutcome(result.outcome);
  } finally {
    spinner.stop();
    io.closed?.removeEventListener("abort", onClosed);
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    await harness.close();
  }
}
