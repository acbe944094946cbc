// What an agent run produces (seed 000 AgentResult, FR-008): its output or its errors, and its usage
// (src/contracts/usage.ts). Wire types: snake_case, the same shapes the HTTP API returns.
import type { AgentUsage } from "../contracts/usage.ts";
import { type ErrorInfo, type OutpostError, toErrorInfo } from "../errors.ts";

export interface AgentResult {
  success: boolean;
  output: string;
  metadata: Record<string, unknown>;
  /** Never empty when success is false (FR-008). */
  errors: ErrorInfo[];
  usage: AgentUsage;
}

export function successResult(output: string, usage: AgentUsage, metadata: Record<string, unknown> = {}): AgentResult {
  return { success: true, output, metadata, errors: [], usage };
}

/** A failed result; throws if given no error, because a failure without a reason is not actionable. */
export function failureResult(
  errors: readonly (OutpostError | ErrorInfo | Error)[],
  usage: AgentUsage,
  metadata: Record<string, unknown> = {},
  output = "",
): AgentResult {
  if (errors.length === 0) throw new TypeError("failureResult needs at least one error (FR-008).");
  const infos = errors.map((e) => (e instanceof Error ? toErrorInfo(e) : e));
  return { success: false, output, metadata, errors: infos, usage };
}
