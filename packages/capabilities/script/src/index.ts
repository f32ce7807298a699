export type { ScriptCapabilityOptions } from "./capability.js";
export { capability, createScriptCapability } from "./capability.js";
export { REPLY_DECLARATIONS, toolDeclarations } from "./declarations.js";
export { warmEngine } from "./engine-threads.js";
export type { ScriptLimits } from "./limits.js";
export { DEFAULT_SCRIPT_LIMITS } from "./limits.js";
export { manifest } from "./manifest.js";
