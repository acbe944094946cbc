// Fuzzing every route with malformed requests (fast-check): random JSON, wrong types for each field of the bodies,
// huge strings, bytes that are not UTF-8, bad or missing headers, bad ids. Whatever arrives, the answer is never a
// 5xx: an error is a 4xx with the JSON error shape and the status and code the input calls for, and nothing changes.
// No task is created, a finished task and a waiting one read back exactly as before, and an unknown id's object
// stays empty.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import fc, { type Arbitrary } from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { registry } from "../src/agents/catalog.ts";
import {
  type ArtifactList,
  ArtifactListSchema,
  type CheckpointList,
  CheckpointListSchema,
  CheckpointSchema,
  DeliveryListSchema,
  ErrorBodySchema,
  MessageListSchema,
  type TaskResource,
  TaskResourceSchema,
  type WorkspaceList,
  WorkspaceListSchema,
} from "../src/http/responses.ts";
import { CreateTaskBody, ForkBody, ResumeBody, TaskIdParam, WorkspacePath } from "../src/http/schemas.ts";
import { MAX_BODY_BYTES } from "../src/http/validation.ts";
import { derivedTaskId } from "../src/tasks/task-ids.ts";
import {
  API_KEY,
  api,
  BASE,
  defineAgent,
  done,
  type EventBody,
  parseBody,
  parseEvent,
  readSse,
  script,
  startTask,
  stubFor,
  toolUse,
  UUID_V4,
  uniqueMarker,
  waitForTask,
} from "./helpers.ts";

// ---- Sending a request and judging the answer ------------------------------------------------------------------

type Header = readonly [name: string, value: string];

/** One request as the fuzzer builds it: the path is already percent-encoded where it is meant to be. */
interface Probe {
  method: string;
  path: string;
  headers: readonly Header[];
  body?: Uint8Array | undefined;
}

/** What the request calls for: the statuses it may get and, for an error, its codes and the field it names. */
interface Expected {
  status: readonly number[];
  codes?: readonly string[];
  field?: string;
  /** A 200 may be an SSE stream (a finished task's events, which ends after its last one). */
  stream?: boolean;
}

interface Case {
  probe: Probe;
  expected: Expected;
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const ERROR_KEYS = new Set(["code", "message", "request_id", "field"]);
const HOOK_BODY_LIMIT = 1024 * 1024;
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
async function fuzz(cases: Arbitrary<Case>, numRuns: number): Promise<void> {
  // A counterexample is shown as its request, abridged (a body or header can be hundreds of kilobytes).
  const shown = cases.map((c) => Object.assign(c, { [fc.toStringMethod]: () => describeProbe(c.probe) }));
  await fc.assert(fc.asyncProperty(shown, fire), { numRuns, endOnFailure: true });
}

// ---- Oracles: what the API documents for a given input ---------------------------------------------------------

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Headers drop leading and trailing spaces and tabs. */
function httpTrim(value: string): string {
  return value.replace(/^[\t ]+|[\t ]+$/g, "");
}

function headerValue(headers: readonly Header[], name: string): string | undefined {
  const values = headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => httpTrim(v));
  return values.length === 0 ? undefined : values.join(", ");
}

type BodyOutcome = { error: Expected } | { value: unknown };

/** Deepest nesting of arrays and objects in a JSON body, the body itself being level 1 (README, API limits). */
const MAX_JSON_DEPTH = 32;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The path of the first value (in document order) that any JSON body is refused for before its schema is read, or
 * null: an array or object past level 32, a string or key with a lone surrogate, a "__proto__" key. Recursion
 * stops at level 33, so a deep body cannot overflow the test's stack.
 */
function refusedField(value: unknown, path: readonly string[] = [], level = 1): string | null {
  const field = () => (path.length === 0 ? "(body)" : path.join("."));
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? field() : null;
  if (typeof value !== "object" || value === null) return null;
  if (level > MAX_JSON_DEPTH) return field();
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    if (LONE_SURROGATE.test(key) || key === "__proto__") return [...path, key].join(".");
    const found = refusedField(child, [...path, key], level + 1);
    if (found !== null) return found;
  }
  return null;
}

/**
 * A JSON body's fate: 415 unless JSON, 413 over 256 KiB, 400 invalid_json, 400 validation_failed (naming the field
 * for what every body is refused for, see refusedField), or its value.
 */
function jsonOutcome(headers: readonly Header[], body: Uint8Array | undefined, schema: z.ZodType): BodyOutcome {
  const type = headerValue(headers, "content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    return { error: { status: [415], codes: ["unsupported_media_type"], field: "content-type" } };
  }
  const declared = Number(headerValue(headers, "content-length"));
  const bytes = body ?? new Uint8Array();
  if ((Number.isFinite(declared) && declared > MAX_BODY_BYTES) || bytes.byteLength > MAX_BODY_BYTES) {
    return { error: { status: [413], codes: ["payload_too_large"] } };
  }
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(bytes));
  } catch {
    return { error: { status: [400], codes: ["invalid_json"] } };
  }
  const refused = refusedField(value);
  if (refused !== null) return { error: VALIDATION_FAILED(refused) };
  return schema.safeParse(value).success ? { value } : { error: { status: [400], codes: ["validation_failed"] } };
}

/** ?wait= takes a number of seconds from 0 to 60. */
function waitIsValid(value: string): boolean {
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= 60;
}

/** The SSE cursor: Last-Event-ID (trimmed) wins over ?after=; both are event sequence numbers of 1–15 digits. */
function cursorOf(lastEventId: string | undefined, after: string | undefined): number | { field: string } | null {
  if (lastEventId !== undefined)
    return /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : { field: "last-event-id" };
  if (after !== undefined) return /^\d{1,15}$/.test(after) ? Number(after) : { field: "after" };
  return null;
}

function isInvalidCursor(cursor: ReturnType<typeof cursorOf>): cursor is { field: string } {
  return cursor !== null && typeof cursor === "object";
}

/** What a resume the schema accepts is refused for before it reaches the task, if anything. */
function resumeRefusal(body: ResumeBody): Expected | null {
  if (body.tool_input !== undefined && body.action !== "modify") return VALIDATION_FAILED("tool_input");
  if (body.state_updates?.current_agent !== undefined) return VALIDATION_FAILED("state_updates.current_agent");
  return null;
}

const VALIDATION_FAILED = (field: string): Expected => ({ status: [400], codes: ["validation_failed"], field });
const NOT_FOUND = (code: string, field?: string): Expected => ({
  status: [404],
  codes: [code],
  ...(field === undefined ? {} : { field }),
});
const ROUTE_NOT_FOUND: Expected = { status: [404], codes: ["route_not_found"] };

/**
 * A known bug, tolerated so that everything else is still checked: the `{.+}` pattern of the artifacts/*path and
 * workspace/*path routes does not match line terminators, so a path holding one (a file named "a\nb.txt") gets
 * 404 route_not_found instead of the route's own answer.
 */
function orLineBreakBug(path: string, route: Expected): Expected {
  if (!/[\n\r\u2028\u2029]/.test(path)) return route;
  // (So the field is not checked: route_not_found names none.)
  return { status: [...route.status, 404], codes: [...(route.codes ?? []), "route_not_found"] };
}
const OK: Expected = { status: [200] };

// ---- Arbitraries ------------------------------------------------------------------------------------------------

/**
 * Characters a header value can carry here: printable ASCII and tabs. (workerd sends any other character as UTF-8,
 * with a warning for each, so a test client cannot put bytes that are not UTF-8 in a header.)
 */
const headerChar = fc
  .oneof({ weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 1, arbitrary: fc.constant(0x09) })
  .map((code) => String.fromCharCode(code));
const headerText = fc.string({ unit: headerChar, maxLength: 48 });
const hugeHeader = fc.integer({ min: 4_096, max: 64 * 1024 }).map((n) => "h".repeat(n));
const anyHeaderValue = fc.oneof({ weight: 8, arbitrary: headerText }, { weight: 1, arbitrary: hugeHeader });

const lonelySurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
/** Anything a string can hold: ASCII, any code point, graphemes, and halves of surrogate pairs. */
const wildText = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: fc.oneof(fc.string({ minLength: 1, maxLength: 1 }), lonelySurrogate), maxLength: 12 }),
);

/** Percent-encodes one path segment; a lone surrogate becomes its (invalid) three-byte UTF-8 form. */
function encodeSegment(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join("");
    } else out += encodeURIComponent(char);
  }
  return out;
}

/** Segments a URL keeps as they are: "." and ".." (even percent-encoded) are resolved away by the URL parser. */
const isDotSegment = (value: string) => /^(\.|%2e){1,2}$/i.test(value);

