export type {
  ApprovalAnswer,
  ApprovalRefusal,
  ApprovalRegistry,
  ApprovalResolution,
  PendingApproval,
} from "./approval-registry.js";
export { ApprovalUnansweredError, refusalMessage } from "./approval-registry.js";
export type { Chat, ChatTurn, CreateChatOptions } from "./chat.js";
export { createChat } from "./chat.js";
export type {
  ApprovalDecision,
  ApprovalScope,
  LoopApprovalHook,
  LoopApprovalRequest,
  LoopEnvironment,
} from "./deps.js";
export { asDecision } from "./deps.js";
export {
  decodeEvent,
  decodeJson,
  encodeEvent,
  encodeJson,
  escapeText,
  findUnstorableText,
  unescapeText,
} from "./event-codec.js";
export type {
  EventEmitterOptions,
  GoalState,
  ParentCall,
  RunEvent,
  RunEventBody,
  RunEventListener,
  RunEventType,
  RunOutcome,
  SearchHitSummary,
} from "./events.js";
export { EventEmitterForRun, eventAfterEnd } from "./events.js";
export type { RunGoalOptions, RunGoalResult } from "./goal-api.js";
export { runGoal } from "./goal-loop.js";
export { approvingMcpCaller } from "./mcp-approval.js";
export type { ApprovalRegistryOptions } from "./memory-approvals.js";
export { MemoryApprovalRegistry } from "./memory-approvals.js";
export { MemoryStore, newMemoryEntry } from "./memory-store.js";
export type {
  NestedCallEnd,
  NestedCallObserver,
  NestedCallScope,
  ToolCallServiceOptions,
} from "./nested-calls.js";
export { createToolCallService, MAX_CALL_DEPTH } from "./nested-calls.js";
export { systemPrompt } from "./packet.js";
export { isValidRunId, newRunId } from "./run-id.js";
export type { ReadTraceResult } from "./run-store.js";
export { FileRunStore, readTraceFile, summarise } from "./run-store.js";
export type { RunStore, RunSummary } from "./run-store-api.js";
export type { DispatchOptions, StepOutcome } from "./session.js";
export { Session } from "./session.js";
export type { ExposedSurface, SurfaceTool, ToolSurfaceKind } from "./surface.js";
export { exposedSurface, exposedToolName } from "./surface.js";
export type { VerifyOutcome } from "./verify.js";
export { runVerify } from "./verify.js";
