// A faulted case's run against its baseline (issue 17 §2): the same case and repetition run without the faults, so
// the report can say whether the agent's answer and tool effects came out the same despite the fault, and what the
// recovery cost. Pure: from the two runs as the evaluation's object stores them. With a real model two runs may
// differ without any fault; the emulator (npm run dev, the tests) answers the same conversation the same way.
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { Faults } from "../faults/faults.ts";
import type { FaultReport } from "./evaluation.ts";
import type { ClientCheck, RunRecord } from "./evaluation-store.ts";

/** The report of `run` (a faulted case's run) against `baseline`; the comparisons wait until both have ended. */
export function faultReport(run: RunRecord, baseline: RunRecord | undefined, faults: Faults): FaultReport {
  const injected = (run.injected ?? []).map(({ seq: _, ...fault }) => fault);
  const report: FaultReport = {
    faults,
    baseline_task_id: baseline?.taskId ?? run.taskId,
    injected,
    same_status: null,
    same_answer: null,
    same_tool_effects: null,
    differences: [],
    recovery: null,
    client: run.clientCheck,
  };
  if (!baseline?.result || !run.result) return report;
  const a = baseline.result;
  const b = run.result;
  const differences: string[] = [];
  if (run.injected !== null && injected.length === 0) {
    differences.push("No fault was injected: the run ended before any was due.");
  }
  report.same_status = a.is_error === b.is_error;
  if (!report.same_status) {
    differences.push(`Without the fault the run ${outcome(a)}; with it, it ${outcome(b)}.`);
  }
  report.same_answer =
    a.response.trim() === b.response.trim() && canonical(a.structured_output) === canonical(b.structured_output);
  if (!report.same_answer) differences.push("The answer differs from the one without the fault.");
  const effects = toolEffectDifferences(a, b);
  report.same_tool_effects = effects.length === 0;
  differences.push(...effects);
  if (report.client && !report.client.gapless) {
    differences.push("A client reconnecting after the drop did not get every later event once, in order.");
  }
  report.differences = differences;
  const ua = baseline.usage;
  const ub = run.usage;
  report.recovery = {
    model_calls: (ub?.model_calls ?? 0) - (ua?.model_calls ?? 0),
    tokens: (ub?.total_tokens ?? 0) - (ua?.total_tokens ?? 0),
    cost_usd:
      ua?.total_cost_usd == null || ub?.total_cost_usd == null
        ? null
        : Math.round((ub.total_cost_usd - ua.total_cost_usd) * 1e9) / 1e9,
    duration_ms: baseline.durationMs === null || run.durationMs === null ? null : run.durationMs - baseline.durationMs,
    retried_calls: ub?.recovery.attempts ?? 0,
    retried_tokens: (ub?.recovery.input_tokens ?? 0) + (ub?.recovery.output_tokens ?? 0),
  };
  return report;
}

function outcome(result: ExecutionResult): string {
  return result.is_error ? `failed (${result.error_reason ?? "no reason given"})` : "succeeded";
}

/** Tool calls compared in order (their ids differ between runs): name, arguments, and what each returned. */
function toolEffectDifferences(a: ExecutionResult, b: ExecutionResult): string[] {
  const out: string[] = [];
  const resultOf = (r: ExecutionResult, id: string) => r.tool_results.find((t) => t.call_id === id);
  const n = Math.max(a.tool_calls.length, b.tool_calls.length);
  for (let i = 0; i < n; i++) {
    const ca = a.tool_calls[i];
    const cb = b.tool_calls[i];
    if (!ca || !cb) {
      out.push(
        ca
          ? `Tool call ${i + 1} (${ca.name}) was made only without the fault.`
          : `Tool call ${i + 1} (${cb?.name}) was made only with the fault.`,
      );
      continue;
    }
    if (ca.name !== cb.name || canonical(ca.arguments) !== canonical(cb.arguments)) {
      out.push(`Tool call ${i + 1} differs: ${ca.name} without the fault, ${cb.name} with it, or other arguments.`);
      continue;
    }
    const ra = resultOf(a, ca.call_id);
    const rb = resultOf(b, cb.call_id);
    if (ra?.is_error !== rb?.is_error || ra?.result !== rb?.result) {
      out.push(
        `Tool call ${i + 1} (${cb.name}) returned ${rb?.is_error ? "an error" : "another result"} with the fault.`,
      );
    }
  }
  return out;
}

/** JSON with its object keys sorted, so that key order never counts as a difference. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );
}

/**
 * What a client reconnecting after a drop_client fault gets: the run's event stream from the event after the drop
 * (Last-Event-ID), read to its end. Gapless when its events are numbered on from `after` without a gap or a repeat
 * and the last is the run's terminal event.
 */
export async function resumedStreamCheck(
  stream: ReadableStream<Uint8Array> | null,
  after: number,
  isTerminal: (eventType: string) => boolean,
): Promise<ClientCheck> {
  const frames: { seq: number; event: string }[] = [];
  if (stream) {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
    for (const frame of text.split("\n\n")) {
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      const event = /^event: (.+)$/m.exec(frame)?.[1];
      if (id !== undefined && event !== undefined) frames.push({ seq: Number(id), event });
    }
  }
  const numbered = frames.every((f, i) => f.seq === after + i + 1);
  const last = frames.at(-1);
  return {
    dropped_after_seq: after,
    resumed_events: frames.length,
    gapless: frames.length > 0 && numbered && last !== undefined && isTerminal(last.event),
  };
}
