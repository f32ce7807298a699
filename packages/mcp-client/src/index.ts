export type {
  McpHttpServerConfig,
  McpServerCommon,
  McpServerConfig,
  McpServersMap,
  McpStdioServerConfig,
} from "./config.js";
export { isHttpServer, isStdioServer, parseMcpServersConfig, serverTimeoutMs } from "./config.js";
export type { ElicitationField } from "./elicitation.js";
export { elicitationFields, parseElicitationAnswer } from "./elicitation.js";
export type { ConfigProblem, McpClientErrorOptions, McpErrorCode } from "./errors.js";
export { McpClientError, McpConfigError } from "./errors.js";
export type { CapabilityStep, CapabilityStepOptions, CapabilityStepOutcome } from "./fallthrough.js";
export { executeCapabilityStep, isUnknownToolErrorLike } from "./fallthrough.js";
export type { GateApprovalRequest } from "./gate-approval.js";
export { elicitingApprover } from "./gate-approval.js";
export type {
  GateCallExtra,
  GateHandler,
  GatePrompts,
  GateResources,
  GateServerOptions,
  GateToolName,
} from "./gate-server.js";
export { createGateServer, RESOURCE_NOT_FOUND, rpcError } from "./gate-server.js";
export type { McpAuthStatus } from "./oauth/auth-status.js";
export { describeAuth } from "./oauth/auth-status.js";
export type { McpAuthStore, StoredMcpAuth } from "./oauth/auth-store.js";
export { memoryAuthStore } from "./oauth/auth-store.js";
export type { McpOAuthConfig, McpOAuthGrant } from "./oauth/oauth-config.js";
export type { InteractiveAuthorization } from "./oauth/oauth-provider.js";
export { loginCommand, McpOAuthProvider } from "./oauth/oauth-provider.js";
export type {
  McpCaller,
  McpCallOptions,
  McpPoolOptions,
  McpPoolScope,
  McpScopeOptions,
  McpServerFeatures,
} from "./pool.js";
export { McpPool } from "./pool.js";
export type {
  ElicitationHandler,
  McpPoolEvent,
  McpRoot,
  McpServerTools,
  SamplingHandler,
  ToolListCache,
} from "./pool-types.js";
export type {
  CallToolResultLike,
  McpCallData,
  McpContentAnnotations,
  McpContentBlock,
  RenderedContent,
  ToolResult,
} from "./render.js";
export { DEFAULT_OUTPUT_BYTES, renderCallToolResult } from "./render.js";
export type { McpRoute } from "./routing.js";
export { routeMcpTool } from "./routing.js";
export type { McpPromptInfo, McpResourceListing } from "./server-features.js";
export type { McpProgress } from "./session.js";
export type { McpToolApproval, McpToolApprovals, McpToolFilter } from "./tool-filter.js";
export type { McpToolInfo, SkippedTool } from "./tool-list.js";
export { normalizeToolList, toCapabilityManifest } from "./tool-list.js";
export type { ManagedTransport, StdioTransportFactory, TransportHooks } from "./transport.js";
