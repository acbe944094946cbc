// The checks the tests share that need no Workers runtime, so that the unit tests (project "unit", in Node) can
// import them without test/support/helpers.ts and its cloudflare: modules: what a function threw, an event record
// checked against the event catalog, and a workspace no test may touch. helpers.ts passes them on to the tests in
// workerd.
import { z } from "zod";
import { CUSTOM_EVENT_PREFIX, EVENT_CATALOG, EVENT_TYPES, type EventType } from "../../src/contracts/events.ts";
import { type EventRecord, EventRecordSchema } from "../../src/events/event-record.ts";
import { REDACTED, type RedactionMode } from "../../src/events/redaction.ts";
import type { Workspace } from "../../src/workspace/workspace.ts";

/** For unit tests that build a Toolbox outside a task: any use of the workspace fails the test. */
export const NO_WORKSPACE = new Proxy({} as Workspace, {
  get() {
    throw new Error("this test has no workspace");
  },
});

/** What `fn` threw, so a test can assert on the error's class, code and message; fails if it threw nothing. */
export function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

/** A record as sent: the seed 002 EventRecord, and no other member. */
const RecordSchema = z.strictObject(EventRecordSchema.shape);

/** An event of an agent's own (`custom_…`): any JSON object. */
const CustomPayloadSchema = z.record(z.string(), z.unknown());

/** Each event type's payload schema as a stream in each mode shows it. */
const payloadSchemas = new Map<string, z.ZodType>();

/**
 * The catalog's payload schema of `type` in `mode`: in redacted mode, each content field may be [REDACTED] instead.
 * Strict: a field the catalog does not list fails.
 */
function payloadSchema(type: EventType, mode: RedactionMode): z.ZodType {
  const key = `${type} ${mode}`;
  let schema = payloadSchemas.get(key);
  if (!schema) {
    const { payload, content } = EVENT_CATALOG[type];
    const redactable = (object: z.ZodObject) =>
      mode === "full"
        ? object
        : object.extend(
            Object.fromEntries(
              (content as readonly string[]).flatMap((field) => {
                const value = object.shape[field];
                return value ? [[field, value.or(z.literal(REDACTED))]] : [];
              }),
            ),
          );
    schema =
      "shape" in payload
        ? redactable(payload)
        : z.discriminatedUnion(payload.def.discriminator, payload.options.map(redactable) as [z.ZodObject]);
    payloadSchemas.set(key, schema);
  }
  return schema;
}

/**
 * An event record checked against the event catalog (src/contracts/events.ts): the record's members, its type (the
 * catalog's, or an agent's own `custom_…`) and its payload, strictly, against its type's schema in the record's
 * redaction mode. Throws with what does not match; returns the record as it is.
 */
export function checkEvent(json: unknown): EventRecord {
  const record = RecordSchema.parse(json);
  const type = record.event_type;
  const builtIn = (EVENT_TYPES as readonly string[]).includes(type);
  if (!builtIn && !type.startsWith(CUSTOM_EVENT_PREFIX)) {
    throw new Error(`${type} is not in the event catalog: ${JSON.stringify(json)}`);
  }
  const schema = builtIn ? payloadSchema(type as EventType, record.redaction_mode) : CustomPayloadSchema;
  const checked = schema.safeParse(record.payload);
  if (!checked.success) {
    throw new Error(
      `${type} (seq ${record.seq}) does not match the event catalog: ${z.prettifyError(checked.error)}\n${JSON.stringify(json)}`,
    );
  }
  return json as EventRecord;
}
