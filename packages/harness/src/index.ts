export type { CallToolOptions, CallToolOutcome } from "./call-tool.js";
export type { CapgateConfig, ConfigProblem, GateConfig, ResolvedConfig } from "./config.js";
export {
  CONFIG_FILE_NAME,
  InvalidConfigError,
  loadConfig,
  parseConfig,
  resolveConfigPath,
} from "./config.js";
export type { ConfigReloadResult } from "./config-diff.js";
export { RELOADABLE_FIELDS } from "./config-diff.js";
export { configSchema } from "./config-schema.js";
export type {
  ConfigReloadOutcome,
  ConfigReloadTrigger,
  ConfigWatcher,
  ConfigWatcherOptions,
} from "./config-watch.js";
export { describeReload, watchConfig } from "./config-watch.js";
export { createDefaultRegistry } from "./default-registry.js";
export { defaultStateDir } from "./environment.js";
export type { GateSession, GateSessionOptions } from "./gate.js";
export type {
  Harness,
  HarnessChatOptions,
  HarnessOptions,
  HarnessRunOptions,
  McpIndexResult,
} from "./harness.js";
export { createHarness, SANDBOX_OFF_WARNING } from "./harness.js";
export type { CapabilityLoadProblem, CapabilitySource, LoadedPlugin } from "./plugins.js";
export {
  capabilityProblems,
  findPackageDir,
  packageEntry,
  readCapabilityManifest,
  withCapabilityPlugins,
} from "./plugins.js";
