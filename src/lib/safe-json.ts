// JSON that never throws, for records that must be written whatever a caller put in them (an event's payload: an
// agent's metadata, a tool's details).

/**
 * JSON for a payload that never throws: an event must be recorded whatever an agent put in it. BigInts become
 * strings; a payload that still cannot be serialised (a cycle) is replaced by a note saying so.
 */
export function serializePayload(payload: Record<string, unknown>): string {
  try {
    // Without a replacer first: a replacer function costs a call per key, and only a BigInt needs one (it throws).
    return JSON.stringify(payload);
  } catch {
    // a BigInt, or something no replacer can fix: below
  }
  try {
    return JSON.stringify(payload, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
  } catch (error) {
    return JSON.stringify({ unserializable_payload: error instanceof Error ? error.message : String(error) });
  }
}
