// SHA-256 through Web Crypto, the one copy every subsystem hashes with: API key digests, task ids derived from
// idempotency keys and webhook deliveries, request fingerprints, MCP idempotency keys, prompt hashes.

const encoder = new TextEncoder();

/** The digest of `value`'s UTF-8 bytes. */
export async function sha256Bytes(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

/** The digest of `value`'s UTF-8 bytes as 64 lowercase hex digits. */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(await sha256Bytes(value));
}

/** The two hex digits of each byte value. */
const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Bytes as lowercase hex, two digits each (a table lookup per byte: every request hashes its API key). */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX_PAIRS[byte];
  return hex;
}
