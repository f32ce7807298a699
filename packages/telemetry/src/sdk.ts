import type { RunEvent, RunStore } from "@capgate/loop";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { traceDirectCall } from "./direct-calls.js";
import { RunTracer } from "./run-tracer.js";
import type { TelemetrySettings } from "./settings.js";
import { observedRunStore } from "./traced-store.js";
import type { Telemetry } from "./types.js";

/** The instrumentation scope of every capgate span. */
export const TRACER_NAME = "@capgate/telemetry";

/**
 * The SDK half, loaded by `startTelemetry` only: a tracer provider of its own (the global
 * one is left to the host application), a batch processor and the OTLP/HTTP exporter for
 * the configured protocol.
 */
export function startSdk(settings: TelemetrySettings): Telemetry {
  const exporterOptions = { url: settings.url, headers: settings.headers };
  const exporter =
    settings.protocol === "http/json"
      ? new JsonExporter(exporterOptions)
      : new ProtobufExporter(exporterOptions);
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
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
