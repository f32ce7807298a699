import { CapgateError, type ToolAction } from "@capgate/schema";
import type { TracedContent } from "./rich-content.js";

export type RunOutcome = "finished" | "impossible" | "step_limit" | "aborted" | "error";

export interface SearchHitSummary {
  capability: string;
  score: number;
  tools: string[];
}

export interface GoalState {
  status?: "planning" | "working" | "blocked";
  plan?: string[];
  progress?: string;
  notes: string[];
}

/**
 * The call a nested call was made from: the top-level call of `step` (one per step), and
 * the nested call's number within it (1, 2, …), which pairs its tool_called with its tool_result.
 */
export interface ParentCall {
  step: number;
  tool: string;
  index: number;
}

/** Every event a run emits, discriminated on `type`; the payload is enough to replay and audit. */
export type RunEventBody =
  | {
      type: "run_started";
      goal: string;
      profile: string;
      model: string;
      workspace: string;
      maxSteps: number;
      mcp: boolean;
      kind: "goal" | "chat";
      parentRunId?: string;
    }
  | { type: "profile_changed"; from: string; to: string; reason: "inferred" | "requested"; loaded: string[] }
  | {
      type: "model_request";
      step: number;
      systemChars: number;
      messageCount: number;
      totalChars: number;
      droppedSteps: number;
      /** Characters of the native tool definitions sent with the request (their JSON), when any were. */
      toolsChars?: number;
    }
  | {
      type: "model_response";
      step: number;
      text: string;
      durationMs: number;
      usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
    }
  | {
      type: "action_rejected";
      step: number;
      code: string;
      message: string;
      property?: string;
      rejections: number;
    }
  | { type: "capability_searched"; step: number; query: string; limit: number; hits: SearchHitSummary[] }
  | {
      type: "capability_loaded";
      step: number;
      name: string;
      ok: boolean;
      signatures: string[];
      error?: string;
    }
  | {
      type: "tool_called";
      step: number;
      tool: string;
      arguments: unknown;
      risk: string;
      /** Set on a call a tool made (a script.run's nested calls): the enclosing call. */
      parent?: ParentCall;
    }
  /** An MCP server's progress report (`notifications/progress`) while the step's call runs. */
  | {
      type: "tool_progress";
      step: number;
      tool: string;
      progress: number;
      total?: number;
      message?: string;
    }
  | {
      type: "tool_result";
      step: number;
      tool: string;
      parent?: ParentCall;
      success: boolean;
      summary: string;
      via: "native" | "mcp" | "none";
      server?: string;
      rejected?: string;
      durationMs: number;
      /** Rich content; binary payloads are files under the run's directory (`{ file, bytes }`), never inline. */
      content?: TracedContent[];
      structuredContent?: unknown;
    }
  | { type: "goal_updated"; step: number; update: Record<string, unknown>; state: GoalState }
  | {
      type: "memory_searched";
      step: number;
      query: string;
      hits: Array<{ id: string; text: string; score: number }>;
    }
  | {
      type: "verified";
      step: number;
      claim: string;
      command: string;
      passed: boolean;
      exitCode: number | null;
      outputTail: string;
      durationMs: number;
      denied?: string;
    }
  | { type: "finish_refused"; step: number; reason: string }
  | { type: "finished"; step: number; summary: string; evidence?: string }
  | { type: "marked_impossible"; step: number; reason: string; attempts: string[] }
  | { type: "worker_spawned"; workerId: string; childRunId: string; goal: string; profile: string }
  | {
      type: "approval_requested";
      approvalId: string;
      /** The run or chat session the approval belongs to; an answer elsewhere is not found. */
      runId?: string;
      tool: string;
      risk: string;
      arguments: unknown;
      /** SHA-256 of the arguments' canonical JSON: what an answer binds to. */
      argumentsHash?: string;
      description: string;
      /** After this, answers are refused and the call is denied (absent: no deadline). */
      expiresAt?: string;
    }
  | {
      type: "approval_resolved";
      approvalId: string;
      approved: boolean;
      /** The tool (set on every answer; the only pointer for a call allowed by a grant, which asks nothing). */
      tool?: string;
      /** Set on a grant's allowance, which has no approval_requested before it. */
      argumentsHash?: string;
      /** `run`: the answer also allows this tool for the rest of the run or chat session. */
      scope?: "once" | "run";
      /** Who decided: `cli`, `api:<owner>`, `viewer`, `grant:<approvalId>`, `timeout`, `abort`, `shutdown`, `host`. */
      decidedBy?: string;
      reason?: string;
    }
  | {
      type: "run_ended";
      outcome: RunOutcome;
      steps: number;
      rejections: number;
      summary?: string;
      error?: string;
    };

/** A string value in a recorded tool call's arguments longer than this is cut (characters). */
const RECORDED_STRING_CHARS = 2_048;
/** Recorded arguments whose JSON is longer than this keep only their head (characters). */
const RECORDED_ARGUMENTS_CHARS = 65_536;

