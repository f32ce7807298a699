/**
 * The OpenTelemetry semantic-convention names capgate's spans use. The GenAI and MCP
 * conventions are still "development" status, and the OpenTelemetry docs advise copying
 * such names rather than importing the package's `incubating` entry (which may change them
 * in a minor release); `semconv.test.ts` checks each against semantic-conventions 1.45.
 */
export const GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
export const GEN_AI_AGENT_NAME = "gen_ai.agent.name";
export const GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages";
export const GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
export const GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
export const GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments";
export const GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result";
export const MCP_METHOD_NAME = "mcp.method.name";
export const ERROR_TYPE = "error.type";

/** `gen_ai.operation.name` values. */
export const OPERATION = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
} as const;

/** capgate's own attributes and span events (`capgate.*`). */
export const CAPGATE = {
  runId: "capgate.run.id",
  runKind: "capgate.run.kind",
  parentRunId: "capgate.run.parent_id",
  profile: "capgate.profile",
  outcome: "capgate.run.outcome",
  steps: "capgate.run.steps",
  step: "capgate.step",
  goal: "capgate.goal",
  risk: "capgate.tool.risk",
  via: "capgate.tool.via",
  mcpServer: "capgate.mcp.server",
  parentCall: "capgate.tool.parent_index",
  approvalId: "capgate.approval.id",
  approved: "capgate.approval.approved",
  scope: "capgate.approval.scope",
  decidedBy: "capgate.approval.decided_by",
  argumentsHash: "capgate.approval.arguments_hash",
  expiresAt: "capgate.approval.expires_at",
  reason: "capgate.reason",
  code: "capgate.error.code",
  property: "capgate.error.property",
  requestChars: "capgate.request.chars",
} as const;

export const EVENTS = {
  approvalRequested: "capgate.approval.requested",
  approvalResolved: "capgate.approval.resolved",
  policyDenied: "capgate.policy.denied",
  rejected: "capgate.call.rejected",
  actionRejected: "capgate.action.rejected",
} as const;
