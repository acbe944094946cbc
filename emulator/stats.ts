// The emulator's stats: one record per model request, and what GET /_emulator/stats answers from them (the records
// a task or a script asked for, and per script the requests its service conditions refused, by kind).
import type { AuthRecord } from "./auth.ts";
import type { BilledUsage } from "./billing.ts";
import { REFUSAL_KINDS, type RefusalKind } from "./conditions.ts";
import type { Provider } from "./reply.ts";

/** A prompt cache unit of a request, as the stats give it (emulator/prompt-units.ts). */
export interface PromptUnitRecord {
  tokens: number;
  /** The hash of the prompt up to and including this unit: two requests share a prefix exactly where these agree. */
  prefix_hash: string;
}

export interface RequestRecord {
  request_id: string;
  /** The wire format the request came in. */
  provider: Provider;
  /** The request's path, e.g. /v1/messages. */
  path: string;
  /** What the endpoint saw of the credentials, where it checks them (emulator/auth.ts); null where it does not. */
  auth: AuthRecord | null;
  task_id: string | null;
  model: string | null;
  stream: boolean;
  turn: number;
  script_match: string | null;
  /** HTTP status sent; 0 when the emulator dropped the connection without one (non-streaming stall). */
  status: number;
  fault: string | null;
  /** Why the script's service conditions refused the request (emulator/conditions.ts); null when they did not. */
  refusal: RefusalKind | null;
  started_at_ms: number;
  ended_at_ms: number;
  /** Emulator time from the complete request body to the end of the response, configured latency included. */
  service_ms: number;
  /** The usage as billed, in the Anthropic vocabulary whatever the wire; null when the request was not answered. */
  usage: BilledUsage | null;
  /** The prompt's cacheable units in order (empty when its body could not be read). */
  prompt_units: PromptUnitRecord[];
  /** The indexes of the units that carried a breakpoint (cache_control, the request-level one included). */
  breakpoints: number[];
  /** The model's minimum cacheable length in force (a script's min_cacheable_tokens included); null without a model. */
  min_cacheable_tokens: number | null;
  /** The emulator's time to first token for the response (prefill included); null when it sent no reply. */
  ttft_ms: number | null;
}

/** Per script match, how many of its requests were refused, by kind. */
export type RefusalCounts = Record<string, Record<RefusalKind, number>>;

export interface StatsAnswer {
  requests: RequestRecord[];
  refusals: RefusalCounts;
}

/**
 * The records of one task (`taskId`) or one script (`match`), or all; and the refusals among them per script, with
 * every script in `conditioned` (the matches of the scripts that have service conditions) listed even at zero, so a
 * bench reads a count rather than a missing key.
 */
export function statsAnswer(
  records: readonly RequestRecord[],
  filters: { taskId: string | null; match: string | null },
  conditioned: readonly string[],
): StatsAnswer {
  const { taskId, match } = filters;
  const requests = records.filter(
    (record) => (taskId === null || record.task_id === taskId) && (match === null || record.script_match === match),
  );
  const refusals: RefusalCounts = {};
  const countsOf = (script: string) => {
    refusals[script] ??= Object.fromEntries(REFUSAL_KINDS.map((kind) => [kind, 0])) as Record<RefusalKind, number>;
    return refusals[script];
  };
  for (const script of conditioned) if (match === null || script === match) countsOf(script);
  for (const record of requests) {
    if (record.refusal !== null && record.script_match !== null) countsOf(record.script_match)[record.refusal]++;
  }
  return { requests, refusals };
}
