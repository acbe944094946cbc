// What an evaluation's run needs before its task starts: a token of the creation rate of the key that started the
// evaluation (src/tasks/creation-rate.ts), as the run is a task that key made, only later. A run that finds no room
// waits for it (the evaluation's alarm comes back when the bucket will have a token); once the key is gone from
// OUTPOST_API_KEYS (or is another tenant's, or may no longer run tasks), the runs not yet started fail. An evaluation
// created before evaluations kept their key takes no token.
import type { Env } from "../env.ts";
import { currentKey, takeCreationToken } from "../tasks/creation-rate.ts";

/** How long a run waits before trying again when OUTPOST_API_KEYS cannot be read (every request fails meanwhile). */
const BROKEN_KEYS_RETRY_MS = 60_000;

/** `cleared`: the token is taken; `wait`: no room until `until` (ms); `revoked`: the key is gone, and why. */
export type RunClearance = { kind: "cleared" } | { kind: "wait"; until: number } | { kind: "revoked"; why: string };

/** Clears one run of the evaluation `keyId` (of `tenant`) started; null or absent: one made before keys were kept. */
export async function clearRun(
  env: Pick<Env, "OUTPOST_API_KEYS" | "RATE_LIMITER" | "OUTPOST_RATE_LIMIT_PER_MINUTE">,
  tenant: string,
  keyId: string | null | undefined,
): Promise<RunClearance> {
  if (keyId === null || keyId === undefined) return { kind: "cleared" };
  let key: Awaited<ReturnType<typeof currentKey>>;
  try {
    key = await currentKey(env, tenant, keyId);
  } catch (error) {
    console.error("evaluation run: OUTPOST_API_KEYS is broken:", error instanceof Error ? error.message : "");
    return { kind: "wait", until: Date.now() + BROKEN_KEYS_RETRY_MS };
  }
  if (!key) return { kind: "revoked", why: `the API key that started the evaluation (${keyId}) is no longer listed` };
  const token = await takeCreationToken(env, key);
  if (token.allowed) return { kind: "cleared" };
  return { kind: "wait", until: Date.now() + token.retryAfterSeconds * 1000 };
}
