import { explainProfileInference, profileNames } from "@capgate/profiles";
import { type GlobalOptions, loadCliConfig } from "../context.js";
import { ExitCode } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";

export async function profilesCommand(
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const { profiles } = await loadCliConfig(global);
  if (options.json) {
    printJson(io, profiles);
    return ExitCode.ok;
  }
  const p = paint(io);
  for (const name of profileNames(profiles)) {
    const policy = profiles[name];
    if (!policy) continue;
    const spawn = policy.maySpawnWorkers ? p.green(" · may spawn workers") : "";
    io.out(
      `${p.bold(name)} ${p.dim(`preload ${policy.preload.join(", ") || "nothing"} · budget ${policy.charBudget}`)}${spawn}`,
    );
    io.out(`  ${policy.promptDelta}`);
  }
  return ExitCode.ok;
}

/** `capgate profiles infer "<goal>"`: the profile name, or with --json the name and the deciding word. */
export async function inferProfileCommand(
  goal: string,
  options: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const inference = explainProfileInference(goal);
  if (options.json) printJson(io, inference);
  else io.out(inference.profile);
  return ExitCode.ok;
}
