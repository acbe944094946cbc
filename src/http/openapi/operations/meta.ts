// The OpenAPI operations of one resource (The API itself (health, this document, its reference page) and the tenant of the key.), assembled by src/http/openapi/operations.ts.
import { z } from "zod";
import { JsonObjectSchema } from "../../../lib/json.ts";
import { HealthSchema, TenantSchema } from "../../responses.ts";
import { DOCS_FILES } from "../docs-assets.ts";
import type { OperationSpec } from "./spec.ts";

export const META: OperationSpec[] = [
  {
    method: "get",
    path: "/",
    operationId: "getHealth",
    tag: "meta",
    summary: "Health check",
    description: "Unauthenticated, so it says nothing about the deployment.",
    access: "none",
    answers: { 200: { description: "The API answers.", json: HealthSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    tag: "meta",
    summary: "This OpenAPI 3.1 document",
    description:
      "Unauthenticated: it describes the API, which is the same for every deployment, not the deployment (no agent, tenant or key appears in it).",
    access: "none",
    answers: { 200: { description: "The OpenAPI 3.1 document.", json: JsonObjectSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/docs",
    operationId: "getApiReference",
    tag: "meta",
    summary: "The API reference page",
    description:
      "Swagger UI reading /openapi.json, served by the Worker with its assets (no CDN); its Content-Security-Policy lets it reach this origin only.",
    access: "none",
    answers: { 200: { description: "The HTML page.", raw: { "text/html": z.string() } } },
    errors: [],
  },
  {
    method: "get",
    path: "/docs/{file}",
    operationId: "getApiReferenceAsset",
    tag: "meta",
    summary: "A script or stylesheet of the reference page",
    access: "none",
    params: {
      path: z.object({
        file: z.enum(DOCS_FILES).describe("The file."),
      }),
    },
    answers: {
      200: { description: "The file.", raw: { "text/javascript": z.string(), "text/css": z.string() } },
    },
    errors: ["route_not_found"],
  },
];

export const TENANT: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/tenant",
    operationId: "getTenant",
    tag: "tenant",
    summary: "Who the key belongs to, the tenant's keys and its callback signing secret",
    access: "admin",
    answers: { 200: { description: "The tenant.", json: TenantSchema } },
    errors: [],
  },
];