const PERCENT_MESS = [
  "%",
  "%Z",
  "%ZZ",
  "%00",
  "%FF",
  "%C0%AF",
  "%E2%82",
  "%ED%A0%80",
  "%F4%90%80%80",
  "%2F",
  "%5C",
  "%25",
];

/** A task id that is wrong in every way but one: it keeps to its path segment (so the route is the intended one). */
const badIdText = fc.oneof(
  wildText,
  fc.uuid({ version: [1, 2, 3, 5, 6, 7, 8] }),
  fc.uuid({ version: 4 }).map((id) => id.toUpperCase()),
  fc
    .uuid({ version: 4 })
    .chain((id) =>
      fc.constantFrom(
        `{${id}}`,
        ` ${id}`,
        `${id}\n`,
        `${id}0`,
        id.slice(1),
        id.replaceAll("-", ""),
        `${id}/..`,
        `urn:uuid:${id}`,
      ),
    ),
  fc.constantFrom(
    "../",
    "..%2f",
    "../../v1/tenant",
    "....//",
    "\\..\\",
    "%2e%2e",
    "null",
    "undefined",
    "0",
    "-1",
    "[]",
    "{}",
  ),
  fc.integer({ min: 256, max: 12_000 }).map((n) => "a".repeat(n)),
);

/** An id segment, encoded, with the id the Worker reads from it (undefined when percent-decoding cannot recover it). */
interface IdSegment {
  segment: string;
  id: string | undefined;
}

const encodedId = (text: Arbitrary<string>): Arbitrary<IdSegment> =>
  text
    .filter((value) => value.length > 0 && !isDotSegment(value))
    .map((value) => ({ segment: encodeSegment(value), id: /[\ud800-\udfff]/.test(value) ? undefined : value }));

const rawPercentId: Arbitrary<IdSegment> = fc
  .tuple(fc.constantFrom(...PERCENT_MESS), fc.string({ maxLength: 8 }).map(encodeSegment))
  .map(([mess, rest]) => ({ segment: mess + rest, id: undefined }));

// Authorization: the admin key (in its accepted spellings), the read-only key, and everything else.
type Auth = { kind: "admin" | "read" | "bad"; headers: Header[] };
const KNOWN_KEYS = [
  "test-key-1",
  "test-key-2",
  "test-read-key",
  "test-beta-key",
  "test-beta-admin",
  "test-limited-key",
  "test-run-key",
];

/** Whether a header would pass as some configured key (the generator of bad ones must never produce one). */
function acceptedKey(value: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(httpTrim(value));
  return match?.[1] !== undefined && KNOWN_KEYS.includes(match[1]);
}

const adminAuth: Arbitrary<Auth> = fc
  .constantFrom(`Bearer ${API_KEY}`, `bearer ${API_KEY}`, `BEARER   ${API_KEY}`, "Bearer test-key-2")
  .map((value) => ({ kind: "admin", headers: [["authorization", value]] }));
const readAuth: Arbitrary<Auth> = fc.constant({ kind: "read", headers: [["authorization", "Bearer test-read-key"]] });
const badAuth: Arbitrary<Auth> = fc
  .oneof(
    fc.constant<Header[]>([]),
    fc.constant<Header[]>([["x-api-key", API_KEY]]),
    fc.constant<Header[]>([
      ["authorization", `Bearer ${API_KEY}`],
      ["authorization", "Bearer nope"],
    ]),
    anyHeaderValue.map((value): Header[] => [["authorization", value]]),
    fc
      .constantFrom(
        "",
        API_KEY,
        "Bearer",
        "Bearer ",
        `Bearer ${API_KEY}x`,
        "Bearer test-key-",
        "Basic dGVzdC1rZXktMTo=",
        `Token ${API_KEY}`,
        "Bearer TEST-KEY-1",
        `Bearer ${API_KEY} ${API_KEY}`,
        `Bearer ${API_KEY},`,
        `Bearer "${API_KEY}"`,
        "Bearer test%2Dkey-1",
        `Bearer ${API_KEY}\t;`,
        `Bearer ${API_KEY}\u007f`,
        `Bearer=${API_KEY}`,
        `Bearer:${API_KEY}`,
        "Bearer test-key-3",
      )
      .map((value): Header[] => [["authorization", value]]),
    fc
      .tuple(fc.constantFrom(...KNOWN_KEYS), headerText)
      .map(([key, tail]): Header[] => [["authorization", `Bearer ${key}${tail.replace(/^[\t ]+/, "~")}`]]),
  )
  .filter((headers) => !headers.some(([name, value]) => name === "authorization" && acceptedKey(value)))
  .map((headers) => ({ kind: "bad", headers }));

const anyAuth = fc.oneof(
  { weight: 10, arbitrary: adminAuth },
  { weight: 2, arbitrary: readAuth },
  { weight: 3, arbitrary: badAuth },
);

const UNAUTHORIZED: Expected = { status: [401], codes: ["unauthorized"], field: "authorization" };
const FORBIDDEN: Expected = { status: [403], codes: ["insufficient_scope"], field: "authorization" };

/** Authentication and the method's scope come before any route on /v1. */
function guarded(auth: Auth, method: string, route: Expected, adminOnly = false): Expected {
  if (auth.kind === "bad") return UNAUTHORIZED;
  if (auth.kind === "read" && (adminOnly || (method !== "GET" && method !== "HEAD"))) return FORBIDDEN;
  return route;
}

/** Headers no route reads, or reads only to ignore. */
const IGNORED_HEADERS = fc.constantFrom<Header>(
  ["accept", "text/html"],
  ["accept", "*/*;q=0.x"],
  ["accept-encoding", "gzip, br"],
  ["content-encoding", "gzip"],
  ["content-encoding", "x-unknown"],
  ["cookie", "session=1; a=%C3"],
  ["origin", "https://evil.example"],
  ["range", "bytes=0-1"],
  ["if-none-match", "*"],
  ["x-forwarded-for", "127.0.0.1, ::1"],
  ["x-http-method-override", "DELETE"],
  ["expect", "100-continue"],
  ["user-agent", ""],
);
const noiseHeaders = fc.array(
  fc.oneof(
    IGNORED_HEADERS,
    fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), anyHeaderValue).map(([n, v]): Header => [n, v]),
  ),
  { maxLength: 2 },
);

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json;charset=latin1",
  "application/json-patch+json",
  "application/jsonx",
  "application/ json",
  "json",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "",
];
/** Mostly JSON (so the bodies get parsed), sometimes anything else or nothing. */
const contentType: Arbitrary<Header[]> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Header[]>([["content-type", "application/json"]]) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((v): Header[] => [["content-type", v]]) },
  { weight: 1, arbitrary: headerText.map((v): Header[] => [["content-type", v]]) },
  { weight: 1, arbitrary: fc.constant<Header[]>([]) },
);
const contentLength: Arbitrary<Header[]> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Header[]>([]) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("0", "-1", "abc", "1e9", "999999999999", String(MAX_BODY_BYTES + 1), " 5 ", "")
      .map((v): Header[] => [["content-length", v]]),
  },
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Long strings: past the 100,000 characters of an input, some past the body limit too. */
const longText = fc
  .tuple(fc.integer({ min: 100_001, max: 140_000 }), fc.constantFrom("x", " ", "\u00e9", "\u{1f600}", "\u0000"))
  .map(([n, char]) => char.repeat(n));

/** A value of the wrong type (or shape, or size) for any field. */
const wrongValue: Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 0.5, -0, 1e21, 2 ** 53 + 2, "", " ", "\u0000", "null", "1", "true"),
  fc.integer(),
  fc.double(),
  wildText,
  fc.array(anyJson, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }),
);
const maybe = <T>(valid: Arbitrary<T>) =>
  fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: wrongValue });

const numberish = maybe(
  fc.oneof(fc.integer({ min: -10, max: 2_000_000_000 }), fc.double(), fc.constantFrom(0, 1001, 3651, 100_001)),
);
const metadataish = maybe(
  fc.dictionary(fc.string({ maxLength: 70 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), anyJson), {
    maxKeys: 40,
  }),
);
const messageContent = maybe(
  fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.array(
      fc.record(
        { type: maybe(fc.constantFrom("text", "image", "tool_use", "tool_result")), text: maybe(fc.string()) },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  ),
);
const messagesOf = (roles: string[]) =>
  maybe(
    fc.array(fc.record({ role: maybe(fc.constantFrom(...roles)), content: messageContent }, { requiredKeys: [] }), {
      maxLength: 4,
    }),
  );
const stateUpdates = (roles: string[]) =>
  maybe(
    fc.record(
      { messages: messagesOf(roles), current_agent: maybe(fc.string({ maxLength: 70 })), metadata: metadataish },
      { requiredKeys: [] },
    ),
  );
const unknownFields = fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), anyJson, { maxKeys: 2 });

