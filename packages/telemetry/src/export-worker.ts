// The export thread: finished spans arrive from the host's thread in flat batches
// (span-wire.ts), and the SDK's own BatchSpanProcessor and OTLP/HTTP exporter batch, encode
// and send them here, so the host's event loop never encodes protobuf or waits on a
// collector. Loaded by OffThreadSpanProcessor only; never imported by the host's code.
import { parentPort, workerData } from "node:worker_threads";
import { diag } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { TelemetrySettings } from "./settings.js";
import { readSpans, type SpanWire } from "./span-wire.js";

/** A message to the export thread. */
export type ToExportThread =
  | { type: "spans"; wire: SpanWire; spans: number }
  | { type: "flush"; id: number }
  | { type: "shutdown"; id: number };

/**
 * From the export thread: how many relayed spans it has taken into its processor's queue,
 * and the answer to a flush or shutdown once the spans before it are sent.
 */
export type FromExportThread =
  | { type: "taken"; spans: number }
  | { type: "done"; id: number; error?: string };

const port = parentPort;
if (port) {
  const settings = (workerData as { settings: TelemetrySettings }).settings;
  const exporterOptions = { url: settings.url, headers: settings.headers };
  const exporter =
    settings.protocol === "http/json"
      ? new JsonExporter(exporterOptions)
      : new ProtobufExporter(exporterOptions);
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }));
  const processor = new BatchSpanProcessor(exporter);

  const answer = (id: number, done: Promise<void>) =>
    done.then(
      () => port.postMessage({ type: "done", id } satisfies FromExportThread),
      (error: unknown) =>
        port.postMessage({
          type: "done",
          id,
          error: error instanceof Error ? error.message : String(error),
        } satisfies FromExportThread),
    );

  port.on("message", (message: ToExportThread) => {
    switch (message.type) {
      case "spans": {
        try {
          for (const span of readSpans(message.wire, resource)) processor.onEnd(span);
        } catch (error) {
          diag.error("capgate telemetry: a span batch could not be read", error);
        }
        port.postMessage({ type: "taken", spans: message.spans } satisfies FromExportThread);
        return;
      }
      case "flush":
        void answer(message.id, processor.forceFlush());
        return;
      case "shutdown":
        void answer(message.id, processor.shutdown());
        return;
    }
  });
}
