import { homedir } from "node:os";
import { join } from "node:path";
import { minimalEnv } from "@capgate/tools";

/** The environment for tool subprocesses: the minimal set, plus what the config names or sets. */
export function toolEnvironment(
  source: Record<string, string | undefined>,
  extra: { inherit?: string[]; set?: Record<string, string> } = {},
): Record<string, string | undefined> {
  return { ...minimalEnv(source, extra.inherit ?? []), ...(extra.set ?? {}) };
}

/** `$CAPGATE_HOME`, else `~/.capgate`. */
export function defaultStateDir(env: Record<string, string | undefined> = process.env): string {
  return env.CAPGATE_HOME && env.CAPGATE_HOME.length > 0 ? env.CAPGATE_HOME : join(homedir(), ".capgate");
}
