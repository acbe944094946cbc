// Copies GET /docs's assets (Swagger UI's script and stylesheet, from the swagger-ui-dist package) into .assets/docs/,
// the Worker's static assets (wrangler.toml [assets]): Cloudflare serves them without running the Worker and they add
// nothing to its upload, and the Worker serves them through its ASSETS binding where a request reaches it (tests).
// The page loads nothing else, and nothing from another origin. Runs before `npm test`, `npm run dev` and every
// wrangler build (wrangler.toml [build]); `--check` fails if a copy is out of date instead of writing it.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SWAGGER_UI_FILES } from "../src/http/openapi/docs-assets.ts";
import { writeGenerated } from "./generated-file.ts";

const root = join(import.meta.dirname, "..");
const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const out = join(root, ".assets", "docs");
mkdirSync(out, { recursive: true });
// Not its standalone preset, source maps or own initializer (which would load the Petstore example).
for (const file of SWAGGER_UI_FILES) {
  writeGenerated(join(out, file), readFileSync(join(dist, file), "utf8"), {
    outOfDate: `.assets/docs/${file} is out of date: run npm run build:docs`,
    written: `.assets/docs/${file}: copied from swagger-ui-dist`,
  });
}
