import type { ModelClient } from "@capgate/models";
import type { ProfilePolicy } from "@capgate/profiles";
import type { LoopEnvironment } from "./deps.js";
import type { RunEventListener, RunOutcome } from "./events.js";
import type { ToolSurfaceKind } from "./surface.js";

export interface RunGoalOptions {
  goal: string;
  /** A profile name or policy; inferred from the goal when absent. */
  profile?: string | ProfilePolicy;
  model: ModelClient;
  workspace: string;
  maxSteps?: number;
  /** Fall through to the configured MCP servers (default false: native-only). */
  mcp?: boolean;
  signal?: AbortSignal;
  /** Pass the eight tools to the provider as native tools (the reply still goes through parseToolAction). */
  nativeTools?: boolean;
  /**
   * `gate` (default): the eight top-level tools. `exposed`: every registered tool the run may
   * see (MCP servers' tools with `mcp: true`) offered directly, no search — the baseline the
   * gate is measured against. goal_update, memory_search, verify, finish and mark_impossible
   * stay, and finish keeps its verification rule.
   */
  surface?: ToolSurfaceKind;
  runId?: string;
  parentRunId?: string;
  onEvent?: RunEventListener;
  /** Nesting level: 0 for a top-level run, 1 for a worker's run (workers cannot spawn workers). */
  depth?: number;
  /** Most tool calls in the run, a script's nested calls included (default: `env.maxToolCalls`, else no limit). */
  maxToolCalls?: number;
  /** Give up after this many rejected actions in a row (default 8). */
  maxConsecutiveRejections?: number;
  /**
   * Awaited after the last step and before `run_ended` is emitted, so whatever it records
   * (a worker publishing the run's branch, say) is in place by the time a reader sees the
   * end. An error it throws becomes the run's error; the outcome stands.
   */
  beforeEnd?: (end: { runId: string; outcome: RunOutcome; steps: number }) => Promise<void>;
}

export interface RunGoalResult {
  runId: string;
  outcome: RunOutcome;
  summary?: string;
  error?: string;
  steps: number;
  rejections: number;
  profile: string;
  tracePath: string;
}

/** Runs one goal to its end: `runGoal`, and what the worker service starts each worker with. */
export type RunGoalFunction = (env: LoopEnvironment, options: RunGoalOptions) => Promise<RunGoalResult>;
