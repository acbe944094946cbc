// Seed 004's ExecutionResult: what one turn of a conversation produced, whoever ran it (a session's message, an
// invoke_once call). A contract, since the turn_finished event carries it (src/contracts/events.ts) and the session's
// turns show it (src/sessions/); built in src/runtime/execution-result.ts. A wire type: a zod schema built on first
// use (z.lazy), like every wire schema.
import { z } from "zod";
import { JsonSchema } from "../lib/json.ts";

export const ExecutionResultSchema = z.lazy(() =>
  z.strictObject({
    /** The agent's final text response (empty when the turn failed before one). */
    response: z.string(),
    /** The tool calls the turn made, in order. */
    tool_calls: z.array(z.strictObject({ name: z.string(), arguments: JsonSchema, call_id: z.string() })),
    /** What each call returned, as text; a failed call is is_error and the turn goes on. */
    tool_results: z.array(z.strictObject({ call_id: z.string(), result: z.string(), is_error: z.boolean() })),
    /** Tokens the turn used: prompt_tokens counts input and cache tokens, completion_tokens output tokens. */
    token_usage: z.strictObject({
      prompt_tokens: z.number().int().nonnegative(),
      completion_tokens: z.number().int().nonnegative(),
      total_tokens: z.number().int().nonnegative(),
    }),
    /** The validated object when the agent has a response_format; null otherwise. */
    structured_output: JsonSchema.nullable(),
    /** Model turns (agent loop iterations) the turn took. */
    num_turns: z.number().int().nonnegative(),
    is_error: z.boolean(),
    /** Why the turn failed (e.g. "max_turns limit reached (…)"), or null. */
    error_reason: z.string().nullable(),
  }),
);
export type ExecutionResult = z.infer<typeof ExecutionResultSchema>;
