import { runProcess } from "@capgate/sandbox";

const cache = new Map<string, Promise<string[]>>();

/**
 * The operator's own `user.name`/`user.email` from their global git config, as `-c`
 * overrides for the settings the repository does not set itself. git never reads the global
 * file during a tool call (GIT_CONFIG_GLOBAL=/dev/null, so nothing else in it applies); this
 * reads just those two values with `git config --global --get`, which runs no program.
 * Read once per HOME/XDG/GIT_CONFIG_GLOBAL combination.
 */
export async function operatorIdentity(
  env: Record<string, string | undefined>,
  repoKeys: ReadonlySet<string>,
): Promise<string[]> {
  const wanted = ["user.name", "user.email"].filter((k) => !repoKeys.has(k));
  if (wanted.length === 0) return [];
  const key = JSON.stringify([env.HOME, env.XDG_CONFIG_HOME, env.GIT_CONFIG_GLOBAL, env.PATH]);
  let found = cache.get(key);
  if (!found) {
    found = readIdentity(env).catch(() => []);
    cache.set(key, found);
  }
  return (await found).filter((o) => wanted.some((w) => o.startsWith(`${w}=`)));
}

async function readIdentity(env: Record<string, string | undefined>): Promise<string[]> {
  const readerEnv: Record<string, string> = {
    PATH: env.PATH ?? "/usr/bin:/bin",
    GIT_CONFIG_NOSYSTEM: "1",
    LC_ALL: "C",
  };
  for (const name of ["HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"] as const) {
    const value = env[name];
    if (value !== undefined) readerEnv[name] = value;
  }
  const out: string[] = [];
  for (const setting of ["user.name", "user.email"]) {
    const r = await runProcess({
      file: "git",
      args: ["config", "--global", "--no-includes", "--get", setting],
      cwd: "/",
      env: readerEnv,
      timeoutMs: 5_000,
      maxOutputBytes: 4096,
    });
    const value = r.stdout.replace(/\n$/, "");
    if (r.exitCode === 0 && value !== "" && !/[\0\n]/.test(value)) out.push(`${setting}=${value}`);
  }
  return out;
}
