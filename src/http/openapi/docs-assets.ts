// The files of GET /docs besides the page: Swagger UI's script and stylesheet, which scripts/build-docs-assets.ts
// copies from swagger-ui-dist into the Worker's static assets (.assets/docs/), and the page's own configuration,
// which the Worker serves. One list for the script, the route and the OpenAPI document.

/** Copied from swagger-ui-dist, served as static assets under /docs/. */
export const SWAGGER_UI_FILES = ["swagger-ui-bundle.js", "swagger-ui.css"] as const;

/** The page's Swagger UI configuration, served by the Worker under /docs/. */
export const INITIALIZER_FILE = "swagger-initializer.js";

/** Every file under /docs/. */
export const DOCS_FILES = [...SWAGGER_UI_FILES, INITIALIZER_FILE] as const;
