// When a failed delivery is tried again: the delays between attempts, the operator's
// (OUTPOST_CALLBACK_RETRY_SECONDS) or the default. A delivery gets one attempt more than the schedule has delays.

/** Seconds to wait after each failed attempt: 6 attempts over about an hour (0, 10 s, 1 min, 5 min, 15 min, 40 min). */
export const DEFAULT_RETRY_SECONDS: readonly number[] = [10, 60, 300, 900, 2400];

/** The operator's delays between attempts (OUTPOST_CALLBACK_RETRY_SECONDS, comma-separated), or the default. */
export function retrySchedule(configured: string | undefined): readonly number[] {
  const values = (configured ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean)
    .map(Number);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v) || v < 0 || v > 86_400)) {
    return DEFAULT_RETRY_SECONDS;
  }
  return values;
}
