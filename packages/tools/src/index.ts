// The contract every capability builds on: defineCapability, ToolContext and the host
// services, the executor, the capability set, approval, the manifest contract and errors.
// Runtime-neutral: the guards that need Node (the workspace guard, the network guard, the
// sandbox) are packages of their own.

export { approvalNeeded, requireApproval } from "./approval.js";
export { CapabilitySet } from "./capability-set.js";
export type { CapabilityEntry, DeferredCapability } from "./deferred.js";
export { deferCapability, isDeferred } from "./deferred.js";
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
  PolicyDeniedError,
  UnknownToolError,
} from "./errors.js";
export type { ExecuteContext, HostEnv, LoadedTools } from "./execute.js";
export { executeTool } from "./execute.js";
export { LazyAbortController } from "./lazy-abort.js";
export type { ManifestContractOptions } from "./manifest-contract.js";
export { callContractProblem, manifestContractProblems } from "./manifest-contract.js";
export { createHostResources } from "./resources.js";
export type { FromSchema } from "./schema-types.js";
export { createToolContext, minimalEnv } from "./tool-context.js";
export type {
  ApprovalHook,
  ApprovalMode,
  ApprovalRequest,
  HostResources,
  HostServices,
  MemoryEntry,
  MemoryService,
  NestedCallOptions,
  PolicyCheck,
  PolicyConfig,
  PolicyVerdict,
  ProfileInfo,
  ShellNetwork,
  ShellPolicyConfig,
  ShellPrefixRule,
  ToolCallService,
  ToolContent,
  ToolContentAnnotations,
  ToolContext,
  ToolLimits,
  ToolResult,
  WebPolicyConfig,
  WorkerInfo,
  WorkerService,
} from "./types.js";
export { APPROVAL_MODES, DEFAULT_LIMITS } from "./types.js";