/** Objects with CreateTaskBody's fields, each of the right type or not, sometimes with fields it does not know. */
const createValues = fc
  .tuple(
    fc.record(
      {
        input: maybe(fc.string({ unit: "binary", maxLength: 30 })),
        metadata: metadataish,
        max_turns: numberish,
        max_iterations: numberish,
        max_budget_usd: numberish,
        max_tokens: numberish,
        tags: maybe(fc.array(fc.string({ maxLength: 40 }), { maxLength: 20 })),
        retention_days: numberish,
        webhook: maybe(
          fc.record(
            {
              url: maybe(fc.string()),
              events: maybe(fc.array(fc.constantFrom("completed", "failed", "started", ""), { maxLength: 6 })),
            },
            { requiredKeys: [] },
          ),
        ),
        files: maybe(fc.dictionary(wildText, maybe(fc.string()), { maxKeys: 4 })),
      },
      { requiredKeys: [] },
    ),
    fc.option(unknownFields, { nil: undefined }),
  )
  .map(([fields, extra]) => ({ ...extra, ...fields }));

const resumeValues = fc
  .tuple(
    fc.record(
      {
        action: maybe(fc.constantFrom("approve", "reject", "modify", "APPROVE", "cancel", "")),
        message: maybe(fc.string()),
        tool_input: maybe(fc.dictionary(fc.string(), anyJson, { maxKeys: 3 })),
        state_updates: stateUpdates(["user", "assistant", "system"]),
      },
      { requiredKeys: [] },
    ),
    fc.option(unknownFields, { nil: undefined }),
  )
  .map(([fields, extra]) => ({ ...extra, ...fields }));

/** A JSON body, sent as JSON. */
function asJson(value: unknown): Posted {
  return { headers: [["content-type", "application/json"]], body: utf8.encode(JSON.stringify(value)) };
}

/** One of these strings (a random UUID when there are none). */
function oneOf(values: readonly string[]): Arbitrary<string> {
  return values.length > 0 ? fc.constantFrom(...values) : fc.uuid();
}

/** Resumes the schema accepts: refused by a task that waits for nothing, and by keys that may not act. */
const wellFormedResume = fc.record(
  {
    action: fc.constantFrom("approve", "reject", "modify"),
    message: fc.string({ minLength: 1, maxLength: 40 }),
    tool_input: fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 }),
  },
  { requiredKeys: ["action"] },
);

function forkValues(checkpointIds: readonly string[]) {
  return fc
    .tuple(
      fc.record(
        {
          checkpoint_id: maybe(fc.oneof(fc.uuid(), oneOf(checkpointIds), fc.string())),
          state_updates: stateUpdates(["user", "assistant", "tool"]),
        },
        { requiredKeys: [] },
      ),
      fc.option(unknownFields, { nil: undefined }),
    )
    .map(([fields, extra]) => ({ ...extra, ...fields }));
}

/** Byte sequences that are not UTF-8: stray continuation bytes, overlong forms, surrogates, truncations, >U+10FFFF. */
const NOT_UTF8 = [[0xff], [0xfe], [0x80], [0xbf], [0xc3], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80]]
  .concat([
    [0xed, 0xbf, 0xbf],
    [0xe2, 0x82],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
  ])
  .map((bytes) => Uint8Array.from(bytes));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

const notUtf8Body = fc
  .tuple(fc.string({ maxLength: 20 }), fc.constantFrom(...NOT_UTF8), fc.string({ maxLength: 20 }), fc.boolean())
  .map(([before, bad, after, inString]) =>
    inString
      ? concat(utf8.encode(`{"input":"${before}`), bad, utf8.encode(`${after}"}`))
      : concat(utf8.encode(before), bad, utf8.encode(after)),
  );

/** Bodies around and past the 256 KiB limit: JSON with a long input, whitespace, or no JSON at all. */
const hugeBody = fc
  .record({
    size: fc.oneof(
      fc.constantFrom(MAX_BODY_BYTES, MAX_BODY_BYTES + 1),
      fc.integer({ min: MAX_BODY_BYTES - 4, max: 300 * 1024 }),
    ),
    shape: fc.constantFrom("input", "spaces", "raw"),
  })
  .map(({ size, shape }) => {
    if (shape === "spaces") return utf8.encode(`${" ".repeat(Math.max(0, size - 2))}{}`);
    if (shape === "raw") return utf8.encode("a".repeat(size));
    return utf8.encode(`{"input":"${"a".repeat(Math.max(0, size - 12))}"}`);
  });

const JSON_SYNTAX_ERRORS = [
  "",
  "{",
  "}",
  "[]",
  "null",
  "0",
  '""',
  "{}",
  '{"input":}',
  "{'input':'x'}",
  '{"input":"x",}',
  '{"input":"x"}{"input":"y"}',
  "NaN",
  "\ufeff{}",
  '{"__proto__":{"input":"x"}}',
  '{"constructor":{"prototype":{"input":"x"}}}',
  `${"[".repeat(5000)}${"]".repeat(5000)}`,
  `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`,
];

/** One field (a known one or not) set to a long string. */
function withLongField(values: Arbitrary<unknown>): Arbitrary<unknown> {
  return values.chain((value) => {
    const object = typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
    return fc
      .tuple(fc.constantFrom(...Object.keys(object), "input", "message"), longText)
      .map(([key, text]) => ({ ...object, [key]: text }));
  });
}

/** Request bodies: values of the schema's fields, any JSON, broken JSON, not UTF-8, random bytes, huge, or none. */
function bodies(values: Arbitrary<unknown>): Arbitrary<Uint8Array | undefined> {
  return fc.oneof(
    { weight: 10, arbitrary: values.map((v) => utf8.encode(JSON.stringify(v))) },
    { weight: 2, arbitrary: anyJson.map((v) => utf8.encode(JSON.stringify(v))) },
    {
      weight: 1,
      arbitrary: values.chain((v) => {
        const text = JSON.stringify(v);
        return fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => utf8.encode(text.slice(0, n)));
      }),
    },
    { weight: 1, arbitrary: fc.constantFrom(...JSON_SYNTAX_ERRORS).map((t) => utf8.encode(t)) },
    { weight: 2, arbitrary: notUtf8Body },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 64 }).map((t) => utf8.encode(t)) },
    { weight: 1, arbitrary: hugeBody },
    { weight: 1, arbitrary: withLongField(values).map((v) => utf8.encode(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** A POST with a JSON body: its headers (content type, maybe a wrong length, noise) and the body. */
interface Posted {
  headers: Header[];
  body: Uint8Array | undefined;
  /** A body the schema accepts, built to fail a later check: the code it must be refused with. */
  semantic?: string;
}
const posted = (values: Arbitrary<unknown>): Arbitrary<Posted> =>
  fc
    .tuple(contentType, contentLength, noiseHeaders, bodies(values))
    .map(([type, length, noise, body]) => ({ headers: [...type, ...length, ...noise], body }));

/** A query string: one value for `name` (percent-encoded, raw, repeated or empty), or none at all. */
function queryFor(name: string, values: Arbitrary<string>): Arbitrary<{ query: string; value: string | undefined }> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant({ query: "", value: undefined }) },
    { weight: 4, arbitrary: values.map((v) => ({ query: `?${name}=${encodeSegment(v)}`, value: v })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { query: `?${name}`, value: "" },
        { query: `?${name}=`, value: "" },
        { query: `?${name}=1&${name}=abc`, value: "1" },
        { query: `?${name}=+1`, value: " 1" },
        { query: `?${name}=%`, value: "%" },
        { query: `?${name}=%ZZ`, value: "%ZZ" },
        { query: `?${name.toUpperCase()}=x`, value: undefined },
        { query: `?other=1&${name}=2`, value: "2" },
      ),
    },
  );
}

const numberText = fc.oneof(
  fc.nat().map(String),
  fc.double().map(String),
  fc.integer({ min: -100, max: 100 }).map(String),
  fc.constantFrom("", " 5", "5 ", "1e1", "1e3", "0x10", "0b1", "+1", "-0", "9".repeat(15), "9".repeat(16), "00000"),
  fc.constantFrom("NaN", "Infinity", "-Infinity", "١٢", "５", "60.0000001", "1_000", "0.5", ".5", "5.", "1,5"),
  fc.string({ unit: "binary", maxLength: 10 }),
);
/** Last-Event-ID values (header-safe: no control characters but tabs). */
const cursorHeaderText = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom("", " 5", "5 ", "\t5", "5\t", "1e3", "0x10", "+1", "-1", "9".repeat(15), "9".repeat(16)),
  headerText,
);

