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
export type { GateHandler, GateServerOptions, GateToolName } from "./gate-server.js";
export { createGateServer } from "./gate-server.js";
export type { McpAuthStatus } from "./oauth/auth-status.js";
export { describeAuth } from "./oauth/auth-status.js";
export type { McpAuthStore, StoredMcpAuth } from "./oauth/auth-store.js";
export { memoryAuthStore } from "./oauth/auth-store.js";
export type { McpOAuthConfig, McpOAuthGrant } from "./oauth/oauth-config.js";
export type { InteractiveAuthorization } from "./oauth/oauth-provider.js";
export { loginCommand, McpOAuthProvider } from "./oauth/oauth-provider.js";
export type { McpCaller, McpCallOptions, McpPoolOptions } from "./pool.js";
export { McpPool } from "./pool.js";
export type {
  ElicitationHandler,
  McpPoolEvent,
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
export type { McpToolInfo, SkippedTool } from "./tool-list.js";
export { normalizeToolList, toCapabilityManifest } from "./tool-list.js";
export type { ManagedTransport, StdioTransportFactory, TransportHooks } from "./transport.js";
export { truncateUtf8 } from "./truncate.js";
