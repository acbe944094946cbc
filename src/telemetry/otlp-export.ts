// Where a run's spans go and how: the operator's OTLP/HTTP endpoint (OUTPOST_OTEL_ENDPOINT, off when empty) with its
// headers (the secret OUTPOST_OTEL_HEADERS), and the OTLP/HTTP JSON encoding of opentelemetry-proto's
// ExportTraceServiceRequest, POSTed to <endpoint>/v1/traces. A small exporter of our own rather than the
// OpenTelemetry SDK: the SDK's Workers wrapper does not build here (docs/telemetry.md), and one JSON POST per run is
// all that is needed.
import type { Env } from "../env.ts";
import { BlockedUrlError, ConfigError } from "../errors.ts";
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import { type AttributeValue, type GenAiSpan, SEMCONV_VERSION } from "./genai-spans.ts";

/** The export's deadline: it runs in the alarm after the run, which must not wait long on a slow collector. */
const EXPORT_TIMEOUT_MS = 10_000;
/** The guard's checks of scheme and credentials, with any host allowed: the endpoint is the operator's (otelConfig). */
const OPERATOR_ENDPOINT: OutboundPolicy = { allowPrivateHosts: new Set(["*"]) };
/** service.name of every span's resource. */
const SERVICE_NAME = "outpost";

export interface OtelConfig {
  /** <endpoint>/v1/traces. */
  tracesUrl: URL;
  headers: Record<string, string>;
}

/**
 * The exporter's configuration, or null when telemetry is off (OUTPOST_OTEL_ENDPOINT unset or empty). The endpoint is
 * the operator's own, like the deployment's ANTHROPIC_BASE_URL: no tenant or agent can set it, so a private
 * collector (a sidecar on 127.0.0.1) needs no OUTPOST_ALLOW_PRIVATE_HOSTS, which would open its host to the agents'
 * tools too. It must still be an http(s) URL without credentials in it. Throws ConfigError for a bad endpoint or
 * header list; the message never quotes a header's value.
 */
export function otelConfig(env: Pick<Env, "OUTPOST_OTEL_ENDPOINT" | "OUTPOST_OTEL_HEADERS">): OtelConfig | null {
  const endpoint = env.OUTPOST_OTEL_ENDPOINT?.trim() ?? "";
  if (endpoint === "") return null;
  let base: URL;
  try {
    base = checkOutboundUrl(endpoint, OPERATOR_ENDPOINT);
  } catch (error) {
    // The reason alone: the URL could hold credentials, and this message is logged.
    const reason = error instanceof BlockedUrlError ? error.reason : "it is not a valid URL";
    throw new ConfigError(`OUTPOST_OTEL_ENDPOINT is not allowed: ${reason}.`);
  }
  // OTLP/HTTP: a signal's path is appended to the base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT's rule).
  const tracesUrl = new URL(`${base.href.replace(/\/+$/, "")}/v1/traces`);
  return { tracesUrl, headers: otlpHeaders(env.OUTPOST_OTEL_HEADERS ?? "") };
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS' format: `name=value` pairs separated by commas, values percent-encoded, e.g.
 * `authorization=Bearer%20abc,x-tenant=ops`.
 */
export function otlpHeaders(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, pair] of raw.split(",").entries()) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const name = eq > 0 ? pair.slice(0, eq).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new ConfigError(`OUTPOST_OTEL_HEADERS: entry ${index + 1} is not name=value with a valid header name.`);
    }
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`OUTPOST_OTEL_HEADERS: the value of ${name} is not valid percent-encoding.`);
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** OTLP/HTTP JSON (opentelemetry-proto ExportTraceServiceRequest): ids in hex, times as strings of nanoseconds. */
export function otlpTraceRequest(spans: readonly GenAiSpan[]): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": SERVICE_NAME }) },
        scopeSpans: [
          {
            scope: { name: "outpost", version: SEMCONV_VERSION },
            schemaUrl: `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`,
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: nanos(span.startMs),
              endTimeUnixNano: nanos(span.endMs),
              attributes: attributes(span.attributes),
              // STATUS_CODE_ERROR (2) with the failure's code; UNSET (0) otherwise, as the conventions ask.
              status: span.error === null ? { code: 0 } : { code: 2, message: span.error },
            })),
          },
        ],
      },
    ],
  };
}

/** POSTs the spans; throws on a network failure, a timeout or a status other than 2xx (the caller logs it). */
export async function exportSpans(config: OtelConfig, spans: readonly GenAiSpan[]): Promise<void> {
  if (spans.length === 0) return;
  // A timer cleared when the export ends, not AbortSignal.timeout: its timer would hold the object for its whole span.
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`the collector did not answer within ${EXPORT_TIMEOUT_MS / 1000} s`)),
    EXPORT_TIMEOUT_MS,
  );
  try {
    const response = await fetch(config.tracesUrl, {
      method: "POST",
      headers: { ...config.headers, "content-type": "application/json" },
      body: JSON.stringify(otlpTraceRequest(spans)),
      signal: abort.signal,
    });
    // The body (an ExportTraceServiceResponse, maybe with partial_success) is not needed.
    await response.body?.cancel();
    if (!response.ok) throw new Error(`the collector answered HTTP ${response.status}`);
  } finally {
    clearTimeout(timer);
  }
}

function nanos(ms: number): string {
  return `${BigInt(ms) * 1_000_000n}`;
}

function attributes(values: Record<string, AttributeValue>): { key: string; value: unknown }[] {
  return Object.entries(values).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function anyValue(value: AttributeValue): unknown {
  if (Array.isArray(value)) return { arrayValue: { values: value.map((item) => ({ stringValue: item })) } };
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  // int64 is a string in OTLP JSON.
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}
