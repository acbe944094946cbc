// The OpenAPI 3.1 document of the HTTP API, built with zod-openapi from the operation table (operations.ts): the
// request schemas the routes validate with, the response schemas (src/http/responses.ts), and each operation's error
// codes answered with the status the registry gives them (src/errors/codes.ts). Built once per isolate, on the first
// GET /openapi.json: the Worker loads this module lazily (src/http/openapi/routes.ts), so its cold start never builds
// the response schemas.
import { z } from "zod";
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiOverride,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from "zod-openapi";
import { ERROR_CODES, httpStatus, type RequestErrorCode } from "../../errors/codes.ts";
import { EventRecordSchema } from "../../events/event-record.ts";
import { JsonObjectSchema, JsonSchema } from "../../lib/json.ts";
import { AUTH_CHALLENGE } from "../errors.ts";
import * as responses from "../responses.ts";
import * as requests from "../schemas.ts";
import { type AnswerSpec, impliedErrors, OPERATIONS, type OperationSpec, TAGS } from "./operations.ts";

/** The version of the API the document describes (its routes are under /v1). */
const API_VERSION = "1.0.0";

/** How an event stream's frames look: one event record per frame, as src/events/sse.ts writes them. */
const EVENT_STREAM_DESCRIPTION = [
  "Server-Sent Events (WHATWG). Each event is one frame of three lines and a blank line:",
  "`id: <seq>` (the event's sequence number: send it back as the Last-Event-ID header, or as ?after=, to resume),",
  "`event: <event_type>` and `data: <the EventRecord as JSON>` (its `payload` as the event catalog gives it for that",
  "event type: docs/reference/events.md). A `retry:` field sets the reconnect delay, and comment lines (`: …`) are",
  "heartbeats. The stream ends after the run's terminal event (a turn's stream: after its turn_finished).",
].join(" ");

/**
 * The schemas named in components, each by the name the typed client gives its type: a schema used anywhere in the
 * document is a $ref to its entry. Every exported zod schema of responses.ts and the request bodies of schemas.ts (a query string is a list of parameters, not a schema).
 */
function componentSchemas(): Record<string, z.ZodType> {
  const named: Record<string, z.ZodType> = {};
  const add = (module: Readonly<Record<string, unknown>>, suffix: RegExp) => {
    for (const [name, value] of Object.entries(module)) {
      if (isZodSchema(value) && suffix.test(name)) named[name.replace(/Schema$/, "")] = value;
    }
  };
  add(responses, /Schema$/);
  add(requests, /Body$/);
  named.EventRecord = EventRecordSchema;
  // Free-form JSON (recursive): named, so that every use is one $ref rather than a generated __schemaN name.
  named.Json = JsonSchema;
  named.JsonObject = JsonObjectSchema;
  return named;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

/** The description of an error answer: each code it stands for, and when (the registry's words). */
function errorDescription(codes: readonly RequestErrorCode[]): string {
  return codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].request.when}`).join("\n\n");
}

/** The header every 401 carries (src/http/errors.ts). */
const CHALLENGE_HEADERS = z.object({
  "www-authenticate": z
    .literal(AUTH_CHALLENGE)
    .describe(`The challenge: \`${AUTH_CHALLENGE}\` (send the API key as \`Authorization: Bearer <key>\`).`),
});

/** The operation's error answers, one per status, each listing its codes (also as `x-error-codes`). */
function errorResponses(op: OperationSpec): ZodOpenApiResponsesObject {
  const codes = [...new Set([...op.errors, ...impliedErrors(op)])];
  const byStatus = new Map<number, RequestErrorCode[]>();
  for (const code of Object.keys(ERROR_CODES) as RequestErrorCode[]) {
    if (!codes.includes(code)) continue;
    const status = httpStatus(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: ZodOpenApiResponsesObject = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status) as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: errorDescription(list),
      ...(status === 401 ? { headers: CHALLENGE_HEADERS } : {}),
      content: { "application/json": { schema: responses.ErrorBodySchema } },
      "x-error-codes": list,
    } as ZodOpenApiResponseObject;
  }
  return out;
}

