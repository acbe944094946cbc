// GET /openapi.json: the API's OpenAPI 3.1 document, unauthenticated (it describes the API, the same for every
// deployment: no agent, tenant or key appears in it). The document and the response schemas it is built from are
// loaded on the first request and kept for the isolate's life, so the Worker's cold start pays for neither
// (test/project/layering.test.ts keeps every other import of them out of the Worker).
import { Hono } from "hono";
import { lazyModule } from "../../lib/lazy-module.ts";
import type { AppEnv } from "../app-env.ts";

const loadDocument = lazyModule(() => import("./document.ts"));

export const openApiRoutes = new Hono<AppEnv>().get("/openapi.json", async (c) => {
  const { openApiJson } = await loadDocument();
  return c.body(openApiJson(), 200, {
    "content-type": "application/json; charset=utf-8",
    // The document changes only with a deploy.
    "cache-control": "public, max-age=300",
  });
});
