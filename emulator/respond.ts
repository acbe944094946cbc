// Delivering one rendered reply over an HTTP response, in any dialect: pacing (time to first token, per-token delay)
// and the injected faults. Every wait is abortable so a disconnected client never leaves a timer behind.
import type { ServerResponse } from "node:http";
import type { Dialect, ErrorSpec, RenderedReply } from "./reply.ts";
import type { Fault } from "./script.ts";
import { statusForErrorType } from "./wire.ts";

/** One in-flight exchange; `finish` stamps the stats record right before the last byte is handed over. */
export interface Exchange {
  res: ServerResponse;
  signal: AbortSignal;
  headers: Record<string, string>;
  finish(status: number): void;
  serviceMs(): number;
}

export interface Pacing {
  ttftMs: number;
  tokenDelayMs: number;
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts; `ms` of Infinity waits for the abort alone. Never early:
 * Node's timers run on the event loop's millisecond clock and can fire a fraction of a millisecond before `ms` has
 * passed on performance.now(), which the reported service time uses, so an early wake sleeps the remainder.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  const deadline = performance.now() + ms;
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const wake = (): void => {
      const left = deadline - performance.now();
      if (left > 0) timer = setTimeout(wake, Math.ceil(left));
      else done();
    };
    if (Number.isFinite(ms)) timer = setTimeout(wake, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

export function sendJson(
  exchange: Exchange,
  status: number,
  body: unknown,
  extraHeaders: Record<string, string> = {},
): void {
  const { res } = exchange;
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  exchange.finish(status);
  res.writeHead(status, {
    ...exchange.headers,
    ...extraHeaders,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "x-emulator-service-time-ms": exchange.serviceMs().toFixed(2),
  });
  res.end(text);
}

/** An error in the dialect's shape, with `retry-after` when the spec has one. */
export function sendError(exchange: Exchange, dialect: Dialect, spec: ErrorSpec): void {
  const { status, body } = dialect.error(spec);
  const extra: Record<string, string> = {};
  if (spec.retryAfter !== undefined) extra["retry-after"] = String(spec.retryAfter);
  sendJson(exchange, status, body, extra);
}

/** A status fault short-circuits before any model time, as the real API's admission errors do. */
export function sendHttpFault(exchange: Exchange, dialect: Dialect, fault: Extract<Fault, { kind: "http" }>): void {
  sendError(exchange, dialect, {
    status: fault.status,
    type: fault.error_type,
    message: fault.message,
    retryAfter: fault.retry_after,
  });
}

/** The error a `stream_error` fault names: overloaded unless the script says otherwise. */
function streamErrorSpec(fault: Extract<Fault, { kind: "stream_error" }>): ErrorSpec {
  return {
    status: statusForErrorType(fault.error_type ?? "overloaded_error"),
    type: fault.error_type,
    message: fault.message,
  };
}

export async function sendMessage(
  exchange: Exchange,
  dialect: Dialect,
  rendered: RenderedReply,
  fault: Fault | null,
  pacing: Pacing,
): Promise<void> {
  const { res, signal } = exchange;
  if (fault?.kind === "stall") {
    await sleep(fault.ms ?? Number.POSITIVE_INFINITY, signal);
    // Dropping the socket without a status is what a hung upstream looks like once a proxy gives up.
    exchange.finish(0);
    res.destroy();
    return;
  }
  if (fault?.kind === "stream_error") {
    await sleep(pacing.ttftMs, signal);
    sendError(exchange, dialect, streamErrorSpec(fault));
    return;
  }
  await sleep(pacing.ttftMs + pacing.tokenDelayMs * rendered.chunkCount, signal);
  if (signal.aborted) return;
  if (fault?.kind === "malformed") {
    const text = JSON.stringify(rendered.body);
    const truncated = text.slice(0, Math.floor(text.length / 2));
    exchange.finish(200);
    res.writeHead(200, {
      ...exchange.headers,
      "content-type": "application/json",
      "x-emulator-service-time-ms": exchange.serviceMs().toFixed(2),
    });
    res.end(truncated);
    return;
  }
  sendJson(exchange, 200, rendered.body);
}

export async function streamMessage(
  exchange: Exchange,
  dialect: Dialect,
  rendered: RenderedReply,
  fault: Fault | null,
  pacing: Pacing,
): Promise<void> {
  const { res, signal } = exchange;
  res.writeHead(200, {
    ...exchange.headers,
    "content-type": dialect.streamContentType ?? "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  await sleep(pacing.ttftMs, signal);

  const faultAt = fault && fault.kind !== "http" ? (fault.after_deltas ?? 0) : Number.POSITIVE_INFINITY;
  let deltas = 0;
  const last = rendered.frames.length - 1;
  for (const [index, frame] of rendered.frames.entries()) {
    if (signal.aborted) return;
    // Fault points sit before a delta (or before the finish frame once the deltas run out), never mid-frame.
    if ((frame.isDelta || frame.isFinish) && deltas >= faultAt && fault) {
      await injectStreamFault(exchange, dialect, fault);
      return;
    }
    if (frame.isDelta) {
      if (deltas > 0) await sleep(pacing.tokenDelayMs, signal);
      if (signal.aborted) return;
      deltas++;
    }
    if (index === last) exchange.finish(200);
    res.write(frame.text);
  }
  res.end();
}

async function injectStreamFault(exchange: Exchange, dialect: Dialect, fault: Fault): Promise<void> {
  const { res, signal } = exchange;
  switch (fault.kind) {
    case "stream_error":
      exchange.finish(200);
      res.end(dialect.streamError(streamErrorSpec(fault)));
      return;
    case "malformed":
      exchange.finish(200);
      res.end(dialect.malformedFrame);
      return;
    case "stall":
      await sleep(fault.ms ?? Number.POSITIVE_INFINITY, signal);
      if (signal.aborted) return;
      exchange.finish(200);
      res.end();
      return;
    case "http":
      return;
  }
}
