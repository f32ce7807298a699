export { CapabilitySet } from "./capability-set.js";
export type {
  ArgsOf,
  Capability,
  DefineCapabilityOptions,
  HandlersFor,
  ManifestLike,
  PoliciesFor,
  ToolHandler,
} from "./define.js";
export { defineCapability } from "./define.js";
export {
  InvalidArgumentsError,
  isRejection,
  isUnknownToolError,
  PolicyDeniedError,
  UnknownToolError,
} from "./errors.js";
export type { ExecuteContext, LoadedTools } from "./execute.js";
export { executeTool } from "./execute.js";
export { createHostResources } from "./resources.js";
export type { FromSchema } from "./schema-types.js";
export type { TruncateResult } from "./truncate.js";
export { truncateBytes, truncateMiddle } from "./truncate.js";
export type {
  ApprovalHook,
  ApprovalMode,
  ApprovalRequest,
  HostResources,
  HostServices,
  MemoryEntry,
  MemoryService,
  PolicyCheck,
  PolicyConfig,
  PolicyVerdict,
  ProfileInfo,
  ShellPolicyConfig,
  ShellPrefixRule,
  ToolContext,
  ToolLimits,
  ToolResult,
  WebPolicyConfig,
  WorkerInfo,
  WorkerService,
} from "./types.js";
export { DEFAULT_LIMITS } from "./types.js";
