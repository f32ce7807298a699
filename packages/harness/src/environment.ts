import { stateDirFor } from "@capgate/sandbox";
import { minimalEnv } from "@capgate/tools";

/** The environment for tool subprocesses: the minimal set, plus what the config names or sets. */
export function toolEnvironment(
  source: Record<string, string | undefined>,
  extra: { inherit?: string[]; set?: Record<string, string> } = {},
): Record<string, string | undefined> {
  return { ...minimalEnv(source, extra.inherit ?? []), ...(extra.set ?? {}) };
}

/** `$CAPGATE_HOME`, else `~/.capgate` (the choice `stateDirFor` of @capgate/sandbox makes without a config's stateDir). */
export function defaultStateDir(env: Record<string, string | undefined> = process.env): string {
  return stateDirFor(undefined, process.cwd(), env);
}
