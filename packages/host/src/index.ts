export { describeCapability, describeCapabilitySource, describeCatalog } from "./catalog-text.js";
export type { DatabaseSetting } from "./database.js";
export { databaseSetting } from "./database.js";
export type { DemoHarness, DemoOutcome } from "./demo.js";
export { createDemo, DEMO_GOAL, DEMO_REPLIES, runDemo } from "./demo.js";
export type { TextStyle } from "./event-text.js";
export { describeEvent, PLAIN_TEXT, progressText, terminalSafe } from "./event-text.js";
export type {
  GateRequest,
  GateRoute,
  GateSessionEntry,
  GateSessionsOptions,
  RpcErrorBody,
} from "./gate-sessions.js";
export { GateSessions, ownerOf } from "./gate-sessions.js";
export type { Host, HostCounts, HostOptions, RunState, RunView } from "./host.js";
export { openHost } from "./host.js";
export type { OriginPolicy, OriginVerdict } from "./http-security.js";
export {
  bearerToken,
  checkHostAndOrigin,
  checkToken,
  generateToken,
  originPolicy,
  tokenMatcher,
} from "./http-security.js";
export type {
  ElicitationAnswer,
  ElicitationRegistry,
  McpLoginRegistry,
  McpLoginView,
  PendingElicitation,
} from "./mcp-interactions.js";
export type { McpServerStatus, McpStatusOptions } from "./mcp-status.js";
export { describeAuthStatus, describeMcpServerStatus, mcpServerStatus } from "./mcp-status.js";
export type { McpTarget } from "./mcp-target.js";
export { adHocMcpTarget, configuredMcpServer, configuredMcpTarget } from "./mcp-target.js";
export type { QueueWorker, QueueWorkerOptions, QueueWorkerRunEvent } from "./queue-worker.js";
export { describeQueueRunEvent, startQueueWorker } from "./queue-worker.js";
export type { RunFeed, StreamOptions } from "./run-feed.js";
export type { ActiveRun, RunLauncher, RunStatus, StartRunRequest } from "./run-launcher.js";
export { parseStartRunRequest } from "./run-request.js";
export type { StdioGate, StdioGateOptions } from "./stdio-gate.js";
export { serveGateOnStdio } from "./stdio-gate.js";