/**
 * A tool call's arguments as a trace records them (`tool_called`): as they are up to 16 KiB
 * of JSON; past that, every string longer than 2,048 characters is cut, saying how much was
 * left out, and what is still over 64 KiB keeps only its head. The call itself gets its
 * arguments whole; only the record is cut — a script's thousand nested calls with 8 MiB
 * arguments each must not write gigabytes of trace.
 */
export function recordedArguments(args: unknown): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    return { "…": "arguments that are not JSON (not recorded)" };
  }
  if (json === undefined || json.length <= RECORDED_ARGUMENTS_CHARS / 4) return args;
  const cut = JSON.stringify(args, (_key, value: unknown) =>
    typeof value === "string" && value.length > RECORDED_STRING_CHARS
      ? `${value.slice(0, RECORDED_STRING_CHARS)}… (${value.length - RECORDED_STRING_CHARS} more characters, not recorded)`
      : value,
  );
  if (cut.length <= RECORDED_ARGUMENTS_CHARS) return JSON.parse(cut) as unknown;
  return {
    "…": `arguments of ${json.length} characters of JSON, not recorded whole`,
    head: cut.slice(0, RECORDED_ARGUMENTS_CHARS / 4),
  };
}

export type RunEvent = RunEventBody & { runId: string; seq: number; time: string };

export type RunEventType = RunEvent["type"];

/** Every event type, in the order of SPEC §9. */
export const RUN_EVENT_TYPES: readonly RunEventType[] = [
  "run_started",
  "profile_changed",
  "model_request",
  "model_response",
  "action_rejected",
  "capability_searched",
  "capability_loaded",
  "tool_called",
  "tool_progress",
  "tool_result",
  "goal_updated",
  "memory_searched",
  "verified",
  "finish_refused",
  "finished",
  "marked_impossible",
  "worker_spawned",
  "approval_requested",
  "approval_resolved",
  "run_ended",
];

export type RunEventListener = (event: RunEvent) => void;

export interface EventEmitterOptions {
  /** Resolves once every event of this run handed to the sink is stored; rejects with the storage error (`RunStore.flush(runId)`). */
  flush?: () => Promise<void>;
}

/**
 * Stamps events with runId, seq and time, and hands them to the store and to subscribers,
 * in order. `run_ended` is the last event of a run: an emit after it is refused (and
 * reported as a process warning), so whatever ends a run must first let everything it
 * started settle. A sink that throws does not stop the caller; the failure is kept and
 * `stored()` — awaited before each action — reports it, so the run stops before its next step.
 */
export class EventEmitterForRun {
  #seq = 0;
  #ended: RunEvent | undefined;
  #failure: Error | undefined;
  readonly #listeners = new Set<RunEventListener>();

  constructor(
    readonly runId: string,
    private readonly sink?: (event: RunEvent) => void,
    private readonly options: EventEmitterOptions = {},
  ) {}

  /** Whether run_ended was emitted. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** The first error of the sink (the store) for this run, if any. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  emit(body: RunEventBody): RunEvent {
    if (this.#ended) throw eventAfterEnd(this.runId, body.type, this.#seq + 1, this.#ended.seq);
    const event = {
      ...body,
      runId: this.runId,
      seq: ++this.#seq,
      time: new Date().toISOString(),
    } as RunEvent;
    if (event.type === "run_ended") this.#ended = event;
    try {
      this.sink?.(event);
    } catch (error) {
      this.#failure ??= error instanceof Error ? error : new Error(String(error));
    }
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A failing subscriber must not break the run.
      }
    }
    return event;
  }

  /**
   * Resolves once every event emitted so far is stored. Rejects with an `events_not_stored`
   * error naming the storage failure when one of them could not be (the caller must not act
   * further: the audit trail would have a gap).
   */
  async stored(): Promise<void> {
    if (!this.#failure) {
      try {
        await this.options.flush?.();
        return;
      } catch (error) {
        this.#failure = error instanceof Error ? error : new Error(String(error));
      }
    }
    throw new CapgateError(
      "events_not_stored",
      `Events of run ${this.runId} could not be stored (${this.#failure.message}); the run was stopped before its next step.`,
      { cause: this.#failure },
    );
  }

  subscribe(listener: RunEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * The refusal of an event appended after its run's run_ended: a CapgateError
 * `event_after_end` naming the event, also emitted as a process warning (the code that
 * appended it has a defect: whatever it reported happened after the run's end).
 */
export function eventAfterEnd(runId: string, type: string, seq: number, endSeq: number): CapgateError {
  const error = new CapgateError(
    "event_after_end",
    `Refused event '${type}' (seq ${seq}) of run ${runId}: the run already ended with run_ended (seq ${endSeq}), which must be its last event.`,
  );
  process.emitWarning(error.message, { code: "CAPGATE_EVENT_AFTER_END" });
  return error;
}

export type { ToolAction };
