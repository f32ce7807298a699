import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * capgate's state directory (traces, memory, logins) for a config: its `stateDir` (relative
 * to the config file's directory; `~/` is the home directory), else `$CAPGATE_HOME`, else
 * `~/.capgate`. The sandbox hides this directory from commands, so every surface that builds
 * a sandbox (the harness, the Claude Code hook's `sandbox-exec`) must make this one choice:
 * a surface that chose differently would leave the real state directory visible.
 */
export function stateDirFor(
  configStateDir: string | undefined,
  baseDir: string,
  env: Record<string, string | undefined> = process.env,
): string {
  if (configStateDir !== undefined && configStateDir !== "") {
    if (configStateDir.startsWith("~/")) return resolve(join(env.HOME ?? homedir(), configStateDir.slice(2)));
    return isAbsolute(configStateDir) ? resolve(configStateDir) : resolve(baseDir, configStateDir);
  }
  const home = env.CAPGATE_HOME;
  return resolve(home !== undefined && home !== "" ? home : join(homedir(), ".capgate"));
}
