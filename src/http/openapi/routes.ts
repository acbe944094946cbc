// GET /openapi.json: the API's OpenAPI 3.1 document, unauthenticated (it describes the API, the same for every
// deployment: no agent, tenant or key appears in it). The document and the response schemas it is built from are
// loaded on the first request and kept for the isolate's life, so the Worker's cold start pays for neither
// (test/project/layering.unit.test.ts keeps every other import of them out of the Worker).
//
// GET /docs: the reference page, Swagger UI reading /openapi.json. Its script and stylesheet are compiled into the
// Worker from swagger-ui-dist (swagger-ui.ts): no CDN. The page's Content-Security-Policy lets it reach its own
// origin only.
import { Hono } from "hono";
import { ApiError } from "../../errors.ts";
import { lazyModule } from "../../lib/lazy-module.ts";
import type { AppEnv } from "../app-env.ts";
import { INITIALIZER_FILE, isSwaggerUiFile } from "./docs-assets.ts";
import { swaggerUiResponse } from "./swagger-ui.ts";

const loadDocument = lazyModule(() => import("./document.ts"));

/** Swagger UI's configuration: this origin's document, no validator badge (it would call validator.swagger.io). */
const INITIALIZER = `window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    queryConfigEnabled: false,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Outpost API reference</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="/docs/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/${INITIALIZER_FILE}"></script>
  </body>
</html>
`;

/**
 * Only this origin, for everything the page loads or calls (Swagger UI's "Try it out" included); inline styles and
 * data: images are Swagger UI's own rendering.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const openApiRoutes = new Hono<AppEnv>()
  .get("/openapi.json", async (c) => {
    const { openApiJson } = await loadDocument();
    return c.body(openApiJson(), 200, {
      "content-type": "application/json; charset=utf-8",
      // The document changes only with a deploy.
      "cache-control": "public, max-age=300",
    });
  })
  .get("/docs", (c) =>
    c.body(PAGE, 200, { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CSP }),
  )
  // The page's configuration is this module's; its script and stylesheet are swagger-ui-dist's.
  .get("/docs/:file", (c) => {
    const file = c.req.param("file");
    if (file === INITIALIZER_FILE) {
      return c.body(INITIALIZER, 200, { "content-type": "text/javascript; charset=utf-8" });
    }
    if (!isSwaggerUiFile(file)) throw new ApiError("route_not_found", `No route for GET ${c.req.path}.`);
    return swaggerUiResponse(file, c.req.raw);
  });
