import type { RunEvent } from "@capgate/loop";
import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  CAPGATE,
  ERROR_TYPE,
  EVENTS,
  GEN_AI_AGENT_NAME,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  GEN_AI_OUTPUT_MESSAGES,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  MCP_METHOD_NAME,
  OPERATION,
} from "./semconv.js";

/** The call a nested call was made from (events of a `script.run`'s calls carry it). */
interface ParentRef {
  step: number;
  index: number;
}

interface RunSpans {
  run: Span;
  context: Context;
  model: string;
  provider: string | undefined;
  /** The model call in flight (model_request → model_response). */
  turn?: Span;
  /** Open tool calls by key (`<step>` for a top-level call, `<step>/<index>` for a nested one), oldest first. */
  tools: Map<string, Span>;
}

/** Longest attribute value written when content capture is on. */
const MAX_CONTENT_CHARS = 16_384;

/**
 * Turns a run's events into spans as they happen: `invoke_agent capgate` per run (a
 * worker's run is a child of its parent's), `chat <model>` per model turn with token usage,
 * `execute_tool <tool>` per tool call (nested calls are children of the call that made them;
 * MCP calls carry their server), and refusals and approvals as span events. Argument
 * values, results, the goal and model text are recorded only with `captureContent`.
 */
export class RunTracer {
  readonly #runs = new Map<string, RunSpans>();

  constructor(
    private readonly tracer: Tracer,
    private readonly captureContent: boolean,
  ) {}

  /** Runs with spans still open (for tests and shutdown). */
  get openRuns(): number {
    return this.#runs.size;
  }