const WRONG_METHODS = ["PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "patch", "MKCOL"];

// ---- Bodies refused whatever the route: too deep, lone surrogates, "__proto__" keys, seed files past the limit ----

type Key = string | number;

/** Sets an own property, "__proto__" included (an assignment to "__proto__" would set the prototype instead). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of `body` with `value` at `path`, making the objects and arrays on the way (a number is an index). */
function placed(body: unknown, path: readonly Key[], value: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  if (typeof key === "number") {
    const list: unknown[] = Array.isArray(body) ? [...body] : [];
    while (list.length < key) list.push(0);
    list[key] = placed(list[key], rest, value);
    return list;
  }
  const object: Record<string, unknown> =
    typeof body === "object" && body !== null && !Array.isArray(body) ? { ...body } : {};
  setOwn(object, key, placed(object[key], rest, value));
  return object;
}

/** The value at `path`, or undefined. */
function valueAt(body: unknown, path: readonly Key[]): unknown {
  let at: unknown = body;
  for (const key of path) at = typeof at === "object" && at !== null ? (at as Record<Key, unknown>)[key] : undefined;
  return at;
}

/** A body that is fine as it is, and the places in it where a defect goes. */
interface Target {
  base: unknown;
  slots: Key[][];
}

/** One level of a deeply nested value: an object's only key, or an array's last index (after clean items). */
type DeepStep = { key: string } | { index: number };

/** What is wrong with a body, put at one place in it. */
type Defect =
  | { kind: "deep"; steps: DeepStep[]; tail: number }
  | { kind: "surrogate"; text: string }
  | { kind: "surrogate_key"; key: string; value: unknown }
  | { kind: "proto"; value: unknown; before: boolean };

const DEEP_PLACEHOLDER = "\u0001deep\u0001";

/** JSON text of the nested value, built without recursion: `steps` levels, then `tail` levels of arrays. */
function deepText(steps: readonly DeepStep[], tail: number): string {
  const open: string[] = [];
  const close: string[] = [];
  for (const step of steps) {
    open.push("key" in step ? `{${JSON.stringify(step.key)}:` : `[${"0,".repeat(step.index)}`);
    close.push("key" in step ? "}" : "]");
  }
  return `${open.join("")}${"[".repeat(tail)}1${"]".repeat(tail)}${close.reverse().join("")}`;
}

/**
 * `base` with the defect at `slot`, as JSON bytes, and the field the API must name: the path of the value (deep:
 * of the first array or object past level 32; a key defect: of the key, added to the object at `slot`).
 */
function withDefect(base: unknown, slot: readonly Key[], defect: Defect): { body: Uint8Array; field: string } {
  const name = (path: readonly Key[]) => (path.length === 0 ? "(body)" : path.join("."));
  switch (defect.kind) {
    case "deep": {
      // The value at the slot is at level slot.length + 1; the level-33 one is reached through 32 - slot.length steps.
      const inner = defect.steps.slice(0, MAX_JSON_DEPTH - slot.length).map((s) => ("key" in s ? s.key : s.index));
      const text = JSON.stringify(placed(base, slot, DEEP_PLACEHOLDER)).replace(JSON.stringify(DEEP_PLACEHOLDER), () =>
        deepText(defect.steps, defect.tail),
      );
      return { body: utf8.encode(text), field: name([...slot, ...inner]) };
    }
    case "surrogate":
      return { body: utf8.encode(JSON.stringify(placed(base, slot, defect.text))), field: name(slot) };
    case "surrogate_key":
    case "proto": {
      const key = defect.kind === "proto" ? "__proto__" : defect.key;
      const existing = valueAt(base, slot);
      const object: Record<string, unknown> =
        typeof existing === "object" && existing !== null && !Array.isArray(existing) ? { ...existing } : {};
      if (defect.kind === "proto" && defect.before) setOwn(object, "note", "kept");
      setOwn(object, key, defect.value);
      return { body: utf8.encode(JSON.stringify(placed(base, slot, object))), field: name([...slot, key]) };
    }
  }
}

const cleanText = fc.string({ maxLength: 8 });
const cleanValue = fc.oneof(
  cleanText,
  fc.integer(),
  fc.constant(null),
  fc.dictionary(cleanText, cleanText, { maxKeys: 2 }),
);
const deepStep: Arbitrary<DeepStep> = fc.oneof(
  fc.string({ maxLength: 5 }).map((key) => ({ key })),
  fc.nat({ max: 3 }).map((index) => ({ index })),
);
/** A text with one half of a surrogate pair, alone, anywhere in it. */
const surrogateText = fc
  .tuple(cleanText, lonelySurrogate, cleanText)
  .map(([before, half, after]) => `${before}${half}${after}`);
const defect: Arbitrary<Defect> = fc.oneof(
  fc.record({
    kind: fc.constant("deep" as const),
    // At least 33 levels below any slot; sometimes thousands more, as a stack-overflow attempt would send.
    steps: fc.array(deepStep, { minLength: 33, maxLength: 60 }),
    tail: fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 200 }) }, { weight: 1, arbitrary: fc.constant(60_000) }),
  }),
  fc.record({ kind: fc.constant("surrogate" as const), text: surrogateText }),
  fc.record({ kind: fc.constant("surrogate_key" as const), key: surrogateText, value: cleanValue }),
  fc.record({ kind: fc.constant("proto" as const), value: cleanValue, before: fc.boolean() }),
);

/**
 * Seed files whose folders take the workspace past its 10,000 files and folders (MAX_WORKSPACE_ENTRIES): each file
 * has its own top folder and `depth` folders in all, so file k (from 1) brings the count to k × (depth + 1); the
 * field names the first file past the limit.
 */
const overflowingFiles = fc
  .record({
    count: fc.integer({ min: 400, max: 500 }),
    depth: fc.integer({ min: 25, max: 40 }),
    salt: fc.nat({ max: 96 }),
    prefix: fc.constantFrom("", "/workspace/"),
  })
  .map(({ count, depth, salt, prefix }) => {
    const files: Record<string, string> = {};
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const folders = Array.from({ length: depth - 1 }, (_, j) => `s${(i * 31 + j * 7 + salt) % 97}`);
      const name = `${prefix}t${i}/${folders.join("/")}/f.txt`;
      files[name] = "x";
      names.push(name);
    }
    const first = names[Math.floor(10_000 / (depth + 1))] ?? "";
    return { files, field: `files.${first}` };
  });

// ---- The tasks under test ---------------------------------------------------------------------------------------

/** Everything the API says about a task, read twice to compare. */
interface Snapshot {
  task: TaskResource;
  reads: Record<string, unknown>;
  events: EventBody[];
  alarm: number | null;
}

/** A read that must succeed, its body checked against its response schema. */
async function readJson<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const res = await api(path);
  expect(res.status, path).toBe(200);
  return parseBody(res, schema);
}

/** What each of a task's listings is read with. */
const LISTINGS = {
  messages: MessageListSchema,
  checkpoints: CheckpointListSchema,
  deliveries: DeliveryListSchema,
  artifacts: ArtifactListSchema,
  workspace: WorkspaceListSchema,
} as const;

async function snapshotOf(id: string): Promise<Snapshot> {
  const task = await readJson(`/v1/tasks/${id}`, TaskResourceSchema);
  const reads: Record<string, unknown> = {};
  for (const [what, schema] of Object.entries(LISTINGS)) {
    reads[what] = await readJson(`/v1/tasks/${id}/${what}`, schema);
  }
  const list = reads.checkpoints as CheckpointList;
  for (const { checkpoint_id } of list.checkpoints) {
    reads[`checkpoint ${checkpoint_id}`] = await readJson(
      `/v1/tasks/${id}/checkpoints/${checkpoint_id}`,
      CheckpointSchema,
    );
  }
  const last = task.last_event_seq;
  // A waiting task's stream stays open: read up to its newest event.
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), (f) => parseEvent(f.data).seq >= last);
  const alarm = await runInDurableObject(stubFor(id), (_instance, state) => state.storage.getAlarm());
  return { task, reads, events: frames.map((f) => parseEvent(f.data)), alarm };
}

/** Whether the object of this task id holds anything at all (an unknown id must not even get a schema). */
async function tablesOf(id: string): Promise<unknown[]> {
  return runInDurableObject(stubFor(id), (_instance, state) =>
    state.storage.sql.exec("SELECT name FROM sqlite_master").toArray(),
  );
}

interface TaskUnderTest {
  id: string;
  snapshot: Snapshot;
  checkpointIds: string[];
  /** Checkpoints between a model turn and its tool calls (a fork from one cannot add messages). */
  betweenCalls: string[];
  artifactPaths: string[];
  /** Its workspace files, as store paths ("/notes/readme.md"). */
  files: string[];
}

