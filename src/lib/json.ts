// A JSON value, as a type and a zod schema: what the API's free-form fields hold (a tool call's input, an error's
// details, a checkpoint's metadata). Durable Object RPC types a method's result by what it can carry and collapses
// `unknown` to never; a field typed Json keeps the result typed, so the Worker reads it without a cast. The arrays and
// objects are interfaces on purpose: RPC's Serializable check recurses into a type alias until tsc gives up.
import { z } from "zod";

export type Json = string | number | boolean | null | JsonArray | JsonObject;

export interface JsonArray extends Array<Json> {}

/**
 * A JSON object. A member may be undefined, as an optional member of a typed object is: JSON.stringify leaves it out,
 * and RPC carries it as absent.
 */
export interface JsonObject {
  [key: string]: Json | undefined;
}

/** Any JSON value (zod's z.json(), typed as Json). */
export const JsonSchema: z.ZodType<Json> = z.json();

/** A JSON object with any members. */
export const JsonObjectSchema: z.ZodType<JsonObject> = z.record(z.string(), JsonSchema);
