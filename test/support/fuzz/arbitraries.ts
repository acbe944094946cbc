// The fuzz tests' arbitraries (fast-check): header values, ids wrong in every way, API keys right and wrong, the
// fields of each request body with values of the right type or not, JSON that is broken, bytes that are not UTF-8,
// bodies around the size limit, query strings and methods no route takes.
import fc, { type Arbitrary } from "fast-check";
import { MAX_BODY_BYTES } from "../../../src/http/validation.ts";
import { API_KEY } from "../helpers.ts";
import { httpTrim, utf8 } from "./oracles.ts";
import type { Expected, Header } from "./probe.ts";

/**
 * Characters a header value can carry here: printable ASCII and tabs. (workerd sends any other character as UTF-8,
 * with a warning for each, so a test client cannot put bytes that are not UTF-8 in a header.)
 */
const headerChar = fc
  .oneof({ weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 1, arbitrary: fc.constant(0x09) })
  .map((code) => String.fromCharCode(code));
export const headerText = fc.string({ unit: headerChar, maxLength: 48 });
const hugeHeader = fc.integer({ min: 4_096, max: 64 * 1024 }).map((n) => "h".repeat(n));
const anyHeaderValue = fc.oneof({ weight: 8, arbitrary: headerText }, { weight: 1, arbitrary: hugeHeader });

export const lonelySurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
/** Anything a string can hold: ASCII, any code point, graphemes, and halves of surrogate pairs. */
export const wildText = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: fc.oneof(fc.string({ minLength: 1, maxLength: 1 }), lonelySurrogate), maxLength: 12 }),
);

/** Percent-encodes one path segment; a lone surrogate becomes its (invalid) three-byte UTF-8 form. */
export function encodeSegment(value: string): string {
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
export const isDotSegment = (value: string) => /^(\.|%2e){1,2}$/i.test(value);

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
export const badIdText = fc.oneof(
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
export interface IdSegment {
  segment: string;
  id: string | undefined;
}

export const encodedId = (text: Arbitrary<string>): Arbitrary<IdSegment> =>
  text
    .filter((value) => value.length > 0 && !isDotSegment(value))
    .map((value) => ({ segment: encodeSegment(value), id: /[\ud800-\udfff]/.test(value) ? undefined : value }));

export const rawPercentId: Arbitrary<IdSegment> = fc
  .tuple(fc.constantFrom(...PERCENT_MESS), fc.string({ maxLength: 8 }).map(encodeSegment))
  .map(([mess, rest]) => ({ segment: mess + rest, id: undefined }));

// Authorization: the admin key (in its accepted spellings), the read-only key, and everything else.
export type Auth = { kind: "admin" | "read" | "bad"; headers: Header[] };
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

export const adminAuth: Arbitrary<Auth> = fc
  .constantFrom(`Bearer ${API_KEY}`, `bearer ${API_KEY}`, `BEARER   ${API_KEY}`, "Bearer test-key-2")
  .map((value) => ({ kind: "admin", headers: [["authorization", value]] }));
export const readAuth: Arbitrary<Auth> = fc.constant({
  kind: "read",
  headers: [["authorization", "Bearer test-read-key"]],
});
export const badAuth: Arbitrary<Auth> = fc
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

export const anyAuth = fc.oneof(
  { weight: 10, arbitrary: adminAuth },
  { weight: 2, arbitrary: readAuth },
  { weight: 3, arbitrary: badAuth },
);

const UNAUTHORIZED: Expected = { status: [401], codes: ["unauthorized"], field: "authorization" };
const FORBIDDEN: Expected = { status: [403], codes: ["insufficient_scope"], field: "authorization" };

/** Authentication and the method's scope come before any route on /v1. */
export function guarded(auth: Auth, method: string, route: Expected, adminOnly = false): Expected {
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
export const noiseHeaders = fc.array(
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
export const contentType: Arbitrary<Header[]> = fc.oneof(
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

export const anyJson = fc.jsonValue({ maxDepth: 3 });

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
export const createValues = fc
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

export const resumeValues = fc
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
export function asJson(value: unknown): Posted {
  return { headers: [["content-type", "application/json"]], body: utf8.encode(JSON.stringify(value)) };
}

/** One of these strings (a random UUID when there are none). */
export function oneOf(values: readonly string[]): Arbitrary<string> {
  return values.length > 0 ? fc.constantFrom(...values) : fc.uuid();
}

/** Resumes the schema accepts: refused by a task that waits for nothing, and by keys that may not act. */
export const wellFormedResume = fc.record(
  {
    action: fc.constantFrom("approve", "reject", "modify"),
    message: fc.string({ minLength: 1, maxLength: 40 }),
    tool_input: fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 }),
  },
  { requiredKeys: ["action"] },
);

export function forkValues(checkpointIds: readonly string[]) {
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
export interface Posted {
  headers: Header[];
  body: Uint8Array | undefined;
  /** A body the schema accepts, built to fail a later check: the code it must be refused with. */
  semantic?: string;
}
export const posted = (values: Arbitrary<unknown>): Arbitrary<Posted> =>
  fc
    .tuple(contentType, contentLength, noiseHeaders, bodies(values))
    .map(([type, length, noise, body]) => ({ headers: [...type, ...length, ...noise], body }));

/** A query string: one value for `name` (percent-encoded, raw, repeated or empty), or none at all. */
export function queryFor(
  name: string,
  values: Arbitrary<string>,
): Arbitrary<{ query: string; value: string | undefined }> {
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

export const numberText = fc.oneof(
  fc.nat().map(String),
  fc.double().map(String),
  fc.integer({ min: -100, max: 100 }).map(String),
  fc.constantFrom("", " 5", "5 ", "1e1", "1e3", "0x10", "0b1", "+1", "-0", "9".repeat(15), "9".repeat(16), "00000"),
  fc.constantFrom("NaN", "Infinity", "-Infinity", "١٢", "５", "60.0000001", "1_000", "0.5", ".5", "5.", "1,5"),
  fc.string({ unit: "binary", maxLength: 10 }),
);
/** Last-Event-ID values (header-safe: no control characters but tabs). */
export const cursorHeaderText = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom("", " 5", "5 ", "\t5", "5\t", "1e3", "0x10", "+1", "-1", "9".repeat(15), "9".repeat(16)),
  headerText,
);

export const WRONG_METHODS = ["PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "patch", "MKCOL"];
