// GET /openapi.json (src/http/openapi/): the document covers every route the app registers and nothing else, validates
// as OpenAPI 3.1, and says what the routes do: a body its request schema forbids gets the 400 it documents, an error
// a route answers is among the codes it lists for that status. GET /docs: the reference page and its assets, from the
// Worker (Swagger UI compiled in), with no other origin allowed. test/e2e/docs.test.ts renders it in Chromium.
import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { app } from "../../src/http/app.ts";
import { api, expectError } from "../support/helpers.ts";

/**
 * swagger-ui-dist's script as the package has it, to compare with what the Worker serves. (Its stylesheet cannot be
 * read so: vitest hands CSS imports to its CSS pipeline, which empties them.)
 */
const SWAGGER_UI_BUNDLE = Object.values(
  import.meta.glob<string>("../../node_modules/swagger-ui-dist/swagger-ui-bundle.js", {
    query: "?raw",
    import: "default",
    eager: true,
  }),
)[0];

/** client/openapi.json as committed: the typed client is generated from it (npm run build:client). */
const CLIENT_DOCUMENT = Object.values(
  import.meta.glob<string>("../../client/openapi.json", { query: "?raw", import: "default", eager: true }),
)[0];

/**
 * Route prefixes the app serves that this document does not describe, each documented by its own protocol. Any
 * other route missing from the document fails the test.
 */
const DOCUMENTED_ELSEWHERE: readonly { prefix: string; reason: string }[] = [
  {
    prefix: "/a2a",
    reason: "the A2A protocol's bindings (JSON-RPC and HTTP+JSON): each agent's Agent Card describes them",
  },
  { prefix: "/mcp", reason: "the MCP protocol (Streamable HTTP): its tools/list describes what it offers" },
  { prefix: "/console", reason: "the web console: HTML pages for people, not API" },
];

/** A body each operation with a JSON body accepts: with one member more, the route must refuse it by that member. */
const VALID_BODIES: Readonly<Record<string, Record<string, unknown>>> = {
  createTask: { input: "Say hello." },
  createWorkflowTask: { input: "Say hello." },
  createSession: {},
  createSchedule: { agent: "assistant", input: "Say hello.", cron: "0 9 * * *" },
  startEvaluation: {},
  invokeAgent: { message: "Say hello." },
  forkTask: { checkpoint_id: "6f1c1d8e-4a4b-4c1e-9d0a-2b7f3c9e5a10" },
  resumeTask: { request_id: "req_1", action: "approve" },
  sendSessionMessage: { message: "Say hello." },
  resumeSession: { request_id: "req_1", action: "approve" },
  putDocuments: { documents: [{ id: "a", text: "A." }] },
};

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  "x-required-scope": string | null;
  requestBody?: { content: Record<string, { schema?: { $ref?: string } }> };
  responses: Record<string, { content?: Record<string, unknown>; "x-error-codes"?: string[] }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Partial<Record<(typeof METHODS)[number], OpenApiOperation>>>;
  components: { schemas: Record<string, { additionalProperties?: unknown }> };
}

async function fetchDocument(): Promise<OpenApiDocument> {
  const res = await api("/openapi.json", { key: null });
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApiDocument;
}

/** Hono's `:name` and `:path{regex}` as OpenAPI's `{name}`. */
function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z_]+)(\{[^}]*\}+)?/g, "{$1}");
}

/** The app's routes as "METHOD /path", middleware left out (Hono lists it as method ALL). */
function appRoutes(): string[] {
  const routes = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => `${r.method} ${openApiPath(r.path)}`)
    .filter((r) => !DOCUMENTED_ELSEWHERE.some(({ prefix }) => r.split(" ")[1]?.startsWith(prefix)));
  return [...new Set(routes)].sort();
}

function documentedRoutes(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

function operations(doc: OpenApiDocument): [string, string, OpenApiOperation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((m) => (item[m] ? [[m, path, item[m]] as [string, string, OpenApiOperation]] : [])),
  );
}

