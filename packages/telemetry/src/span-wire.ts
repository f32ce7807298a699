import type { Attributes, HrTime, Link, SpanContext, SpanStatus } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * Finished spans as they cross to the export thread: one flat array of strings, numbers and
 * attribute values per batch. A structured clone of a flat array costs a fraction of one of
 * the SDK's span objects (nested objects, closures), and the clone is the only work the
 * request thread does for a span after it ends.
 *
 * Layout of one span (all counts precede what they count):
 *   name, kind, traceId, spanId, traceFlags, traceState ("" for none),
 *   parentSpanId ("" for none), parentIsRemote (0/1),
 *   start[0], start[1], end[0], end[1], statusCode, statusMessage ("" for none),
 *   scope name, scope version (""), scope schemaUrl (""),
 *   droppedAttributes, droppedEvents, droppedLinks,
 *   attributes, events, links
 * where attributes = n, then n × (key, value); an event = name, time[0], time[1],
 * droppedAttributes, attributes; a link = traceId, spanId, traceFlags, traceState,
 * isRemote, droppedAttributes, attributes.
 */
export type SpanWire = unknown[];

/** Append `span` to `out` in the layout above. */
export function writeSpan(span: ReadableSpan, out: SpanWire): void {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  const scope = span.instrumentationScope;
  out.push(
    span.name,
    span.kind,
    context.traceId,
    context.spanId,
    context.traceFlags,
    context.traceState?.serialize() ?? "",
    parent?.spanId ?? "",
    parent?.isRemote ? 1 : 0,
    span.startTime[0],
    span.startTime[1],
    span.endTime[0],
    span.endTime[1],
    span.status.code,
    span.status.message ?? "",
    scope.name,
    scope.version ?? "",
    scope.schemaUrl ?? "",
    span.droppedAttributesCount,
    span.droppedEventsCount,
    span.droppedLinksCount,
  );
  writeAttributes(span.attributes, out);
  out.push(span.events.length);
  for (const event of span.events) {
    out.push(event.name, event.time[0], event.time[1], event.droppedAttributesCount ?? 0);
    writeAttributes(event.attributes, out);
  }
  out.push(span.links.length);
  for (const link of span.links) {
    out.push(
      link.context.traceId,
      link.context.spanId,
      link.context.traceFlags,
      link.context.traceState?.serialize() ?? "",
      link.context.isRemote ? 1 : 0,
      link.droppedAttributesCount ?? 0,
    );
    writeAttributes(link.attributes, out);
  }
}

function writeAttributes(attributes: Attributes | undefined, out: SpanWire): void {
  const at = out.length;
  out.push(0);
  let n = 0;
  if (attributes)
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined) continue;
      out.push(key, value);
      n++;
    }
  out[at] = n;
}

/**
 * The spans of one batch, read back as ReadableSpans for the SDK's own processor and OTLP
 * exporter, under the export thread's `resource`. Throws on a malformed batch (the two
 * halves are one package's code; a mismatch is a bug, not input to tolerate).
 */
export function readSpans(wire: SpanWire, resource: Resource): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  let i = 0;
  const next = (): unknown => {
    if (i >= wire.length) throw new Error("span batch ended in the middle of a span");
    return wire[i++];
  };
  const str = () => next() as string;
  const num = () => next() as number;
  const traceState = (s: string) => (s ? new TraceState(s) : undefined);
  const attributes = (): Attributes => {
    const n = num();
    const out: Attributes = {};
    for (let k = 0; k < n; k++) {
      const key = str();
      out[key] = next() as Attributes[string];
    }
    return out;
  };
  while (i < wire.length) {
    const name = str();
    const kind = num();
    const context: SpanContext = { traceId: str(), spanId: str(), traceFlags: num() };
    const state = traceState(str());
    if (state) context.traceState = state;
    const parentSpanId = str();
    const parentIsRemote = num() === 1;
    const startTime: HrTime = [num(), num()];
    const endTime: HrTime = [num(), num()];
    const code = num();
    const message = str();
    const status: SpanStatus = message ? { code, message } : { code };
    const scopeName = str();
    const scopeVersion = str();
    const schemaUrl = str();
    const droppedAttributesCount = num();
    const droppedEventsCount = num();
    const droppedLinksCount = num();
    const spanAttributes = attributes();
    const events: TimedEvent[] = [];
    for (let n = num(), k = 0; k < n; k++) {
      const eventName = str();
      const time: HrTime = [num(), num()];
      const dropped = num();
      events.push({ name: eventName, time, attributes: attributes(), droppedAttributesCount: dropped });
    }
    const links: Link[] = [];
    for (let n = num(), k = 0; k < n; k++) {
      const linkContext: SpanContext = { traceId: str(), spanId: str(), traceFlags: num() };
      const linkState = traceState(str());
      if (linkState) linkContext.traceState = linkState;
      if (num() === 1) linkContext.isRemote = true;
      const dropped = num();
      links.push({ context: linkContext, attributes: attributes(), droppedAttributesCount: dropped });
    }
    spans.push({
      name,
      kind,
      spanContext: () => context,
      parentSpanContext: parentSpanId
        ? {
            traceId: context.traceId,
            spanId: parentSpanId,
            traceFlags: context.traceFlags,
            isRemote: parentIsRemote,
          }
        : undefined,
      startTime,
      endTime,
      duration: hrDiff(startTime, endTime),
      status,
      attributes: spanAttributes,
      links,
      events,
      ended: true,
      resource,
      instrumentationScope: {
        name: scopeName,
        ...(scopeVersion ? { version: scopeVersion } : {}),
        ...(schemaUrl ? { schemaUrl } : {}),
      },
      droppedAttributesCount,
      droppedEventsCount,
      droppedLinksCount,
    });
  }
  return spans;
}

function hrDiff(start: HrTime, end: HrTime): HrTime {
  let seconds = end[0] - start[0];
  let nanos = end[1] - start[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
}
