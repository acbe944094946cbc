// Request validation: bodies and parameters go through zod, and the first problem becomes a 400 naming the field.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";

/** Largest request body accepted (bytes). */
export const MAX_BODY_BYTES = 256 * 1024;

/** The first problem, with `root` naming the value itself (a body, a header, a query parameter). */
export function firstIssue(error: z.ZodError, root = "(body)"): { field: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { field: root, message: "invalid" };
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    return { field: [...path, key].join("."), message: `unknown field "${key}"` };
  }
  return { field: path.join(".") || root, message: issue.message };
}

/** Validates `value`; `field` names it in the error (a body's own fields are named by their path inside it). */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, field = "(body)"): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = firstIssue(result.error, field);
  throw new ApiError(400, "validation_failed", `Invalid ${issue.field}: ${issue.message}`, issue.field);
}

/** Reads a JSON body (size-limited, content-type checked) and validates it. */
export async function jsonBody<T>(c: Context<AppEnv>, schema: z.ZodType<T>): Promise<T> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(
      415,
      "unsupported_media_type",
      "Send the body as JSON with 'Content-Type: application/json'.",
      "content-type",
    );
  }
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    throw new ApiError(413, "payload_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`);
  }
  const bytes = await readLimited(c.req.raw.body, MAX_BODY_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ApiError(400, "invalid_json", "The body is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The body is not valid JSON.");
  }
  return parseWith(schema, value);
}

/** A body as UTF-8 text, up to `limit` bytes (413 beyond, 400 for bytes that are not UTF-8). */
export async function bodyText(c: Context<AppEnv>, limit: number): Promise<string> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    throw new ApiError(413, "payload_too_large", `The body is larger than ${limit} bytes.`);
  }
  const bytes = await readLimited(c.req.raw.body, limit);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ApiError(400, "invalid_json", "The body is not valid UTF-8.");
  }
}

/** Reads a body up to `limit` bytes, stopping (413) as soon as it is exceeded, with or without a Content-Length. */
async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new ApiError(413, "payload_too_large", `The body is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
