import type { ApprovalMode } from "@capgate/tools";

export interface StartRunRequest {
  goal: string;
  profile?: string;
  model?: string;
  maxSteps?: number;
  /** Approval mode for this run (default: the server's). */
  approval?: ApprovalMode;
  /** Let capability_call fall through to the configured MCP servers (default false). */
  mcp?: boolean;
}

export type RunStatus = "queued" | "running";

export interface ActiveRun {
  id: string;
  goal: string;
  profile: string | undefined;
  status: RunStatus;
  queuedAt: string;
}

/**
 * Who executes goal runs for a frontend: the in-process `RunManager` (runs: "local") or
 * the PostgreSQL queue that hands them to `capgate worker` nodes (runs: "queue").
 */
export interface RunLauncher {
  /**
   * Check the request and accept it (queued, or running at once). A refusal throws a
   * CapgateError: `unknown_profile`, a model-spec code or `scripted_model_refused` (the
   * request is wrong), `too_many_requests`, `shutting_down`, `queue_unavailable`.
   */
  start(request: StartRunRequest): Promise<{ id: string; status: RunStatus }>;
  /** A run that has not ended (queued or running), or undefined. */
  get(id: string): Promise<ActiveRun | undefined>;
  /** Runs that have not ended. */
  list(): Promise<ActiveRun[]>;
  counts(): Promise<{ running: number; queued: number }>;
  /** Stop taking runs; a local launcher also aborts its running ones and waits for their run_ended. */
  shutdown(reason?: string): Promise<void>;
}
