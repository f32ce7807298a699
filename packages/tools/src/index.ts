// Shared guards: workspace confinement, processes, the shell runner (its policy is injected:
// @capgate/shell-policy), the URL guard.

export { approvalNeeded, requireApproval } from "./approval.js";
export type {
  BackgroundOutput,
  BackgroundProcessesOptions,
  BackgroundProcessInfo,
  StartProcessOptions,
  StartShellOptions,
} from "./background-processes.js";
export {
  BACKGROUND_PROCESSES_KEY,
  BackgroundProcesses,
  backgroundProcesses,
} from "./background-processes.js";
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
export type { GitMetadataEntry } from "./git-metadata.js";
export { isRepositoryLayout, PROTECTED_GIT_ENTRIES } from "./git-metadata.js";
export type { GuardedFetchOptions, GuardedResponse } from "./guarded-fetch.js";
export { guardedFetch } from "./guarded-fetch.js";
export type { HiddenPath, HiddenScope } from "./hidden-paths.js";
export { HIDDEN_HOME_PATHS, hiddenPathAt, homeDirectories } from "./hidden-paths.js";
export { hostPath, withHostPath } from "./host-path.js";
export { LazyAbortController } from "./lazy-abort.js";
export type { ManifestContractOptions } from "./manifest-contract.js";
export { callContractProblem, manifestContractProblems } from "./manifest-contract.js";
export { HeadTailCapture, tailLines } from "./output-capture.js";
export type { ResolveInWorkspaceOptions, WorkspaceScope } from "./path-guard.js";
export {
  isInside,
  MAX_COMPONENT_BYTES,
  MAX_PATH_BYTES,
  realWorkspace,
  resolveInWorkspace,
  toWorkspaceRelative,
  workspaceHiddenPaths,
  workspacePathPolicy,
} from "./path-guard.js";
export { isPolicyFile, POLICY_FILE_NAME, policyFilePaths } from "./policy-file.js";
export type { PolicyScan } from "./policy-tree-scan.js";
export { MAX_POLICY_SCAN_ENTRIES, scanForPolicyFile } from "./policy-tree-scan.js";
export type { ContainedCommand, Containment } from "./process-containment.js";
export { CONTAINMENT_BWRAP_ARGS, containCommand, containmentAvailable } from "./process-containment.js";
export { DEFAULT_KILL_GRACE_MS, killMarkedProcesses, SANDBOX_MARK_VAR } from "./process-group.js";
export type { ProcessResult, RunProcessOptions } from "./process-runner.js";
export { describeExit, runProcess } from "./process-runner.js";
export type { FileType, OpenRegularFileOptions } from "./regular-file.js";
export { describeFileType, fileTypeOf, NotRegularFileError, openRegularFile } from "./regular-file.js";
export { createHostResources } from "./resources.js";
export type { RunShellOptions } from "./run-shell.js";
export { runShell } from "./run-shell.js";
export type { SandboxedCommand, SandboxOptions } from "./sandbox.js";
export {
  bashArgv,
  networkMode,
  releaseActiveSandboxes,
  SANDBOX_PROXY_PORT,
  SCRUBBED_ENV,
  sandboxCommand,
  sandboxMode,
  scrubEnv,
} from "./sandbox.js";
export { DEFAULT_BWRAP, probeBwrap, systemBash } from "./sandbox-host.js";
export { recoverInterruptedSandboxes } from "./sandbox-journal.js";
export type { EgressProxy, ProxyMode } from "./sandbox-proxy.js";
export { closeEgressProxies, egressProxy } from "./sandbox-proxy.js";
export type { RunSandboxedOptions, SandboxTarget } from "./sandbox-run.js";
export { runSandboxed, sandboxTarget } from "./sandbox-run.js";
export type { FromSchema } from "./schema-types.js";
export type { OnAsk, ShellCheck, ShellGateOptions, ShellVerdict } from "./shell-check.js";
export { assertShellAllowed, shellCommandPolicy, shellPolicyCheck } from "./shell-check.js";
export { createToolContext, INHERITED_ENV, minimalEnv } from "./tool-context.js";
export type { TruncateResult } from "./truncate.js";
export { truncateBytes, truncateMiddle, truncationMarker } from "./truncate.js";
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
export { DEFAULT_LIMITS } from "./types.js";
export type {
  AddressClass,
  CheckedUrl,
  CheckUrlOptions,
  HostResolver,
  ResolvedAddress,
} from "./url-guard.js";
export { checkUrl, classifyAddress, parseAllowHost, urlPolicy } from "./url-guard.js";
