// Request validation: bodies and parameters go through zod, and the first problem becomes a 400 naming the field.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";

/** Largest request body accepted (bytes). */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Deepest nesting of arrays and objects in a JSON body, the body itself being level 1. zod and Durable Object RPC
 * both walk values recursively (RPC's serialiser failed with a 500 on a deeply nested tool_input); no body here
 * needs more than a few levels (a resume's message text is at level 6), so 32 leaves room for tool arguments.
 */
export const MAX_JSON_DEPTH = 32;

/** A value still to be checked, with the way back to the body's root (the path is built only for an error). */
interface JsonNode {
  value: unknown;
  key: string | null;
  parent: JsonNode | null;
  depth: number;
}

function pathOf(node: JsonNode, root: string): string {
  const keys: string[] = [];
  for (let at: JsonNode | null = node; at !== null && at.key !== null; at = at.parent) keys.push(at.key);
  return keys.length === 0 ? root : keys.reverse().join(".");
}

/**
 * The first thing in a parsed JSON body (in document order) that no route accepts, or null:
 * - arrays or objects nested deeper than MAX_JSON_DEPTH;
 * - a string or key with a lone UTF-16 surrogate: JSON.parse turns a "\ud800" escape into one, and storage turns it
 *   into U+FFFD, so two seeded file names collapsed into one whose URL then 404s;
 * - a "__proto__" key: JSON.parse keeps it as an own key, but zod's record and object spreads drop it (or make its
 *   value a prototype), so it would be lost with a 202. Refused rather than kept, the same in every body.
 * `field` names the value by its path, joined with "." as zod's issues are. Iterative: no body can overflow the stack.
 */
export function jsonBodyProblem(body: unknown, root = "(body)"): { field: string; message: string } | null {
  const stack: JsonNode[] = [{ value: body, key: null, parent: null, depth: 1 }];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const { value, key } = node;
    if (key !== null && !key.isWellFormed()) {
      return { field: pathOf(node, root), message: "the key contains a lone UTF-16 surrogate (half a character)" };
    }
    if (key === "__proto__") return { field: pathOf(node, root), message: '"__proto__" is not accepted as a key' };
    if (typeof value === "string") {
      if (!value.isWellFormed()) {
        return { field: pathOf(node, root), message: "contains a lone UTF-16 surrogate (half a character)" };
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (node.depth > MAX_JSON_DEPTH) {
      return {
        field: pathOf(node, root),
        message: `nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
      };
    }
    // Pushed last to first, so that the first child is checked first.
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((item, index) => [String(index), item])
      : Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [childKey, child] = entries[i] as [string, unknown];
      stack.push({ value: child, key: childKey, parent: node, depth: node.depth + 1 });
    }
  }
  return null;
}

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
  throw new ApiError("validation_failed", `Invalid ${issue.field}: ${issue.message}`, issue.field);
}

/** Reads a JSON body (size-limited, content-type checked), refuses what jsonBodyProblem finds, and validates it. */
export async function jsonBody<T>(c: Context<AppEnv>, schema: z.ZodType<T>): Promise<T> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(
      "unsupported_media_type",
      "Send the body as JSON with 'Content-Type: application/json'.",
      "content-type",
    );
  }
  const text = await bodyText(c, MAX_BODY_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "The body is not valid JSON.");
  }
  return parseJson(schema, value);
}

/**
 * Validates a parsed JSON value (a body; an MCP tool call's arguments, `root` "arguments"): first what
 * jsonBodyProblem refuses in any body, then the schema.
 */
export function parseJson<T>(schema: z.ZodType<T>, value: unknown, root = "(body)"): T {
  const problem = jsonBodyProblem(value, root);
  if (problem) {
    throw new ApiError("validation_failed", `Invalid ${problem.field}: ${problem.message}.`, problem.field);
  }
  return parseWith(schema, value, root);
}

/** A body as UTF-8 text, up to `limit` bytes (413 beyond, 400 for bytes that are not UTF-8). */
export async function bodyText(c: Context<AppEnv>, limit: number): Promise<string> {
  const bytes = await bodyBytes(c, limit);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "The body is not valid UTF-8.");
  }
}

/** A body's bytes, up to `limit` (413 beyond, from the Content-Length or as soon as reading passes it). */
export async function bodyBytes(c: Context<AppEnv>, limit: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    throw new ApiError("payload_too_large", `The body is larger than ${limit} bytes.`);
  }
  return readLimited(c.req.raw.body, limit);
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
      throw new ApiError("payload_too_large", `The body is larger than ${limit} bytes.`);
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
