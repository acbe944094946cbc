// The types of swagger-ui.generated.js, which scripts/build-docs-assets.ts writes before every build and test (it is
// not committed: it holds Swagger UI itself, gzipped).
import type { SwaggerUiFile } from "./docs-assets.ts";

/** The swagger-ui-dist version the files come from. */
export declare const SWAGGER_UI_VERSION: string;

/** Each of Swagger UI's files, gzipped, in base64. */
export declare const SWAGGER_UI_GZIP_BASE64: Readonly<Record<SwaggerUiFile, string>>;
