// The fuzz tests' oracles: what the API documents for a given input (README, API limits; docs/reference/), written
// independently of the code under test: a JSON body's fate, the ?wait= and SSE cursor rules, the refusals of a
// resume, and the answers that name a field.
import type { z } from "zod";
import type { ResumeBody } from "../../../src/http/schemas.ts";
import { MAX_BODY_BYTES } from "../../../src/http/validation.ts";
import type { Expected, Header } from "./probe.ts";

export const utf8 = new TextEncoder();
export const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Headers drop leading and trailing spaces and tabs. */
export function httpTrim(value: string): string {
  return value.replace(/^[\t ]+|[\t ]+$/g, "");
}

export function headerValue(headers: readonly Header[], name: string): string | undefined {
  const values = headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => httpTrim(v));
  return values.length === 0 ? undefined : values.join(", ");
}

type BodyOutcome = { error: Expected } | { value: unknown };

/** Deepest nesting of arrays and objects in a JSON body, the body itself being level 1 (README, API limits). */
export const MAX_JSON_DEPTH = 32;
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
export function jsonOutcome(headers: readonly Header[], body: Uint8Array | undefined, schema: z.ZodType): BodyOutcome {
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
export function waitIsValid(value: string): boolean {
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= 60;
}

/** The SSE cursor: Last-Event-ID (trimmed) wins over ?after=; both are event sequence numbers of 1–15 digits. */
export function cursorOf(
  lastEventId: string | undefined,
  after: string | undefined,
): number | { field: string } | null {
  if (lastEventId !== undefined)
    return /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : { field: "last-event-id" };
  if (after !== undefined) return /^\d{1,15}$/.test(after) ? Number(after) : { field: "after" };
  return null;
}

export function isInvalidCursor(cursor: ReturnType<typeof cursorOf>): cursor is { field: string } {
  return cursor !== null && typeof cursor === "object";
}

/** What a resume the schema accepts is refused for before it reaches the task, if anything. */
export function resumeRefusal(body: ResumeBody): Expected | null {
  if (body.tool_input !== undefined && body.action !== "modify") return VALIDATION_FAILED("tool_input");
  if (body.state_updates?.current_agent !== undefined) return VALIDATION_FAILED("state_updates.current_agent");
  return null;
}

export const VALIDATION_FAILED = (field: string): Expected => ({ status: [400], codes: ["validation_failed"], field });
export const NOT_FOUND = (code: string, field?: string): Expected => ({
  status: [404],
  codes: [code],
  ...(field === undefined ? {} : { field }),
});
export const ROUTE_NOT_FOUND: Expected = { status: [404], codes: ["route_not_found"] };

/**
 * A known bug, tolerated so that everything else is still checked: the `{.+}` pattern of the artifacts/*path and
 * workspace/*path routes does not match line terminators, so a path holding one (a file named "a\nb.txt") gets
 * 404 route_not_found instead of the route's own answer.
 */
export function orLineBreakBug(path: string, route: Expected): Expected {
  if (!/[\n\r\u2028\u2029]/.test(path)) return route;
  // (So the field is not checked: route_not_found names none.)
  return { status: [...route.status, 404], codes: [...(route.codes ?? []), "route_not_found"] };
}
export const OK: Expected = { status: [200] };
