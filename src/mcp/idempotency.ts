// Idempotency keys for MCP tool calls. A call in flight when the task's object is evicted or the runtime restarts is
// sent again when the run resumes (its result was never journaled), so delivery is at-least-once. Every tools/call
// therefore carries a key that names the call, not the request: the same on every re-send of it, different for every
// other call. A server that runs a key once and answers repeats with the stored result gives exactly-once effects.
// The key travels twice: in params._meta (MCP's place for request metadata, seen by the tool handler on every
// transport) and in the Idempotency-Key HTTP header (seen by gateways and HTTP middleware that never parse JSON-RPC).
import { sha256Hex } from "../lib/sha256.ts";

/** The HTTP header of a tools/call POST (the name of the IETF draft and of Stripe-style APIs). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The key in a tools/call's params._meta; a reverse-DNS prefix as the MCP spec asks of _meta keys. */
export const IDEMPOTENCY_META_KEY = "io.outpost/idempotency-key";
/** Says what the key is in a server's logs, and lets the derivation change later without colliding with old keys. */
const KEY_PREFIX = "outpost-v1-";

/**
 * The key of one call: the task it belongs to, the model's tool_use id, and the full tool name (mcp__<server>__<tool>),
 * so a fallback tool tried for the same tool_use is a call of its own. Hashed so the key has a fixed length and
 * shows no task id to the server; the parts are joined by NUL, which none of them can contain, so two different
 * triples never hash the same input.
 */
export async function mcpIdempotencyKey(call: {
  taskId: string;
  toolUseId: string;
  toolName: string;
}): Promise<string> {
  return KEY_PREFIX + (await sha256Hex([call.taskId, call.toolUseId, call.toolName].join("\u0000")));
}

/**
 * The key a JSON-RPC request body carries in params._meta when it is a tools/call; undefined for any other body.
 * The SDK's transports give a fetch no per-request headers, so the header is derived from the body the fetch sends.
 */
export function idempotencyKeyOfBody(body: string): string | undefined {
  // Most POSTs (initialize, tools/list, notifications) carry no key: skip parsing them.
  if (!body.includes(IDEMPOTENCY_META_KEY)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(message) || message.method !== "tools/call" || !isRecord(message.params)) return undefined;
  const meta = message.params._meta;
  const key = isRecord(meta) ? meta[IDEMPOTENCY_META_KEY] : undefined;
  return typeof key === "string" ? key : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
