// An OpenTelemetry collector's OTLP/HTTP traces endpoint, in the emulator (POST /v1/traces, JSON encoding): it keeps
// what it received so tests can ask for a trace's spans (GET /_emulator/traces?trace_id=…), with the headers each
// export came with. It checks the shape a collector relies on (resourceSpans → scopeSpans → spans, hex ids) and
// answers 400 otherwise, as a collector would; it interprets nothing else.

/** One span as received, with the headers of the export that carried it. */
export interface ReceivedSpan {
  span: Record<string, unknown>;
  /** The export request's headers (lower-case names). */
  headers: Record<string, string>;
  /** The resource's and scope's fields, as sent. */
  resource: unknown;
  scope: unknown;
  schemaUrl: unknown;
}

const HEX = (bytes: number) => new RegExp(`^[0-9a-f]{${bytes * 2}}$`);
const TRACE_ID = HEX(16);
const SPAN_ID = HEX(8);

export class TraceCollector {
  private spans: ReceivedSpan[] = [];

  /** Takes one ExportTraceServiceRequest; returns an error message for a malformed one. */
  receive(body: unknown, headers: Record<string, string>): string | null {
    const request = body as { resourceSpans?: unknown };
    if (!Array.isArray(request?.resourceSpans)) return "resourceSpans must be an array";
    const received: ReceivedSpan[] = [];
    for (const resourceSpans of request.resourceSpans as Record<string, unknown>[]) {
      if (!Array.isArray(resourceSpans.scopeSpans)) return "scopeSpans must be an array";
      for (const scopeSpans of resourceSpans.scopeSpans as Record<string, unknown>[]) {
        if (!Array.isArray(scopeSpans.spans)) return "spans must be an array";
        for (const span of scopeSpans.spans as Record<string, unknown>[]) {
          if (typeof span.traceId !== "string" || !TRACE_ID.test(span.traceId)) return "a traceId is not 16 hex bytes";
          if (typeof span.spanId !== "string" || !SPAN_ID.test(span.spanId)) return "a spanId is not 8 hex bytes";
          if (
            span.parentSpanId !== undefined &&
            (typeof span.parentSpanId !== "string" || !SPAN_ID.test(span.parentSpanId))
          )
            return "a parentSpanId is not 8 hex bytes";
          if (typeof span.name !== "string") return "a span has no name";
          received.push({
            span,
            headers,
            resource: resourceSpans.resource,
            scope: scopeSpans.scope,
            schemaUrl: scopeSpans.schemaUrl,
          });
        }
      }
    }
    this.spans.push(...received);
    return null;
  }

  /** Every span received for `traceId`, in the order received (a span exported twice is listed twice). */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((received) => received.span.traceId === traceId);
  }

  /** Every span received whose attribute `key` has the string value `value`. */
  withAttribute(key: string, value: string): ReceivedSpan[] {
    return this.spans.filter((received) =>
      ((received.span.attributes ?? []) as { key: string; value: { stringValue?: string } }[]).some(
        (attribute) => attribute.key === key && attribute.value?.stringValue === value,
      ),
    );
  }

  reset(): void {
    this.spans = [];
  }
}
