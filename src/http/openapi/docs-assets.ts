// The files of GET /docs besides the page: Swagger UI's script and stylesheet, which scripts/build-docs-assets.ts
// compiles into the Worker from swagger-ui-dist (swagger-ui.ts serves them), and the page's own configuration. One
// list for the build script, the route and the OpenAPI document.

/** Copied from swagger-ui-dist, served under /docs/. */
export const SWAGGER_UI_FILES = ["swagger-ui-bundle.js", "swagger-ui.css"] as const;

/** The page's Swagger UI configuration, served by the Worker under /docs/. */
export const INITIALIZER_FILE = "swagger-initializer.js";

/** Every file under /docs/. */
export const DOCS_FILES = [...SWAGGER_UI_FILES, INITIALIZER_FILE] as const;

export type SwaggerUiFile = (typeof SWAGGER_UI_FILES)[number];

export function isSwaggerUiFile(file: string): file is SwaggerUiFile {
  return (SWAGGER_UI_FILES as readonly string[]).includes(file);
}
