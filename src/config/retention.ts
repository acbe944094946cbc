// How long an ended task is kept (seed 003 retention policy): default_days, by_status, by_task (task tags). The
// operator overrides any part with OUTPOST_RETENTION (JSON). When a task expires, its object deletes its storage and
// its R2 objects, and keeps only a tombstone so the API can answer 410 rather than 404.
import { z } from "zod";
import { ConfigError } from "../errors.ts";

const Days = z.number().int().min(1).max(3650);

const PolicySchema = z.strictObject({
  default_days: Days.default(7),
  by_status: z
    .strictObject({ completed: Days.optional(), failed: Days.optional(), canceled: Days.optional() })
    .default({ completed: 7, failed: 14 }),
  by_task: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/), Days).default({ critical: 30, debug: 3 }),
});

export type RetentionPolicy = z.output<typeof PolicySchema>;

/** Seed 003's policy: 7 days; completed 7, failed 14; tasks tagged critical 30, debug 3. */
export const DEFAULT_RETENTION: RetentionPolicy = PolicySchema.parse({});

export function loadRetentionPolicy(raw: string | undefined): RetentionPolicy {
  if (!raw?.trim()) return DEFAULT_RETENTION;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError("OUTPOST_RETENTION is not valid JSON.");
  }
  const parsed = PolicySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`OUTPOST_RETENTION.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}.`);
  }
  return parsed.data;
}

/** The operator's policy, or the seed's when OUTPOST_RETENTION is broken (logged; a run must not fail over it). */
export function retentionPolicyOrDefault(raw: string | undefined): RetentionPolicy {
  try {
    return loadRetentionPolicy(raw);
  } catch (error) {
    console.error("OUTPOST_RETENTION ignored:", error instanceof Error ? error.message : error);
    return DEFAULT_RETENTION;
  }
}

/**
 * Days to keep a task: an explicit retention_days wins; else the longest by_task rule among its tags; else (once it
 * has ended) its status rule; else default_days.
 */
export function retentionDays(
  policy: RetentionPolicy,
  task: { explicit: number | null; tags: readonly string[]; status?: "completed" | "failed" | "canceled" },
): number {
  if (task.explicit !== null) return task.explicit;
  const tagged = task.tags.map((t) => policy.by_task[t]).filter((d): d is number => d !== undefined);
  if (tagged.length > 0) return Math.max(...tagged);
  const byStatus = task.status ? policy.by_status[task.status] : undefined;
  return byStatus ?? policy.default_days;
}

export const DAY_MS = 24 * 60 * 60 * 1000;
