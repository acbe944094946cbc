// Sending a fuzzed request and judging the answer, for the fuzz tests of test/http/: whatever arrives, the answer
// is never a 5xx and arrives within 10 s; an error is a 4xx with the JSON error shape, a request id, and the status,
// code and field the input calls for. A failure is reported as its request, abridged.
import { exports } from "cloudflare:workers";
import fc, { type Arbitrary } from "fast-check";
import { ErrorBodySchema } from "../../../src/http/responses.ts";
import { BASE, UUID_V4 } from "../helpers.ts";

export type Header = readonly [name: string, value: string];

/** One request as the fuzzer builds it: the path is already percent-encoded where it is meant to be. */
interface Probe {
  method: string;
  path: string;
  headers: readonly Header[];
  body?: Uint8Array | undefined;
}

/** What the request calls for: the statuses it may get and, for an error, its codes and the field it names. */
export interface Expected {
  status: readonly number[];
  codes?: readonly string[];
  field?: string;
  /** A 200 may be an SSE stream (a finished task's events, which ends after its last one). */
  stream?: boolean;
}

export interface Case {
  probe: Probe;
  expected: Expected;
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const ERROR_KEYS = new Set(["code", "message", "request_id", "field"]);
/** Every answer here is immediate (no request waits on a run); one that is not has hung. */
const PROBE_TIMEOUT_MS = 10_000;

let requestsSent = 0;
const startedAt = Date.now();

function preview(value: string, max = 160): string {
  const shown = JSON.stringify(value.length > max ? value.slice(0, max) : value);
  return value.length > max ? `${shown}… (${value.length} chars)` : shown;
}

function describeProbe(probe: Probe): string {
  const headers = probe.headers.map(([name, value]) => `${name}: ${preview(value, 80)}`).join("; ");
  const body =
    probe.body === undefined
      ? "none"
      : `${probe.body.byteLength} bytes ${preview(String.fromCharCode(...probe.body.subarray(0, 160)))}`;
  return `${probe.method} ${preview(probe.path, 300)} headers [${headers}] body ${body}`;
}

/** Why the response does not match what was expected, or null when it does. */
async function mismatch(res: Response, probe: Probe, expected: Expected): Promise<string | null> {
  const type = res.headers.get("content-type") ?? "";
  const stream = type.startsWith("text/event-stream");
  if (stream && (!expected.stream || res.status !== 200)) {
    await res.body?.cancel();
    return `an event stream (${res.status}) where none was expected`;
  }
  // Read as bytes (a file may be anything); a finished task's event stream ends after its last event.
  const text = probe.method === "HEAD" ? "" : new TextDecoder().decode(await res.arrayBuffer());
  if (res.status >= 500) return `a ${res.status}: ${preview(text, 400)}`;
  if (!expected.status.includes(res.status)) {
    return `status ${res.status}, expected ${expected.status.join(" or ")}: ${preview(text, 400)}`;
  }
  const requestId = res.headers.get("x-request-id") ?? "";
  if (!UUID_V4.test(requestId)) return `x-request-id is ${preview(requestId)}`;
  if (res.status < 400 || probe.method === "HEAD") return null;
  if (type !== "application/json") return `a ${res.status} with content-type ${preview(type)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `a ${res.status} whose body is not JSON: ${preview(text)}`;
  }
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (typeof body !== "object" || body === null || Object.keys(body).join() !== "error" || !error) {
    return `a ${res.status} without the error shape: ${preview(text)}`;
  }
  const extra = Object.keys(error).filter((k) => !ERROR_KEYS.has(k));
  if (extra.length > 0) return `unexpected keys in the error: ${extra.join(", ")}`;
  const { code, message, request_id, field } = error;
  if (typeof code !== "string" || !SNAKE_CASE.test(code)) return `error.code ${preview(String(code))}`;
  if (typeof message !== "string" || message.trim() === "") return `error.message ${preview(String(message))}`;
  if (request_id !== requestId) return `error.request_id ${String(request_id)} is not the x-request-id ${requestId}`;
  if (field !== undefined && typeof field !== "string") return `error.field ${String(field)}`;
  const schema = ErrorBodySchema.safeParse(body);
  if (!schema.success) return `an error body its schema refuses (${schema.error.message}): ${preview(text, 400)}`;
  if (expected.codes && !expected.codes.includes(code)) {
    return `code ${code}, expected ${expected.codes.join(" or ")}: ${preview(text, 400)}`;
  }
  if (expected.field !== undefined && field !== expected.field) {
    return `field ${String(field)}, expected ${expected.field}: ${preview(text, 400)}`;
  }
  return null;
}

async function fire({ probe, expected }: Case): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of probe.headers) headers.append(name, value);
  const init: RequestInit = { method: probe.method, headers };
  if (probe.body !== undefined) init.body = probe.body;
  requestsSent++;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no complete answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
  });
  const answered = exports.default
    .fetch(new Request(BASE + probe.path, init))
    .then((res) => mismatch(res, probe, expected));
  const problem = await Promise.race([answered, stuck]).finally(() => clearTimeout(timer));
  if (problem) throw new Error(`${problem}\n    request: ${describeProbe(probe)}`);
}

/** Runs the property; the first failure is reported as it is (shrinking would resend hundreds of requests). */
export async function fuzz(cases: Arbitrary<Case>, numRuns: number): Promise<void> {
  // A counterexample is shown as its request, abridged (a body or header can be hundreds of kilobytes).
  const shown = cases.map((c) => Object.assign(c, { [fc.toStringMethod]: () => describeProbe(c.probe) }));
  await fc.assert(fc.asyncProperty(shown, fire), { numRuns, endOnFailure: true });
}

/** The line each fuzz file logs when it is done: the requests this isolate (this test file) sent, and in how long. */
export function sentSummary(): string {
  return `fuzz: ${requestsSent} malformed requests in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
}