async function underTest(id: string): Promise<TaskUnderTest> {
  // The first read of a finished task's artifacts completes its bundle; the snapshot is taken after that.
  await readJson(`/v1/tasks/${id}/artifacts`, ArtifactListSchema);
  const snapshot = await snapshotOf(id);
  const { checkpoints } = snapshot.reads.checkpoints as CheckpointList;
  const { artifacts } = snapshot.reads.artifacts as ArtifactList;
  const workspace = snapshot.reads.workspace as WorkspaceList;
  return {
    id,
    snapshot,
    checkpointIds: checkpoints.map((c) => c.checkpoint_id),
    betweenCalls: checkpoints.filter((c) => c.next_action === "tool_calls").map((c) => c.checkpoint_id),
    artifactPaths: artifacts.map((a) => a.path),
    files: workspace.files.filter((f) => f.type === "file").map((f) => `/${f.path}`),
  };
}

async function expectUnchanged(task: TaskUnderTest): Promise<void> {
  expect(await snapshotOf(task.id)).toStrictEqual(task.snapshot);
}

const SEEDED_FILE = "notes/readme.md";
const GHOST = crypto.randomUUID();
const hookSuffix = crypto.randomUUID().slice(0, 8);
const STANDARD_HOOK = `fuzz-standard-${hookSuffix}`;
const GITHUB_HOOK = `fuzz-github-${hookSuffix}`;
const reviewed = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
defineAgent({
  hooks: {
    [STANDARD_HOOK]: { scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "Fuzz {{payload}}" },
    [GITHUB_HOOK]: { scheme: "github", secret: "TEST_GITHUB_HOOK_SECRET", input: "Fuzz {{payload}}" },
  },
});

let finished: TaskUnderTest;
let waiting: TaskUnderTest;

beforeAll(async () => {
  const marker = uniqueMarker("fuzz-finished");
  await script(marker, [{ content: [{ type: "text", text: "Read and summarized." }] }]);
  const first = await startTask("assistant", `Summarize ${marker}`, {
    files: { [SEEDED_FILE]: "# Fuzz\n" },
    metadata: { suite: "fuzz" },
  });
  const waitMarker = uniqueMarker("fuzz-waiting");
  await script(waitMarker, [
    { content: [toolUse("TodoWrite", { todos: [{ content: "Hold", status: "pending" }] })], stop_reason: "tool_use" },
    done,
  ]);
  const second = await startTask(reviewed, `plan ${waitMarker}`);
  expect((await waitForTask(first.id)).status).toBe("completed");
  expect((await waitForTask(second.id)).status).toBe("input_required");
  finished = await underTest(first.id);
  waiting = await underTest(second.id);
});

