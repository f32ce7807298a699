import { createHostResources } from "./resources.js";
import { DEFAULT_LIMITS, type ToolContext } from "./types.js";

/**
 * A ToolContext with safe defaults for tests and simple hosts: no approval hook, no
 * host services, a minimal environment. Override what the call needs.
 */
export function createToolContext(overrides: Partial<ToolContext> & { workspace: string }): ToolContext {
  return {
    signal: new AbortController().signal,
    env: minimalEnv(),
    profile: { name: "Orchestrator", maySpawnWorkers: true },
    limits: { ...DEFAULT_LIMITS },
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir: overrides.workspace,
    ...overrides,
  };
}

/** The variables a subprocess needs to behave, and nothing secret by default. */
export function minimalEnv(
  source: Record<string, string | undefined> = process.env,
): Record<string, string | undefined> {
  const keep = [
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "USER",
    "SHELL",
    "DISPLAY",
    "XAUTHORITY",
    "TZ",
  ];
  const env: Record<string, string | undefined> = {};
  for (const k of keep) if (source[k] !== undefined) env[k] = source[k];
  return env;
}
