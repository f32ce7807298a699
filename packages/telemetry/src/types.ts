import type { RunEvent, RunStore } from "@capgate/loop";
import type { DirectCallApproval, DirectCallOutcome, DirectToolCall } from "./direct-calls.js";
import type { TelemetrySettings } from "./settings.js";

/** Traces being exported: what a host wires into its run store and direct calls. */
export interface Telemetry {
  readonly settings: TelemetrySettings;
  /** A run store whose appended events also become spans (runs, model turns, tool calls). */
  traceRunStore(store: RunStore): RunStore;
  /** Hand one event to the tracer (for events that do not pass a traced store). */
  observe(event: RunEvent): void;
  /** One span around a tool call made outside a run (`POST /tools/call`, `capgate call`). */
  traceToolCall<T extends DirectCallOutcome>(
    call: DirectToolCall,
    run: (approval: DirectCallApproval) => Promise<T>,
  ): Promise<T>;
  /** Export every finished span now. */
  forceFlush(): Promise<void>;
  /** End open spans, export what is left, stop. Call before the process exits. */
  shutdown(): Promise<void>;
}