function answer(spec: AnswerSpec): ZodOpenApiResponseObject {
  const content: NonNullable<ZodOpenApiResponseObject["content"]> = {};
  if (spec.json) content["application/json"] = { schema: spec.json };
  if (spec.sse) {
    content["text/event-stream"] = {
      schema: {
        type: "string",
        description: EVENT_STREAM_DESCRIPTION,
        "x-sse-data": { $ref: "#/components/schemas/EventRecord" },
      },
    };
  }
  for (const [type, schema] of Object.entries(spec.raw ?? {})) content[type] = schema ? { schema } : {};
  return {
    description: spec.description,
    ...(Object.keys(content).length > 0 ? { content } : {}),
    ...(spec.headers ? { headers: spec.headers } : {}),
  };
}

function operation(op: OperationSpec): ZodOpenApiOperationObject {
  const keyed = op.access !== "none" && op.access !== "signature";
  const access =
    op.access === "none"
      ? "No authentication."
      : op.access === "signature"
        ? "No API key: the delivery's signature authenticates it."
        : `Needs an API key with the \`${op.access}\` scope (\`admin\` may do everything).`;
  const answers: ZodOpenApiResponsesObject = {};
  for (const [status, spec] of Object.entries(op.answers)) {
    answers[status as `${1 | 2 | 3 | 4 | 5}${string}`] = answer(spec);
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: [op.description, access].filter(Boolean).join("\n\n"),
    ...(keyed ? {} : { security: [] }),
    "x-required-scope": keyed ? op.access : null,
    ...(op.params ? { requestParams: op.params } : {}),
    ...(op.body
      ? { requestBody: { required: true, content: { "application/json": { schema: op.body } } } }
      : op.rawBody
        ? {
            requestBody: {
              required: true,
              description: op.rawBody.description,
              content: Object.fromEntries(Object.entries(op.rawBody.content).map(([t, schema]) => [t, { schema }])),
            },
          }
        : {}),
    responses: { ...answers, ...errorResponses(op) },
  } as ZodOpenApiOperationObject;
}

type OpenApiDocument = ReturnType<typeof createDocument>;

/**
 * Free-form JSON (JsonSchema, recursive) as the empty schema, which any JSON value meets: the same set of values,
 * without a type that refers to itself (TypeScript refuses openapi-typescript's rendering of that one).
 */
const anyJson: ZodOpenApiOverride = ({ zodSchema, jsonSchema }) => {
  if ((zodSchema as unknown) !== JsonSchema) return;
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  jsonSchema.description = "Any JSON value.";
};

/**
 * zod-openapi renders a named schema whose input and output differ (a default, a transform) twice, `X` for requests
 * and `XOutput` for responses, even when no request uses it (Workflow: its node's `pattern` has a default). Such an
 * `X` that nothing references is dropped and `XOutput` takes its name, so the client's type is `Workflow`.
 */
function withoutUnusedInputs(doc: OpenApiDocument): OpenApiDocument {
  const schemas = doc.components?.schemas ?? {};
  const before = JSON.stringify(doc);
  const renames = Object.keys(schemas)
    .map((name) => [name, name.replace(/Output$/, "")] as const)
    .filter(([name, base]) => base !== name && base in schemas && !before.includes(`"#/components/schemas/${base}"`));
  for (const [name, base] of renames) {
    schemas[base] = schemas[name] as (typeof schemas)[string];
    delete schemas[name];
  }
  let text = JSON.stringify(doc);
  for (const [name, base] of renames) {
    text = text.replaceAll(`"#/components/schemas/${name}"`, `"#/components/schemas/${base}"`);
  }
  return JSON.parse(text) as OpenApiDocument;
}

/** The document, built from the table. */
export function buildOpenApiDocument(): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const op of OPERATIONS) {
    paths[op.path] = { ...paths[op.path], [op.method]: operation(op) };
  }
  const doc = createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Outpost",
        version: API_VERSION,
        description:
          "Agent execution API: every task in its own Durable Object, streamed over SSE, recorded in R2. Errors are `{error: {code, message, request_id, field?}}` with a stable code (ErrorBody); each operation lists the codes it can answer, by status.",
        license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      },
      tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
      security: [{ bearerAuth: [] }],
      paths,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: "http",
            scheme: "bearer",
            description:
              "An Outpost API key: `Authorization: Bearer <key>`. Its scopes (read, run, admin) decide what it may do; POST /v1/hooks/{hook_id} takes a signature instead.",
          },
        },
        schemas: componentSchemas(),
      },
    },
    { override: anyJson },
  );
  return withoutUnusedInputs(doc);
}

let cached: string | undefined;

/** The document as JSON text, built on the first call and kept for the isolate's life. */
export function openApiJson(): string {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return cached;
}
