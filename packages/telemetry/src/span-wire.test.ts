import {
  type Context,
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { readSpans, type SpanWire, writeSpan } from "./span-wire.js";

/** Spans as the SDK ends them, caught by a processor (the same objects the off-thread relay gets). */
function endedSpans(make: (tracer: ReturnType<BasicTracerProvider["getTracer"]>) => void): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const catcher: SpanProcessor = {
    onStart() {},
    onEnd: (span) => ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  make(new BasicTracerProvider({ spanProcessors: [catcher] }).getTracer("wire-test", "1.2.3"));
  return ended;
}

/** What the OTLP encoder reads from a span, as plain data. */
const fields = (span: ReadableSpan) => ({
  name: span.name,
  kind: span.kind,
  context: { ...span.spanContext(), traceState: span.spanContext().traceState?.serialize() },
  parent: span.parentSpanContext
    ? { spanId: span.parentSpanContext.spanId, isRemote: span.parentSpanContext.isRemote === true }
    : undefined,
  startTime: span.startTime,
  endTime: span.endTime,
  duration: span.duration,
  status: span.status,
  attributes: span.attributes,
  events: span.events.map((e) => ({
    ...e,
    attributes: e.attributes ?? {},
    droppedAttributesCount: e.droppedAttributesCount ?? 0,
  })),
  links: span.links.map((l) => ({
    context: {
      ...l.context,
      isRemote: l.context.isRemote === true,
      traceState: l.context.traceState?.serialize(),
    },
    attributes: l.attributes ?? {},
    droppedAttributesCount: l.droppedAttributesCount ?? 0,
  })),
  scope: span.instrumentationScope,
  dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
});

describe("span wire", () => {
  it("reads back every field the OTLP encoder uses: parents local and remote, events, links, trace state, status", () => {
    const remoteParent: Context = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState("vendor=a1,other=b2"),
    });
    const spans = endedSpans((tracer) => {
      const run = tracer.startSpan(
        "invoke_agent capgate",
        { kind: SpanKind.INTERNAL, attributes: { "capgate.run.id": "r1", list: ["a", "b"], n: 3, ok: true } },
        remoteParent,
      );
      const inner = tracer.startSpan(
        "execute_tool fs.write",
        {
          kind: SpanKind.CLIENT,
          links: [
            {
              context: { traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 0, isRemote: true },
              attributes: { why: "queued" },
            },
          ],
        },
        trace.setSpan(context.active(), run),
      );
      inner.addEvent("capgate.approval.requested", { "capgate.risk": "write", nums: [1, 2] });
      inner.addEvent("bare");
      inner.setStatus({ code: SpanStatusCode.ERROR, message: "policy_denied" });
      inner.end();
      run.setStatus({ code: SpanStatusCode.OK });
      run.end();
    });
    expect(spans).toHaveLength(2);
    const wire: SpanWire = [];
    for (const span of spans) writeSpan(span, wire);
    const resource = resourceFromAttributes({ "service.name": "wire" });
    const read = readSpans(structuredClone(wire), resource);
    expect(read.map(fields)).toEqual(spans.map(fields));
    expect(read.every((s) => s.resource === resource && s.ended)).toBe(true);
    // The cases the fixture is meant to hold, so the equality above covers them.
    expect(read[1]?.parentSpanContext).toMatchObject({ spanId: "b7ad6b7169203331", isRemote: true });
    expect(read[0]?.parentSpanContext).toMatchObject({
      spanId: spans[1]?.spanContext().spanId,
      isRemote: false,
    });
    expect(read[1]?.spanContext().traceState?.serialize()).toBe("vendor=a1,other=b2");
    expect(read[0]?.events).toHaveLength(2);
    expect(read[0]?.links).toHaveLength(1);
    expect(read[0]?.instrumentationScope).toEqual({ name: "wire-test", version: "1.2.3" });
  });

  it("refuses a batch cut in the middle of a span", () => {
    const wire: SpanWire = [];
    for (const span of endedSpans((tracer) => tracer.startSpan("one").end())) writeSpan(span, wire);
    expect(() => readSpans(wire.slice(0, -3), resourceFromAttributes({}))).toThrow(/middle of a span/);
  });
});
