// Swagger UI's script and stylesheet as GET /docs/:file serves them: compiled into the Worker from swagger-ui-dist by
// scripts/build-docs-assets.ts (gzipped, in swagger-ui.generated.js), and sent gzipped. They were static assets
// (wrangler.toml [assets]) until 2026-11-29, which put miniflare's asset router and asset Worker in front of every
// request under wrangler dev: about 1.4 ms of CPU and 1.5 ms of latency on each API call.
import type { SwaggerUiFile } from "./docs-assets.ts";
import { SWAGGER_UI_GZIP_BASE64, SWAGGER_UI_VERSION } from "./swagger-ui.generated.js";

const CONTENT_TYPES: Record<SwaggerUiFile, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

/** The gzipped bytes of each file, decoded from base64 once per isolate, when first asked for. */
const decoded = new Map<SwaggerUiFile, Uint8Array>();

function gzipped(file: SwaggerUiFile): Uint8Array {
  let bytes = decoded.get(file);
  if (!bytes) {
    const binary = atob(SWAGGER_UI_GZIP_BASE64[file]);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    decoded.set(file, bytes);
  }
  return bytes;
}

/**
 * One of Swagger UI's files: gzipped as stored when the client takes gzip (every browser does), else inflated on the
 * way out. Its ETag is the swagger-ui-dist version, which changes only with a deploy.
 */
export function swaggerUiResponse(file: SwaggerUiFile, request: Request): Response {
  const etag = `"swagger-ui-${SWAGGER_UI_VERSION}"`;
  const headers = new Headers({ "content-type": CONTENT_TYPES[file], "cache-control": "public, max-age=3600", etag });
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  const bytes = gzipped(file);
  if (/\bgzip\b/i.test(request.headers.get("accept-encoding") ?? "")) {
    headers.set("content-encoding", "gzip");
    // "manual": the body is sent as these bytes, already encoded, rather than compressed again.
    return new Response(bytes, { headers, encodeBody: "manual" });
  }
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")), { headers });
}