describe("GET /openapi.json", () => {
  it("answers without an API key with an OpenAPI 3.1 document as JSON", async () => {
    const res = await api("/openapi.json", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const doc = (await res.json()) as { openapi: string; info: { title: string } };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.title).toBe("Outpost");
  });

  it("documents every route the app registers, with its method and path, and no route it does not", async () => {
    const doc = await fetchDocument();
    expect(documentedRoutes(doc)).toEqual(appRoutes());
    // Not vacuous: the app's table has the routes of every part of the API.
    expect(appRoutes()).toEqual(
      expect.arrayContaining([
        "GET /",
        "GET /openapi.json",
        "PUT /v1/agents/{name}",
        "POST /v1/hooks/{hook_id}",
        "GET /v1/tasks/{id}/workspace/{path}",
        "GET /v1/sessions/{id}/turns/{turn_id}/events",
        "GET /v1/tenant",
      ]),
    );
  });

  it("validates as OpenAPI 3.1", async () => {
    const res = await api("/openapi.json", { key: null });
    // The parser dereferences the document in place, so it gets its own copy, parsed from the answer.
    const result = await validate(await res.json<Parameters<typeof validate>[0]>());
    expect(result).toMatchObject({ valid: true, warnings: [], specification: "OpenAPI" });
  });

  it("is the document the typed client is generated from (client/openapi.json is not stale)", async () => {
    // If this fails: npm run build:client, and commit client/openapi.json and client/src/schema.ts.
    expect(JSON.parse(CLIENT_DOCUMENT ?? "null")).toEqual(await fetchDocument());
  });

  it("names each schema after its wire type, with no generated or duplicated names", async () => {
    const names = Object.keys((await fetchDocument()).components.schemas);
    expect(names.filter((name) => !/^[A-Z][A-Za-z]*$/.test(name) || name.endsWith("Output"))).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining([
        "ErrorBody",
        "TaskResource",
        "TaskResponse",
        "CreateTaskBody",
        "EventRecord",
        "Workflow",
      ]),
    );
  });

  it("gives every operation a unique camelCase operationId", async () => {
    const ids = operations(await fetchDocument()).map(([, , op]) => op.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("asks for a bearer API key everywhere but the health check, the document, its reference page and webhook deliveries", async () => {
    const doc = await fetchDocument();
    const open = operations(doc)
      .filter(([, , op]) => op.security !== undefined && op.security.length === 0)
      .map(([method, path]) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(open).toEqual(["GET /", "GET /docs", "GET /docs/{file}", "GET /openapi.json", "POST /v1/hooks/{hook_id}"]);
    expect(doc.paths["/v1/tenant"]?.get?.["x-required-scope"]).toBe("admin");
    expect(doc.paths["/v1/tasks/{id}"]?.get?.["x-required-scope"]).toBe("read");
    expect(doc.paths["/v1/agents/{name}/tasks"]?.post?.["x-required-scope"]).toBe("run");
  });

  it("describes the event streams as text/event-stream", async () => {
    const doc = await fetchDocument();
    const streams = operations(doc)
      .filter(([, , op]) => op.responses["200"]?.content?.["text/event-stream"] !== undefined)
      .map(([, , op]) => op.operationId)
      .sort();
    expect(streams).toEqual(
      [
        "invokeAgent",
        "sendSessionMessage",
        "streamSessionEvents",
        "streamTaskEvents",
        "streamTurnEvents",
        // Every request that starts a task (startTask), with Accept: text/event-stream.
        "createTask",
        "createWorkflowTask",
        "forkTask",
        "replayTask",
        "replayBundle",
      ].sort(),
    );
  });

  it("answers an unknown member of any documented JSON body with the 400 validation_failed it documents", async () => {
    const doc = await fetchDocument();
    const withBodies = operations(doc).filter(([, , op]) =>
      // The request bodies of schemas.ts (a webhook's payload is the sender's, any JSON object).
      /Body$/.test(op.requestBody?.content["application/json"]?.schema?.$ref ?? ""),
    );
    expect(withBodies.map(([, , op]) => op.operationId).sort()).toEqual(Object.keys(VALID_BODIES).sort());
    for (const [method, path, op] of withBodies) {
      const ref = op.requestBody?.content["application/json"]?.schema?.$ref ?? "";
      const schema = doc.components.schemas[ref.replace("#/components/schemas/", "")];
      // The document says the member is not allowed ...
      expect({ op: op.operationId, additionalProperties: schema?.additionalProperties }).toEqual({
        op: op.operationId,
        additionalProperties: false,
      });
      // ... and the route refuses it with a code the document lists for 400.
      expect(op.responses["400"]?.["x-error-codes"]).toContain("validation_failed");
      const url = path
        .replace("{name}", path.startsWith("/v1/workflows") ? "plan_and_build" : "assistant")
        .replace("{id}", crypto.randomUUID());
      const res = await api(url, {
        method: method.toUpperCase(),
        body: JSON.stringify({ ...VALID_BODIES[op.operationId], not_a_member: 1 }),
      });
      await expectError(res, 400, "validation_failed", "not_a_member");
    }
  });

  it("lists the code a route answers among the ones it documents for that status", async () => {
    const doc = await fetchDocument();
    const res = await api(`/v1/tasks/${crypto.randomUUID()}`);
    await expectError(res, 404, "task_not_found", "id");
    expect(doc.paths["/v1/tasks/{id}"]?.get?.responses["404"]?.["x-error-codes"]).toEqual(["task_not_found"]);
    const noKey = await api("/v1/tasks", { key: null });
    await expectError(noKey, 401, "unauthorized", "authorization");
    expect(doc.paths["/v1/tasks"]?.get?.responses["401"]?.["x-error-codes"]).toEqual(["unauthorized"]);
  });
});

describe("GET /docs", () => {
  it("serves the reference page without an API key, allowed to reach its own origin only", async () => {
    const res = await api("/docs", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const page = await res.text();
    // Every script and stylesheet it loads is one of the Worker's files under /docs/ (and no favicon is fetched).
    expect([...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])).toEqual([
      "data:,",
      "/docs/swagger-ui.css",
      "/docs/swagger-ui-bundle.js",
      "/docs/swagger-initializer.js",
    ]);
  });

  it("serves Swagger UI's script and stylesheet gzipped to a client that takes gzip, as swagger-ui-dist has them", async () => {
    const gzip = { "accept-encoding": "gzip, deflate, br" };
    const script = await api("/docs/swagger-ui-bundle.js", { key: null, headers: gzip });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("content-encoding")).toBe("gzip");
    expect(SWAGGER_UI_BUNDLE?.length).toBeGreaterThan(1_000_000);
    // The runtime inflates a gzipped body as it is read, as any fetch does: bytes that are not gzip fail the read.
    expect((await script.text()) === SWAGGER_UI_BUNDLE).toBe(true);
    const style = await api("/docs/swagger-ui.css", { key: null, headers: gzip });
    expect(style.status).toBe(200);
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(style.headers.get("content-encoding")).toBe("gzip");
    expect((await style.text()).startsWith(".swagger-ui{")).toBe(true);
  });

  it("sends them inflated to a client that does not take gzip", async () => {
    const script = await api("/docs/swagger-ui-bundle.js", { key: null });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-encoding")).toBeNull();
    expect((await script.text()) === SWAGGER_UI_BUNDLE).toBe(true);
    const style = await api("/docs/swagger-ui.css", { key: null, headers: { "accept-encoding": "identity" } });
    expect(style.headers.get("content-encoding")).toBeNull();
    expect((await style.text()).startsWith(".swagger-ui{")).toBe(true);
  });

  it("answers a request for a file it already has (its ETag) with 304 and no body", async () => {
    const first = await api("/docs/swagger-ui.css", { key: null });
    const etag = first.headers.get("etag");
    await first.body?.cancel();
    expect(etag).toMatch(/^"swagger-ui-\d+\.\d+\.\d+"$/);
    const again = await api("/docs/swagger-ui.css", { key: null, headers: { "if-none-match": etag ?? "" } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    const stale = await api("/docs/swagger-ui.css", { key: null, headers: { "if-none-match": '"swagger-ui-0.0.0"' } });
    expect(stale.status).toBe(200);
    await stale.body?.cancel();
  });

  it("configures Swagger UI to read this origin's /openapi.json, with no validator badge and no ?url=", async () => {
    const res = await api("/docs/swagger-initializer.js", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const script = await res.text();
    expect(script).toContain('url: "/openapi.json",');
    expect(script).toContain("validatorUrl: null,");
    expect(script).toContain("queryConfigEnabled: false,");
  });

  it("answers any other file under /docs/ with 404 route_not_found", async () => {
    await expectError(await api("/docs/index.html", { key: null }), 404, "route_not_found");
    await expectError(await api("/docs/swagger-ui-bundle.js.map", { key: null }), 404, "route_not_found");
  });
});
