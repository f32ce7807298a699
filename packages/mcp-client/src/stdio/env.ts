/** Variables a server process inherits by default: enough to find programs and behave, nothing secret. */
export const INHERITED_ENV_VARS: readonly string[] =
  process.platform === "win32"
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "PROGRAMFILES",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
      ]
    : [
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
      ];

/**
 * The environment of a spawned server: the minimal inherited set above (API keys and tokens
 * of the host are not passed on) plus the entry's own `env`, which wins. Exported shell
 * functions (values starting with `()`) are never inherited.
 */
export function serverEnv(
  configured: Record<string, string> | undefined,
  source: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_VARS) {
    const value = source[key];
    if (value === undefined || value.startsWith("()")) continue;
    env[key] = value;
  }
  return { ...env, ...configured };
}