  observe(event: RunEvent): void {
    if (event.type === "run_started") {
      this.#start(event);
      return;
    }
    const run = this.#runs.get(event.runId);
    if (!run) return;
    switch (event.type) {
      case "model_request":
        run.turn?.end();
        run.turn = this.tracer.startSpan(
          `${OPERATION.chat} ${run.model}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              [GEN_AI_OPERATION_NAME]: OPERATION.chat,
              [GEN_AI_REQUEST_MODEL]: run.model,
              ...(run.provider ? { [GEN_AI_PROVIDER_NAME]: run.provider } : {}),
              [CAPGATE.step]: event.step,
              [CAPGATE.requestChars]: event.totalChars,
            },
          },
          run.context,
        );
        return;
      case "model_response": {
        const turn = run.turn;
        if (!turn) return;
        run.turn = undefined;
        if (event.usage?.inputTokens !== undefined)
          turn.setAttribute(GEN_AI_USAGE_INPUT_TOKENS, event.usage.inputTokens);
        if (event.usage?.outputTokens !== undefined)
          turn.setAttribute(GEN_AI_USAGE_OUTPUT_TOKENS, event.usage.outputTokens);
        if (this.captureContent)
          turn.setAttribute(
            GEN_AI_OUTPUT_MESSAGES,
            clip(JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: event.text }] }])),
          );
        turn.end();
        return;
      }
      case "tool_called": {
        const parent = parentOf(event);
        const parentSpan = parent ? run.tools.get(String(parent.step)) : undefined;
        const span = this.tracer.startSpan(
          `${OPERATION.executeTool} ${event.tool}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              [GEN_AI_OPERATION_NAME]: OPERATION.executeTool,
              [GEN_AI_TOOL_NAME]: event.tool,
              [GEN_AI_TOOL_TYPE]: "function",
              [CAPGATE.risk]: event.risk,
              [CAPGATE.step]: event.step,
              ...(parent ? { [CAPGATE.parentCall]: parent.index } : {}),
              ...(this.captureContent
                ? { [GEN_AI_TOOL_CALL_ARGUMENTS]: clip(JSON.stringify(event.arguments ?? {})) }
                : {}),
            },
          },
          parentSpan ? trace.setSpan(context.active(), parentSpan) : run.context,
        );
        run.tools.set(toolKey(event.step, parent), span);
        return;
      }
      case "tool_result": {
        const key = toolKey(event.step, parentOf(event));
        const span = run.tools.get(key);
        if (!span) return;
        run.tools.delete(key);
        span.setAttribute(CAPGATE.via, event.via);
        if (event.via === "mcp") {
          span.setAttribute(MCP_METHOD_NAME, "tools/call");
          if (event.server) span.setAttribute(CAPGATE.mcpServer, event.server);
        }
        if (this.captureContent) span.setAttribute(GEN_AI_TOOL_CALL_RESULT, clip(event.summary));
        if (event.rejected) {
          span.addEvent(event.rejected === "policy_denied" ? EVENTS.policyDenied : EVENTS.rejected, {
            [CAPGATE.code]: event.rejected,
            ...(this.captureContent ? { [CAPGATE.reason]: clip(event.summary) } : {}),
          });
          failed(span, event.rejected);
        } else if (!event.success) failed(span, "tool_error");
        span.end();
        return;
      }
      case "approval_requested": {
        const target = this.#innermostCall(run);
        target.addEvent(EVENTS.approvalRequested, {
          [CAPGATE.approvalId]: event.approvalId,
          [GEN_AI_TOOL_NAME]: event.tool,
          [CAPGATE.risk]: event.risk,
          ...optional(CAPGATE.argumentsHash, (event as { argumentsHash?: string }).argumentsHash),
          ...optional(CAPGATE.expiresAt, (event as { expiresAt?: string }).expiresAt),
        });
        return;
      }
      case "approval_resolved": {
        const target = this.#innermostCall(run);
        const extra = event as { scope?: string; decidedBy?: string };
        target.addEvent(EVENTS.approvalResolved, {
          [CAPGATE.approvalId]: event.approvalId,
          [CAPGATE.approved]: event.approved,
          ...optional(CAPGATE.scope, extra.scope),
          ...optional(CAPGATE.decidedBy, extra.decidedBy),
          ...(this.captureContent ? optional(CAPGATE.reason, event.reason) : {}),
        });
        return;
      }
      case "action_rejected":
        run.run.addEvent(EVENTS.actionRejected, {
          [CAPGATE.code]: event.code,
          [CAPGATE.step]: event.step,
          ...optional(CAPGATE.property, event.property),
        });
        return;
      case "profile_changed":
        run.run.addEvent("capgate.profile_changed", {
          "capgate.profile.from": event.from,
          [CAPGATE.profile]: event.to,
        });
        return;
      case "verified":
        run.run.addEvent("capgate.verified", {
          [CAPGATE.step]: event.step,
          "capgate.verify.passed": event.passed,
          ...(event.exitCode !== null ? { "capgate.verify.exit_code": event.exitCode } : {}),
          ...(event.denied ? { [CAPGATE.code]: "policy_denied" } : {}),
        });
        return;
      case "finish_refused":
        run.run.addEvent("capgate.finish_refused", { [CAPGATE.step]: event.step });
        return;
      case "run_ended":
        this.#end(run, event);
        return;
      default:
        return;
    }
  }

  /** End every open span (shutdown before runs ended: the spans still reach the collector). */
  endAll(): void {
    for (const run of this.#runs.values()) {
      for (const span of run.tools.values()) span.end();
      run.turn?.end();
      run.run.setAttribute(CAPGATE.outcome, "unfinished");
      run.run.end();
    }
    this.#runs.clear();
  }

  #start(event: Extract<RunEvent, { type: "run_started" }>): void {
    const parent = event.parentRunId ? this.#runs.get(event.parentRunId) : undefined;
    const { model, provider } = modelOf(event.model);
    const span = this.tracer.startSpan(
      `${OPERATION.invokeAgent} capgate`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [GEN_AI_OPERATION_NAME]: OPERATION.invokeAgent,
          [GEN_AI_AGENT_NAME]: "capgate",
          [GEN_AI_CONVERSATION_ID]: event.runId,
          [GEN_AI_REQUEST_MODEL]: model,
          ...(provider ? { [GEN_AI_PROVIDER_NAME]: provider } : {}),
          [CAPGATE.runId]: event.runId,
          [CAPGATE.runKind]: event.kind,
          [CAPGATE.profile]: event.profile,
          ...optional(CAPGATE.parentRunId, event.parentRunId),
          ...(this.captureContent ? { [CAPGATE.goal]: clip(event.goal) } : {}),
        },
      },
      parent ? trace.setSpan(context.active(), this.#innermostCall(parent)) : undefined,
    );
    this.#runs.set(event.runId, {
      run: span,
      context: trace.setSpan(context.active(), span),
      model,
      provider,
      tools: new Map(),
    });
  }

  #end(run: RunSpans, event: Extract<RunEvent, { type: "run_ended" }>): void {
    for (const span of run.tools.values()) span.end();
    run.turn?.end();
    run.run.setAttribute(CAPGATE.outcome, event.outcome);
    run.run.setAttribute(CAPGATE.steps, event.steps);
    if (event.outcome === "error") failed(run.run, "run_error");
    run.run.end();
    this.#runs.delete(event.runId);
  }

  /** The most recently started tool call still open (approvals belong to it), else the run. */
  #innermostCall(run: RunSpans): Span {
    let last: Span | undefined;
    for (const span of run.tools.values()) last = span;
    return last ?? run.run;
  }
}

function parentOf(event: RunEvent): ParentRef | undefined {
  const parent = (event as { parent?: { step?: unknown; index?: unknown } }).parent;
  return parent && typeof parent.step === "number" && typeof parent.index === "number"
    ? { step: parent.step, index: parent.index }
    : undefined;
}

function toolKey(step: number, parent: ParentRef | undefined): string {
  return parent ? `${step}/${parent.index}` : String(step);
}

/** `openai:gpt-4o` → provider `openai`, model `gpt-4o`; a spec without a provider is the model. */
export function modelOf(spec: string): { model: string; provider: string | undefined } {
  const colon = spec.indexOf(":");
  if (colon <= 0) return { model: spec, provider: undefined };
  const provider = spec.slice(0, colon);
  return { model: spec.slice(colon + 1), provider: provider === "scripted" ? "capgate.scripted" : provider };
}

function failed(span: Span, type: string): void {
  span.setAttribute(ERROR_TYPE, type);
  // The description is the error's kind only: a message may quote argument values.
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

function optional(key: string, value: string | undefined): Record<string, string> {
  return value === undefined ? {} : { [key]: value };
}

function clip(text: string): string {
  return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…` : text;
}
