import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";

/**
 * The OTLP trace messages, compiled by protobufjs from the official opentelemetry-proto
 * definitions (as shipped in @opentelemetry/otlp-transformer 0.207): an independent
 * decoder for what the exporter under test encodes.
 */
const require = createRequire(import.meta.url);
const { opentelemetry } = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  fromObject(value: unknown): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}

export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; attributes: Record<string, AttributeValue> }>;
  status: { code: number; message?: string };
  resource: Record<string, AttributeValue>;
  scope: string;
}

export interface OtlpReceiver {
  /** Base endpoint (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  readonly endpoint: string;
  /** Every span received so far, decoded. */
  readonly spans: ReceivedSpan[];
  /** Request bodies received, with the content type each came as. */
  readonly requests: Array<{ path: string; contentType: string; headers: IncomingMessage["headers"] }>;
  /** Resolves once the received spans satisfy `ready` (checked on every export request). */
  waitFor(ready: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** A real OTLP/HTTP trace receiver on 127.0.0.1: protobuf and JSON bodies, decoded with the proto definitions. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const contentType = String(req.headers["content-type"] ?? "");
    requests.push({ path: req.url ?? "", contentType, headers: req.headers });
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    let message: unknown;
    try {
      message = contentType.startsWith("application/json")
        ? ExportTraceServiceRequest.fromObject(hexIdsToBytes(JSON.parse(body.toString("utf8"))))
        : ExportTraceServiceRequest.decode(body);
    } catch (error) {
      res.writeHead(400, { "content-type": "text/plain" }).end(String(error));
      return;
    }
    spans.push(...flatten(message));
    if (contentType.startsWith("application/json"))
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    for (const wake of [...waiters]) wake();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    waitFor(ready) {
      if (ready(spans)) return Promise.resolve(spans);
      return new Promise((resolve) => {
        const wake = () => {
          if (!ready(spans)) return;
          waiters.delete(wake);
          resolve(spans);
        };
        waiters.add(wake);
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close").catch(() => undefined);
    },
  };
}

/** OTLP/JSON spells trace and span ids in hex; protobuf's JSON reading takes bytes as base64. */
function hexIdsToBytes(value: unknown): unknown {
  const request = value as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  for (const rs of request.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? [])
        for (const key of ["traceId", "spanId", "parentSpanId"])
          if (typeof span[key] === "string") span[key] = Buffer.from(span[key] as string, "hex");
  return value;
}

interface PlainKeyValue {
  key: string;
  value?: PlainAnyValue;
}
interface PlainAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: PlainAnyValue[] };
}

function flatten(message: unknown): ReceivedSpan[] {
  const plain = ExportTraceServiceRequest.toObject(message, {
    longs: Number,
    enums: Number,
    bytes: String,
    defaults: false,
    arrays: true,
  }) as {
    resourceSpans: Array<{
      resource?: { attributes?: PlainKeyValue[] };
      scopeSpans?: Array<{
        scope?: { name?: string };
        spans?: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind?: number;
          attributes?: PlainKeyValue[];
          events?: Array<{ name: string; attributes?: PlainKeyValue[] }>;
          status?: { code?: number; message?: string };
        }>;
      }>;
    }>;
  };
  const out: ReceivedSpan[] = [];
  for (const rs of plain.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? [])
        out.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: span.parentSpanId ? hex(span.parentSpanId) : "",
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
          status: {
            code: span.status?.code ?? 0,
            ...(span.status?.message ? { message: span.status.message } : {}),
          },
          resource,
          scope: ss.scope?.name ?? "",
        });
  }
  return out;
}

function hex(base64: string): string {
  return Buffer.from(base64, "base64").toString("hex");
}

function attributes(list: PlainKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

function anyValue(value: PlainAnyValue | undefined): AttributeValue {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(anyValue);
  return undefined;
}