afterAll(() => {
  console.info(`fuzz: ${requestsSent} malformed requests in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
});

// ---- The routes -------------------------------------------------------------------------------------------------

/** Cases against one task's routes; `mode` keeps requests that would act on a waiting task out. */
function taskCases(task: TaskUnderTest, mode: "finished" | "waiting"): Arbitrary<Case> {
  const base = `/v1/tasks/${task.id}`;
  const lastSeq = task.snapshot.task.last_event_seq;
  const isWaiting = mode === "waiting";
  const withAuth = (auth: Arbitrary<Auth>, build: (auth: Auth) => Arbitrary<Case>): Arbitrary<Case> =>
    auth.chain(build);

  const getTask = withAuth(anyAuth, (auth) =>
    fc.tuple(queryFor("wait", numberText), noiseHeaders).map(([{ query, value }, noise]) => ({
      probe: { method: "GET", path: base + query, headers: [...auth.headers, ...noise] },
      expected: guarded(auth, "GET", value === undefined || waitIsValid(value) ? OK : VALIDATION_FAILED("wait")),
    })),
  );

  const eventStream = withAuth(anyAuth, (auth) =>
    fc
      .tuple(fc.option(cursorHeaderText, { nil: undefined }), queryFor("after", numberText), noiseHeaders)
      .filter(([header, { value }]) => !isWaiting || isInvalidCursor(cursorOf(header, value)))
      .map(([header, { query, value }, noise]): Case => {
        const cursor = cursorOf(header, value);
        const route: Expected = isInvalidCursor(cursor)
          ? VALIDATION_FAILED(cursor.field)
          : { status: [(cursor ?? 0) >= lastSeq ? 204 : 200], stream: true };
        const headers: Header[] = [...auth.headers, ...noise];
        if (header !== undefined) headers.push(["last-event-id", header]);
        return {
          probe: { method: "GET", path: `${base}/events${query}`, headers },
          expected: guarded(auth, "GET", route),
        };
      }),
  );

  // A waiting task is canceled by any admin request: only keys that may not act get to try.
  const cancel = withAuth(isWaiting ? fc.oneof(readAuth, badAuth) : anyAuth, (auth) =>
    posted(anyJson).map(({ headers, body }) => ({
      probe: { method: "POST", path: `${base}/cancel`, headers: [...auth.headers, ...headers], body },
      expected: guarded(auth, "POST", { status: [409], codes: ["task_already_finished"] }),
    })),
  );

  const resume = withAuth(anyAuth, (auth) =>
    fc
      .oneof(
        { weight: 6, arbitrary: posted(resumeValues) },
        {
          weight: 2,
          arbitrary: fc
            .oneof(
              wellFormedResume,
              fc.constantFrom<unknown>(
                { action: "modify" },
                { action: "approve", state_updates: { current_agent: "assistant" } },
                { action: "reject", message: "no", state_updates: { current_agent: "" } },
              ),
            )
            .map(asJson),
        },
      )
      .map(({ headers, body }) => {
        const outcome = jsonOutcome(headers, body, ResumeBody);
        let route: Expected;
        if ("error" in outcome) route = outcome.error;
        else {
          const value = outcome.value as ResumeBody;
          // A task waiting for an approval refuses modify without new arguments; one that waits for nothing, all.
          const unmodified = value.action === "modify" && !value.tool_input && !value.state_updates;
          route =
            resumeRefusal(value) ??
            (isWaiting && unmodified
              ? VALIDATION_FAILED("tool_input")
              : { status: [409], codes: ["task_not_waiting"] });
        }
        return {
          probe: { method: "POST", path: `${base}/resume`, headers: [...auth.headers, ...headers], body },
          expected: guarded(auth, "POST", route),
        };
      })
      // A resume that would be accepted must never reach a waiting task (it would resume it).
      .filter(({ expected }) => !isWaiting || !expected.status.includes(409)),
  );

  const unregistered = wildText.filter((name) => !registry.has(name));
  const fork = withAuth(anyAuth, (auth) =>
    fc
      .oneof(
        { weight: 6, arbitrary: posted(forkValues(task.checkpointIds)) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              oneOf(task.checkpointIds),
              unregistered.filter((n) => n.length > 0 && n.length <= 64),
            )
            .map(([checkpoint_id, current_agent]) => asJson({ checkpoint_id, state_updates: { current_agent } })),
        },
        // Messages cannot join a conversation between a model turn and its tool calls.
        ...(task.betweenCalls.length === 0
          ? []
          : [
              fc
                .tuple(
                  oneOf(task.betweenCalls),
                  fc.array(
                    fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.string({ minLength: 1 }) }),
                    { minLength: 1, maxLength: 3 },
                  ),
                )
                .map(([checkpoint_id, messages]) => asJson({ checkpoint_id, state_updates: { messages } })),
            ]),
      )
      .map(({ headers, body }) => {
        const outcome = jsonOutcome(headers, body, ForkBody);
        let route: Expected;
        if ("error" in outcome) route = outcome.error;
        else {
          const { checkpoint_id, state_updates } = outcome.value as ForkBody;
          const agent = state_updates?.current_agent;
          if (!task.checkpointIds.includes(checkpoint_id)) route = NOT_FOUND("checkpoint_not_found", "checkpoint_id");
          else if (agent !== undefined && !registry.has(agent))
            route = NOT_FOUND("agent_not_found", "state_updates.current_agent");
          else if (task.betweenCalls.includes(checkpoint_id) && state_updates?.messages?.length)
            route = VALIDATION_FAILED("state_updates.messages");
          else route = { status: [202] };
        }
        return {
          probe: { method: "POST", path: `${base}/fork`, headers: [...auth.headers, ...headers], body },
          expected: guarded(auth, "POST", route),
        };
      })
      // A fork that would be accepted creates a task: never send one.
      .filter(({ expected }) => !expected.status.includes(202)),
  );

  const segment = encodedId(badIdText).filter(({ id }) => id === undefined || !task.checkpointIds.includes(id));
  const checkpoint = withAuth(anyAuth, (auth) =>
    fc.tuple(fc.oneof(segment, rawPercentId), noiseHeaders).map(([{ segment: s }, noise]) => ({
      probe: { method: "GET", path: `${base}/checkpoints/${s}`, headers: [...auth.headers, ...noise] },
      expected: guarded(auth, "GET", NOT_FOUND("checkpoint_not_found", "checkpoint_id")),
    })),
  );

  const redeliver = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.oneof(
          segment,
          rawPercentId,
          fc.uuid().map((id) => ({ segment: id, id })),
        ),
        posted(anyJson),
      )
      .map(([{ segment: s }, { headers, body }]) => ({
        probe: {
          method: "POST",
          path: `${base}/deliveries/${s}/redeliver`,
          headers: [...auth.headers, ...headers],
          body,
        },
        expected: guarded(auth, "POST", NOT_FOUND("delivery_not_found", "delivery_id")),
      })),
  );

  // File paths: segments of anything but "." and "..", joined; what the Worker reads is their decoded join.
  const pathSegment = fc
    .oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.constantFrom(
        "events.jsonl",
        "notes",
        "readme.md",
        "workspace",
        "artifacts",
        "%",
        "\\",
        "...",
        "a\u0000b",
        "a\nb.txt",
      ),
    )
    .filter((s) => !isDotSegment(s));
  const filePath = fc.oneof(
    fc.array(pathSegment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/")),
    fc.constantFrom(SEEDED_FILE, `/workspace/${SEEDED_FILE}`, "notes", "workspace", "/workspace", "//x", "a//b"),
    oneOf(task.artifactPaths),
    fc.integer({ min: 513, max: 3_000 }).map((n) => "p".repeat(n)),
  );
  const encodePath = (path: string) => path.split("/").map(encodeSegment).join("/");

  const artifact = withAuth(anyAuth, (auth) =>
    fc
      .tuple(filePath, noiseHeaders)
      .filter(([path]) => path.length > 0)
      .map(([path, noise]) => {
        const valid = path.length <= 512 && path.split("/").every((s) => s.length > 0 && s !== "." && s !== "..");
        const route: Expected = !valid
          ? VALIDATION_FAILED("path")
          : task.artifactPaths.includes(path)
            ? OK
            : NOT_FOUND("artifact_not_found", "path");
        return {
          probe: { method: "GET", path: `${base}/artifacts/${encodePath(path)}`, headers: [...auth.headers, ...noise] },
          expected: guarded(auth, "GET", orLineBreakBug(path, route)),
        };
      }),
  );

  const workspaceFile = withAuth(anyAuth, (auth) =>
    fc
      .tuple(filePath, noiseHeaders)
      .filter(([path]) => path.length > 0)
      .map(([path, noise]) => {
        const parsed = WorkspacePath.safeParse(path);
        const route: Expected = !parsed.success
          ? VALIDATION_FAILED("path")
          : task.files.includes(parsed.data)
            ? OK
            : NOT_FOUND("workspace_file_not_found", "path");
        return {
          probe: { method: "GET", path: `${base}/workspace/${encodePath(path)}`, headers: [...auth.headers, ...noise] },
          expected: guarded(auth, "GET", orLineBreakBug(path, route)),
        };
      }),
  );

  const lists = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.constantFrom("messages", "checkpoints", "deliveries", "artifacts", "workspace"),
        fc.oneof(queryFor("page", numberText), queryFor("wait", numberText)),
        fc.constantFrom("GET", "HEAD"),
        noiseHeaders,
      )
      .map(([what, { query }, method, noise]) => ({
        probe: { method, path: `${base}/${what}${query}`, headers: [...auth.headers, ...noise] },
        expected: guarded(auth, method, OK),
      })),
  );

  const wrongMethod = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.constantFrom("", "/messages", "/events", "/cancel", "/checkpoints", "/fork", "/resume", "/workspace"),
        fc.constantFrom(...WRONG_METHODS),
      )
      .map(([suffix, method]) => ({
        probe: { method, path: base + suffix, headers: auth.headers },
        expected: guarded(auth, method, ROUTE_NOT_FOUND),
      })),
  );

  return fc.oneof(
    getTask,
    eventStream,
    cancel,
    { weight: 2, arbitrary: resume },
    { weight: 2, arbitrary: fork },
    checkpoint,
    redeliver,
    artifact,
    workspaceFile,
    lists,
    wrongMethod,
  );
}

describe("fuzzing the API with malformed requests", () => {
  it("answers every request to a finished task with a 4xx (or its data) and leaves the task as it was", async () => {
    await fuzz(taskCases(finished, "finished"), 900);
    await expectUnchanged(finished);
  }, 60_000);

  it("refuses every malformed resume, fork and unauthorized act on a waiting task, which keeps waiting", async () => {
    await fuzz(taskCases(waiting, "waiting"), 600);
    await expectUnchanged(waiting);
    const now = await readJson(`/v1/tasks/${waiting.id}`, TaskResourceSchema);
    expect(now.status).toBe("input_required");
    expect(now.pending_input).toMatchObject({ kind: "approval", tool_name: "TodoWrite" });
  }, 60_000);

  it("answers a malformed or unknown task id with 404 task_not_found on every route, writing nothing", async () => {
    const routes = ["", "/messages", "/events", "/cancel", "/checkpoints", "/checkpoints/x", "/fork", "/resume"]
      .concat(["/deliveries", "/deliveries/x/redeliver", "/artifacts", "/artifacts/events.jsonl", "/workspace"])
      .concat(["/workspace/a.txt"]);
    const POSTS = new Set(["/cancel", "/fork", "/resume", "/deliveries/x/redeliver"]);
    const ids = fc.oneof(
      { weight: 4, arbitrary: encodedId(badIdText) },
      { weight: 1, arbitrary: rawPercentId },
      { weight: 2, arbitrary: fc.constant<IdSegment>({ segment: GHOST, id: GHOST }) },
      { weight: 1, arbitrary: fc.uuid({ version: 4 }).map((id) => ({ segment: id, id })) },
    );
    const cases = fc
      .tuple(
        anyAuth,
        ids,
        fc.constantFrom(...routes),
        posted(fc.oneof(resumeValues, forkValues([]))),
        queryFor("wait", numberText),
      )
      .map(([auth, { segment, id }, suffix, { headers, body }, { query, value }]): Case => {
        const method = POSTS.has(suffix) ? "POST" : "GET";
        // The id is checked first: a malformed one (or one whose percent-encoding is broken) is simply not found.
        const wellFormed = id !== undefined && TaskIdParam.safeParse(id).success;
        let route: Expected = NOT_FOUND("task_not_found", "id");
        if (wellFormed && suffix === "" && value !== undefined && !waitIsValid(value))
          route = VALIDATION_FAILED("wait");
        if (wellFormed && (suffix === "/fork" || suffix === "/resume")) {
          const outcome = jsonOutcome(headers, body, suffix === "/fork" ? ForkBody : ResumeBody);
          if ("error" in outcome) route = outcome.error;
          else if (suffix === "/resume") route = resumeRefusal(outcome.value as ResumeBody) ?? route;
        }
        const path = `/v1/tasks/${segment}${suffix}${suffix === "" ? query : ""}`;
        return method === "POST"
          ? {
              probe: { method, path, headers: [...auth.headers, ...headers], body },
              expected: guarded(auth, method, route),
            }
          : { probe: { method, path, headers: auth.headers }, expected: guarded(auth, method, route) };
      });
    await fuzz(cases, 600);
    expect(await tablesOf(GHOST)).toEqual([]);
  }, 60_000);

  it("refuses malformed task creations with 400, 413 or 415, and creates no task", async () => {
    const idempotencyKeys = new Set<string>();
    const idempotencyKey = fc.oneof(
      { weight: 3, arbitrary: fc.constant<Header[]>([]) },
      {
        weight: 2,
        arbitrary: fc
          .stringMatching(/^[\x21-\x7e]{1,40}$/)
          .map((key): Header[] => [["idempotency-key", `fuzz-${key}`]]),
      },
      {
        weight: 1,
        arbitrary: fc
          .oneof(headerText, fc.constant("k".repeat(256)), fc.constant("a b"), fc.constant(""))
          .map((key): Header[] => [["idempotency-key", key]]),
      },
    );
    // Bodies that pass the schema but not the checks after it: bad workspace paths and callback URLs.
    const BAD_FILES = ["../x", "/etc/passwd", "/workspace", "a/../../b", " ", "a\u0000b", "/workspace/../x"];
    const BAD_URLS = ["ftp://example.com/x", "javascript:alert(1)", "not a url", "http://example.com/cb"]
      .concat(["https://10.0.0.1/cb", "https://[::1]/", "https://localhost/", "https://169.254.169.254/latest"])
      .concat(["file:///etc/passwd", "https://0.0.0.0/", "https://192.168.1.1:8443/", "data:text/plain,hi"]);
    const semantic = fc
      .oneof(
        fc.constantFrom(...BAD_FILES).map((path) => ({ files: { [path]: "x" } })),
        fc.constant({ files: { "a.txt": "1", "/workspace/a.txt": "2" } }),
        fc.constant({ files: { a: "1", "a/b": "2" } }),
        fc.constantFrom(...BAD_URLS).map((url) => ({ webhook: { url } })),
      )
      .map(
        (extra): Posted => ({
          headers: [["content-type", "application/json"]],
          body: utf8.encode(JSON.stringify({ input: "Never run: fuzz", ...extra })),
          semantic: "files" in extra ? "validation_failed" : "invalid_callback_url",
        }),
      );
    const cases = fc
      .tuple(
        anyAuth,
        fc.constantFrom("assistant", "coder", "planner", reviewed),
        fc.oneof({ weight: 12, arbitrary: posted(createValues) }, { weight: 1, arbitrary: semantic }),
        idempotencyKey,
      )
      // Only bodies the schema refuses, or the semantic ones above (every one of which must be refused too).
      .filter(
        ([, , { headers, body, semantic }]) =>
          semantic !== undefined || "error" in jsonOutcome(headers, body, CreateTaskBody),
      )
      .map(([auth, agent, { headers, body, semantic }, key]): Case => {
        const outcome = jsonOutcome(headers, body, CreateTaskBody);
        const route: Expected = "error" in outcome ? outcome.error : { status: [400], codes: [semantic ?? "?"] };
        return {
          probe: {
            method: "POST",
            path: `/v1/agents/${agent}/tasks`,
            headers: [...auth.headers, ...headers, ...key],
            body,
          },
          expected: guarded(auth, "POST", route),
        };
      });
    await fuzz(
      cases.map((c) => {
        const key = headerValue(c.probe.headers, "idempotency-key");
        if (key !== undefined && /^[\x21-\x7e]{1,255}$/.test(key)) idempotencyKeys.add(key);
        return c;
      }),
      900,
    );
    // Had any of them created a task, its key would now name it.
    expect(idempotencyKeys.size).toBeGreaterThan(50);
    for (const key of idempotencyKeys) {
      const id = await derivedTaskId("idempotency", "default", key);
      const res = await api(`/v1/tasks/${id}`);
      expect(res.status, `Idempotency-Key ${key}`).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);

  it("answers agent names that are not registered with 404 agent_not_found, before reading any body", async () => {
    const names = fc.oneof(
      {
        weight: 6,
        arbitrary: encodedId(fc.oneof(wildText, badIdText)).filter(({ id }) => id === undefined || !registry.has(id)),
      },
      { weight: 1, arbitrary: rawPercentId },
      { weight: 1, arbitrary: fc.constantFrom("assistant", "coder", "planner").map((id) => ({ segment: id, id })) },
    );
    const cases = fc
      .tuple(anyAuth, names, fc.boolean(), posted(createValues))
      .map(([auth, { segment, id }, create, { headers, body }]): Case => {
        const registered = id !== undefined && registry.has(id);
        if (create && !registered) {
          return {
            probe: {
              method: "POST",
              path: `/v1/agents/${segment}/tasks`,
              headers: [...auth.headers, ...headers],
              body,
            },
            expected: guarded(auth, "POST", NOT_FOUND("agent_not_found", "name")),
          };
        }
        return {
          probe: { method: "GET", path: `/v1/agents/${segment}`, headers: auth.headers },
          expected: guarded(auth, "GET", registered ? OK : NOT_FOUND("agent_not_found", "name")),
        };
      });
    await fuzz(cases, 300);
  }, 60_000);

  it("refuses hook deliveries that are unsigned, badly signed, not UTF-8 or too large, and starts nothing", async () => {
    const deliveries = new Set<string>();
    const now = () => Math.floor(Date.now() / 1000);
    const standardHeaders = fc.record(
      {
        "webhook-id": fc.oneof(fc.constant(`msg_${crypto.randomUUID()}`), headerText),
        "webhook-timestamp": fc.oneof(
          fc.constant(String(now())),
          fc.integer({ min: -1e12, max: 1e12 }).map(String),
          fc.constantFrom("", "abc", "1e9", `${now()}.5`, "-1", "99999999999999999999"),
          headerText,
        ),
        "webhook-signature": fc.oneof(
          fc.base64String({ minLength: 4, maxLength: 64 }).map((s) => `v1,${s}`),
          fc.constantFrom("", "v1,", "v1", "v2,abc", "v1,!!!", `v1,${"A".repeat(44)} v1,${"B".repeat(44)}`),
          headerText,
        ),
      },
      { requiredKeys: [] },
    );
    const hex = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });
    const githubHeaders = fc.record(
      {
        "x-hub-signature-256": fc.oneof(
          hex.map((h) => `sha256=${h}`),
          fc.constantFrom("", "sha256=", "sha1=ab"),
          headerText,
        ),
        "x-github-delivery": fc.oneof(fc.uuid(), headerText),
        "x-github-event": fc.oneof(fc.constantFrom("ping", "push", "issues", ""), headerText),
      },
      { requiredKeys: [] },
    );
    const hookIds = fc.oneof(
      { weight: 3, arbitrary: fc.constant({ segment: STANDARD_HOOK, id: STANDARD_HOOK }) },
      { weight: 3, arbitrary: fc.constant({ segment: GITHUB_HOOK, id: GITHUB_HOOK }) },
      { weight: 2, arbitrary: encodedId(badIdText) },
      { weight: 1, arbitrary: rawPercentId },
    );
    const bigBody = fc
      .integer({ min: HOOK_BODY_LIMIT - 2, max: HOOK_BODY_LIMIT + 4_096 })
      .map((n) => utf8.encode(`"${"a".repeat(Math.max(0, n - 2))}"`));
    const cases = fc
      .tuple(
        hookIds,
        fc.oneof(
          standardHeaders,
          githubHeaders,
          fc.tuple(standardHeaders, githubHeaders).map(([a, b]) => ({ ...a, ...b })),
        ),
        fc.oneof(
          { weight: 12, arbitrary: posted(anyJson) },
          {
            weight: 1,
            arbitrary: bigBody.map((body) => ({ headers: [["content-type", "application/json"]] as Header[], body })),
          },
        ),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant<Header[]>([]) },
          { weight: 1, arbitrary: badAuth.map((a) => a.headers) },
          { weight: 1, arbitrary: adminAuth.map((a) => a.headers) },
        ),
        fc.oneof(
          { weight: 12, arbitrary: fc.constant("POST") },
          { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE") },
        ),
      )
      .map(([{ segment, id }, signed, { headers, body }, auth, method]): Case => {
        const all: Header[] = [...Object.entries(signed), ...headers, ...auth];
        const hook = id === STANDARD_HOOK ? "standard" : id === GITHUB_HOOK ? "github" : null;
        const path = `/v1/hooks/${segment}`;
        if (method !== "POST") return { probe: { method, path, headers: all }, expected: ROUTE_NOT_FOUND };
        let expected: Expected;
        const declared = Number(headerValue(all, "content-length"));
        let text: string | undefined;
        try {
          text = strictUtf8.decode(body ?? new Uint8Array());
        } catch {
          text = undefined;
        }
        if (hook === null) expected = NOT_FOUND("hook_not_found", "hook_id");
        else if ((Number.isFinite(declared) && declared > HOOK_BODY_LIMIT) || (body?.byteLength ?? 0) > HOOK_BODY_LIMIT)
          expected = { status: [413], codes: ["payload_too_large"] };
        else if (text === undefined) expected = { status: [400], codes: ["invalid_json"] };
        else {
          const names =
            hook === "standard"
              ? ["webhook-id", "webhook-timestamp", "webhook-signature"]
              : ["x-hub-signature-256", "x-github-delivery"];
          const missing = names.some((n) => !headerValue(all, n));
          expected = missing
            ? { status: [401], codes: ["signature_missing"], field: "signature" }
            : { status: [401], codes: ["signature_invalid", "timestamp_out_of_tolerance"], field: "signature" };
          const delivery = headerValue(all, hook === "standard" ? "webhook-id" : "x-github-delivery");
          if (delivery) deliveries.add(`${id}\u0000${delivery}`);
        }
        return { probe: { method, path, headers: all, body }, expected };
      });
    await fuzz(cases, 500);
    // A delivery that had started a task would have the task its id names.
    expect(deliveries.size).toBeGreaterThan(50);
    for (const entry of deliveries) {
      const [hookId = "", delivery = ""] = entry.split("\u0000");
      const id = await derivedTaskId("hook", "default", hookId, delivery);
      const res = await api(`/v1/tasks/${id}`);
      expect(res.status, `${hookId} delivery ${delivery}`).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);

  it("answers /v1/tenant and random paths, methods and keys with a 4xx, never bypassing the API key", async () => {
    const words = ["v1", "tasks", "agents", "hooks", "tenant", "checkpoints", "messages", "events", "cancel", "fork"]
      .concat(["resume", "deliveries", "redeliver", "artifacts", "workspace", "assistant", "", "..", ".", "%2e%2e"])
      .concat(["%2F", "%2f..%2f", "\\", "..\\..", ";", "%00", "v1%2Ftasks", "*", "?", "#", "%3F", "hooks%2F.."])
      .concat([GHOST, finished.id, STANDARD_HOOK]);
    const segments = fc.array(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...words) },
        { weight: 1, arbitrary: wildText.map(encodeSegment) },
      ),
      { minLength: 0, maxLength: 6 },
    );
    const paths = fc.oneof(
      { weight: 5, arbitrary: segments.map((s) => `/v1/${s.join("/")}`) },
      { weight: 2, arbitrary: segments.map((s) => `/${s.join("/")}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "/",
          "/v1",
          "/v1/",
          "/v1/tenant",
          "/v1/tenant/",
          "/v1/agents",
          "//v1/agents",
          "/v1//tenant",
          "/V1/tenant",
          `/v1/hooks/..%2Ftasks%2F${finished.id}`,
          "/v1/hooks/%2e%2e/tenant",
          "/v1/hooks/x/..%2F..%2Ftenant",
        ),
      },
      { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 20_000 }).map((n) => `/v1/${"a/".repeat(n / 2)}`) },
    );
    // What a key-holder's request to some /v1 path can be told, reading or acting (the bodies here are empty).
    const READ_CODES = ["route_not_found", "task_not_found", "agent_not_found", "checkpoint_not_found"].concat([
      "artifact_not_found",
      "workspace_file_not_found",
      "validation_failed",
    ]);
    const ACT_CODES = ["route_not_found", "task_not_found", "agent_not_found", "task_already_finished"].concat([
      "delivery_not_found",
      "unsupported_media_type",
      "invalid_json",
    ]);
    const methods = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("GET", "HEAD") },
      { weight: 2, arbitrary: fc.constantFrom("POST", ...WRONG_METHODS) },
    );
    const cases = fc
      .tuple(anyAuth, paths, methods, noiseHeaders, contentType)
      .map(([auth, path, method, noise, type]): Case => {
        const url = new URL(BASE + path);
        const reading = method === "GET" || method === "HEAD";
        const headers: Header[] = [...auth.headers, ...noise, ...(reading ? [] : type)];
        const normalized = url.pathname;
        let expected: Expected;
        if (normalized.startsWith("/v1/hooks/")) {
          // No key needed there, and only hook routes answer (an unsigned delivery to a real hook is refused).
          expected = { status: [401, 404], codes: ["hook_not_found", "route_not_found", "signature_missing"] };
        } else if (normalized === "/v1" || normalized.startsWith("/v1/")) {
          const routed: Expected = reading
            ? { status: [200, 204, 400, 404], codes: READ_CODES, stream: true }
            : { status: [400, 404, 409, 415], codes: ACT_CODES };
          expected = guarded(auth, method, routed, normalized === "/v1/tenant");
        } else {
          expected = reading && normalized === "/" ? OK : ROUTE_NOT_FOUND;
        }
        return { probe: { method, path, headers }, expected };
      });
    await fuzz(cases, 600);
    expect(await tablesOf(GHOST)).toEqual([]);
    await expectUnchanged(finished);
  }, 60_000);

  it("refuses bodies nested too deep, with lone surrogates or __proto__ keys, or seed files past the workspace's entries, naming the field and changing nothing", async () => {
    // A few keys and delivery ids, each used many times: a task created under any of them would be found at the end.
    const idempotencyKeys = Array.from({ length: 6 }, () => `fuzz-guard-${crypto.randomUUID()}`);
    const deliveries = Array.from({ length: 4 }, () => `msg_${crypto.randomUUID()}`);
    const admin: Header[] = [["authorization", `Bearer ${API_KEY}`]];
    const json: Header[] = [["content-type", "application/json"]];
    const firstCheckpoint = finished.checkpointIds[0] ?? crypto.randomUUID();
    const create: Target = {
      base: { input: "Never run: fuzz", metadata: { suite: "fuzz" } },
      slots: [
        [],
        ["input"],
        ["metadata"],
        ["metadata", "m"],
        ["files"],
        ["files", "src/a.ts"],
        ["tags", 0],
        ["webhook"],
      ],
    };
    create.slots.push(["webhook", "url"], ["webhook", "events", 1], ["unknown"], ["max_turns"]);
    const resume: Target = {
      base: { request_id: "r", action: "modify", tool_input: { todos: [{ content: "x", status: "pending" }] } },
      slots: [[], ["tool_input"], ["tool_input", "path"], ["tool_input", "todos", 0, "content"], ["message"]],
    };
    resume.slots.push(["state_updates", "metadata"], ["state_updates", "messages", 0, "content"], ["request_id"]);
    const fork: Target = {
      base: { checkpoint_id: firstCheckpoint, state_updates: { messages: [{ role: "user", content: "Go on." }] } },
      slots: [[], ["checkpoint_id"], ["state_updates"], ["state_updates", "metadata"], ["state_updates", "messages"]],
    };
    fork.slots.push(["state_updates", "messages", 0, "content", 0, "text"], ["state_updates", "current_agent"]);
    const hook: Target = {
      base: { ticket: { title: "Refund", tags: ["a"] } },
      slots: [[], ["ticket"], ["ticket", "title"], ["ticket", "tags", 1], ["commits", 0, "message"]],
    };
    const signer = new Webhook((env as unknown as Record<string, string>).TEST_STANDARD_HOOK_SECRET as string);
    const defective = (target: Target) =>
      fc.tuple(fc.constantFrom(...target.slots), defect).map(([slot, d]) => withDefect(target.base, slot, d));
    const refused = (field: string): Expected => ({ status: [400], codes: ["validation_failed"], field });
    const cases: Arbitrary<Case> = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .tuple(
            fc.constantFrom("assistant", "coder", reviewed),
            defective(create),
            fc.constantFrom(...idempotencyKeys),
          )
          .map(([agent, { body, field }, key]) => ({
            probe: {
              method: "POST",
              path: `/v1/agents/${agent}/tasks`,
              headers: [...admin, ...json, ["idempotency-key", key] as Header],
              body,
            },
            expected: refused(field),
          })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(overflowingFiles, fc.constantFrom(...idempotencyKeys)).map(([{ files, field }, key]) => ({
          probe: {
            method: "POST",
            path: "/v1/agents/coder/tasks",
            headers: [...admin, ...json, ["idempotency-key", key] as Header],
            body: utf8.encode(JSON.stringify({ input: "Never run: fuzz", files })),
          },
          expected: { status: [400], codes: ["workspace_full"], field },
        })),
      },
      {
        weight: 3,
        arbitrary: fc.tuple(fc.constantFrom(finished, waiting), defective(resume)).map(([task, { body, field }]) => ({
          probe: { method: "POST", path: `/v1/tasks/${task.id}/resume`, headers: [...admin, ...json], body },
          expected: refused(field),
        })),
      },
      {
        weight: 2,
        arbitrary: defective(fork).map(({ body, field }) => ({
          probe: { method: "POST", path: `/v1/tasks/${finished.id}/fork`, headers: [...admin, ...json], body },
          expected: refused(field),
        })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(defective(hook), fc.constantFrom(...deliveries)).map(([{ body, field }, delivery]) => {
          const signature = signer.sign(delivery, new Date(), new TextDecoder().decode(body));
          const headers: Header[] = [
            ...json,
            ["webhook-id", delivery],
            ["webhook-timestamp", String(Math.floor(Date.now() / 1000))],
            ["webhook-signature", signature],
          ];
          return {
            probe: { method: "POST", path: `/v1/hooks/${STANDARD_HOOK}`, headers, body },
            expected: refused(field),
          };
        }),
      },
    );
    await fuzz(cases, 250);
    await expectUnchanged(finished);
    await expectUnchanged(waiting);
    // Had any of them created a task, its Idempotency-Key or delivery id would now name it.
    for (const [name, id] of [
      ...idempotencyKeys.map(
        (key) => [`Idempotency-Key ${key}`, derivedTaskId("idempotency", "default", key)] as const,
      ),
      ...deliveries.map((d) => [`delivery ${d}`, derivedTaskId("hook", "default", STANDARD_HOOK, d)] as const),
    ]) {
      const res = await api(`/v1/tasks/${await id}`);
      expect(res.status, name).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);
});
