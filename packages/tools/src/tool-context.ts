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

/** Variables every tool subprocess inherits: enough to behave, nothing secret. */
export const INHERITED_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TMPDIR",
  "TZ",
  "DISPLAY",
  "XAUTHORITY",
  "WAYLAND_DISPLAY",
  "XDG_RUNTIME_DIR",
];

/** The variables a subprocess needs to behave (INHERITED_ENV plus any `extra` names), and nothing secret by default. */
export function minimalEnv(
  // Read through globalThis so the contract loads where there is no `process` (a browser).
  source: Record<string, string | undefined> = globalThis.process?.env ?? {},
  extra: readonly string[] = [],
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const k of [...INHERITED_ENV, ...extra]) if (source[k] !== undefined) env[k] = source[k];
  return env;
}
