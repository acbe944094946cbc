// The HTTP API's wire schemas: request bodies, parameters and query strings. Types are inferred from them, and the
// README's API section documents the same limits.
import { z } from "zod";

export const MAX_INPUT_CHARS = 100_000;
/** Longest wait a client may ask of GET /v1/tasks/:id?wait= (seconds). */
export const MAX_WAIT_SECONDS = 60;

const MetadataValue = z.union([z.string().max(2_000), z.number(), z.boolean(), z.null()]);

export const CreateTaskBody = z.strictObject({
  input: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`),
  metadata: z
    .record(z.string().min(1).max(64), MetadataValue)
    .refine((m) => Object.keys(m).length <= 32, "at most 32 keys")
    .optional(),
});
export type CreateTaskBody = z.infer<typeof CreateTaskBody>;

export const TaskIdParam = z.uuid({ version: "v4" });

export const WaitQuery = z.coerce.number().finite().min(0).max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS}`);

/** An SSE cursor: Last-Event-ID header or ?after=. */
export const EventCursor = z
  .string()
  .regex(/^\d{1,15}$/, "must be a non-negative integer event sequence number")
  .transform(Number);

/** Artifact paths are relative, with no empty, '.' or '..' segments. */
export const ArtifactPath = z
  .string()
  .min(1)
  .max(512)
  .refine((p) => p.split("/").every((s) => s.length > 0 && s !== "." && s !== ".."), "must be a relative file path");
