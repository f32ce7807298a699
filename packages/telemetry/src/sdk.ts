import type { RunEvent, RunStore } from "@capgate/loop";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { traceDirectCall } from "./direct-calls.js";
import { OffThreadSpanProcessor } from "./off-thread.js";
import { RunTracer } from "./run-tracer.js";
import type { TelemetrySettings } from "./settings.js";
import { observedRunStore } from "./traced-store.js";
import type { Telemetry } from "./types.js";

/** The instrumentation scope of every capgate span. */
export const TRACER_NAME = "@capgate/telemetry";

/**
 * The SDK half, loaded by `startTelemetry` only: a tracer provider of its own (the global
 * one is left to the host application) whose finished spans go to an export thread, where
 * the SDK's batch processor and the OTLP/HTTP exporter for the configured protocol send
 * them (off-thread.ts). The resource (service.name, OTEL_RESOURCE_ATTRIBUTES) is the
 * export thread's.
 */
export function startSdk(settings: TelemetrySettings): Telemetry {
  const provider = new BasicTracerProvider({ spanProcessors: [new OffThreadSpanProcessor(settings)] });
  const tracer = provider.getTracer(TRACER_NAME);
  const runs = new RunTracer(tracer, settings.captureContent);
  const observe = (event: RunEvent) => runs.observe(event);
  let stopped: Promise<void> | undefined;
  return {
    settings,
    observe,
    traceRunStore: (store: RunStore) => observedRunStore(store, observe),
    traceToolCall: (call, run) => traceDirectCall(tracer, settings.captureContent, call, run),
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      stopped ??= (async () => {
        runs.endAll();
        await provider.shutdown();
      })();
      return stopped;
    },
  };
}
