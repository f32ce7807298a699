import { explainProfileInference, profileNames } from "@capgate/profiles";
import type { GlobalOptions } from "../context.js";
import { type CliIO, paint } from "../io.js";

export async function profilesCommand(
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const { loadConfig } = await import("@capgate/harness");
  const { profiles } = loadConfig(global.config ? { path: global.config } : {});
  if (options.json) {
    io.out(JSON.stringify(profiles, null, 2));
    return 0;
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
  return 0;
}

export async function inferProfileCommand(
  goal: string,
  options: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const inference = explainProfileInference(goal);
  if (options.json) io.out(JSON.stringify(inference));
  else io.out(inference.profile);
  return 0;
}
