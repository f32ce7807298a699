import type { RunEvent, RunOutcome } from "@capgate/loop";

/** What one run cost and did, from its events. */
export interface RunMetrics {
  outcome: RunOutcome;
  steps: number;
  modelCalls: number;
  rejections: number;
  toolCalls: number;
  /** Calls to the distractor servers' tools. */
  distractorCalls: number;
  /** Characters sent over the whole run: system + messages of every request, plus native tool definitions when sent. */
  promptChars: number;
  /** The same for the first request alone: the tool surface and the goal, before any step. */
  firstPromptChars: number;
  /** As the provider reported them, summed over the run; null when it reported none. */
  promptTokens: number | null;
  completionTokens: number | null;
}

export function metricsFromEvents(events: readonly RunEvent[], distractors: ReadonlySet<string>): RunMetrics {
  let modelCalls = 0;
  let promptChars = 0;
  let firstPromptChars = 0;
  let promptTokens: number | null = null;
  let completionTokens: number | null = null;
  let toolCalls = 0;
  let distractorCalls = 0;
  let outcome: RunOutcome = "error";
  let steps = 0;
  let rejections = 0;
  for (const e of events) {
    switch (e.type) {
      case "model_request": {
        const chars = e.totalChars + (e.toolsChars ?? 0);
        if (modelCalls === 0) firstPromptChars = chars;
        modelCalls++;
        promptChars += chars;
        break;
      }
      case "model_response":
        if (e.usage?.inputTokens !== undefined) promptTokens = (promptTokens ?? 0) + e.usage.inputTokens;
        if (e.usage?.outputTokens !== undefined)
          completionTokens = (completionTokens ?? 0) + e.usage.outputTokens;
        break;
      case "tool_called": {
        toolCalls++;
        const slash = e.tool.indexOf("/");
        if (slash > 0 && distractors.has(e.tool.slice(0, slash))) distractorCalls++;
        break;
      }
      case "run_ended":
        outcome = e.outcome;
        steps = e.steps;
        rejections = e.rejections;
        break;
    }
  }
  return {
    outcome,
    steps,
    modelCalls,
    rejections,
    toolCalls,
    distractorCalls,
    promptChars,
    firstPromptChars,
    promptTokens,
    completionTokens,
  };
}
