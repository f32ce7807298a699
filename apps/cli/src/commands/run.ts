import {
  createSpinner,
  interruptible,
  printRunEvents,
  terminalApprover,
  terminalElicitation,
} from "@capgate/host/terminal";
import { type GlobalOptions, intOption, openHarness } from "../context.js";
import { CliError, ExitCode, exitCodeForOutcome } from "../errors.js";
import { type CliIO, paint } from "../io.js";
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
  let model: ReturnType<typeof harness.model>;
  try {
    // The profile is checked before the model: a typo in --profile is a usage error (2) whatever the model.
    if (options.profile && !harness.profiles[options.profile])
      throw await unknownName("profile", options.profile, Object.keys(harness.profiles));
    model = harness.model(options.model);
  } catch (error) {
    await harness.close();
    throw error;
  }
  const stop = interruptible(io, {
    message: "\naborting… (Ctrl-C again to force)",
    before: () => spinner.stop(),
    force: true,
  });
  try {
    const result = await harness.runGoal({
      goal,
      model,
      ...(options.profile ? { profile: options.profile } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      mcp: options.mcp === true,
      signal: stop.signal,
      onEvent: printRunEvents(io, { json: options.json === true, spinner }),
    });
    spinner.stop();
    if (!options.json) io.out(paint(io).dim(`trace: ${result.tracePath}`));
    return exitCodeForOutcome(result.outcome);
  } finally {
    spinner.stop();
    // Closed before the Ctrl-C listeners go: a signal during the close still finds one.
    await harness.close();
    stop.dispose();
  }
}
