import { type Span, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import {
  CAPGATE,
  ERROR_TYPE,
  EVENTS,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  MCP_METHOD_NAME,
  OPERATION,
} from "./semconv.js";

/** A tool call the operator makes directly (`POST /tools/call`, `capgate call`). */
export interface DirectToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/** What a direct call answered (the harness's CallToolOutcome, structurally). */
export interface DirectCallOutcome {
  via: string;
  server?: string;
  result: { success: boolean; summary: string };
}

/** An approval asked during a direct call, as the span records it. */
export interface DirectCallApproval {
  requested(request: { tool: string; risk: string; argumentsHash?: string }): void;
  resolved(answer: { approved: boolean; decidedBy?: string; scope?: string }): void;
}

const MAX_CONTENT_CHARS = 16_384;

/** One `execute_tool <tool>` span around a direct call: outcome, MCP server, refusals as events. */
export async function traceDirectCall<T extends DirectCallOutcome>(
  tracer: Tracer,
  captureContent: boolean,
  call: DirectToolCall,
  run: (approval: DirectCallApproval) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(`${OPERATION.executeTool} ${call.tool}`, {
    kind: SpanKind.SERVER,
    attributes: {
      [GEN_AI_OPERATION_NAME]: OPERATION.executeTool,
      [GEN_AI_TOOL_NAME]: call.tool,
      [GEN_AI_TOOL_TYPE]: "function",
      ...(captureContent ? { [GEN_AI_TOOL_CALL_ARGUMENTS]: clip(JSON.stringify(call.arguments)) } : {}),
    },
  });
  try {
    const outcome = await run(approvalEvents(span));
    span.setAttribute(CAPGATE.via, outcome.via);
    if (outcome.via === "mcp") {
      span.setAttribute(MCP_METHOD_NAME, "tools/call");
      if (outcome.server) span.setAttribute(CAPGATE.mcpServer, outcome.server);
    }
    if (captureContent) span.setAttribute(GEN_AI_TOOL_CALL_RESULT, clip(outcome.result.summary));
    if (!outcome.result.success) failed(span, "tool_error");
    return outcome;
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    const type = typeof code === "string" ? code : "internal_error";
    span.addEvent(type === "policy_denied" ? EVENTS.policyDenied : EVENTS.rejected, {
      [CAPGATE.code]: type,
      ...(captureContent && error instanceof Error ? { [CAPGATE.reason]: clip(error.message) } : {}),
    });
    failed(span, type);
    throw error;
  } finally {
    span.end();
  }
}

function approvalEvents(span: Span): DirectCallApproval {
  return {
    requested: (request) =>
      span.addEvent(EVENTS.approvalRequested, {
        [GEN_AI_TOOL_NAME]: request.tool,
        [CAPGATE.risk]: request.risk,
        ...(request.argumentsHash ? { [CAPGATE.argumentsHash]: request.argumentsHash } : {}),
      }),
    resolved: (answer) =>
      span.addEvent(EVENTS.approvalResolved, {
        [CAPGATE.approved]: answer.approved,
        ...(answer.decidedBy ? { [CAPGATE.decidedBy]: answer.decidedBy } : {}),
        ...(answer.scope ? { [CAPGATE.scope]: answer.scope } : {}),
      }),
  };
}

function failed(span: Span, type: string): void {
  span.setAttribute(ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

function clip(text: string): string {
  return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…` : text;
}
