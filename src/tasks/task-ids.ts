// Where a task lives: its id names its Durable Object within its tenant, so a request from another tenant reaches
// an object that holds nothing (404) and can never address the task. Ids derived from a client's idempotency key
// or a webhook's delivery id make a repeated request land on the same object, which creates the task only once.
import type { Env } from "../env.ts";
import { sha256Bytes, toHex } from "../lib/sha256.ts";
import { DEFAULT_TENANT } from "../tenants/api-keys.ts";
import type { TaskInit } from "./task.ts";

/** The object name of a task. The default tenant keeps bare ids, the names its tasks had before tenants. */
export function taskObjectName(tenant: string, taskId: string): string {
  return tenant === DEFAULT_TENANT ? taskId : `${tenant}/${taskId}`;
}

export function taskStubFor(env: Pick<Env, "TASKS">, tenant: string, taskId: string) {
  return env.TASKS.get(env.TASKS.idFromName(taskObjectName(tenant, taskId)));
}

/**
 * The task's view once it has ended or after `timeoutMs` (TaskObject.wait). A long wait is the request most likely
 * to be in the object when it is reset (an eviction, a deploy, an evict_after_step fault): the read is safe to
 * repeat, so it is asked once more for the time left, through a new stub (a stub whose object was reset stays
 * broken), of the new instance, which resumes the run as any reader does.
 */
export async function waitOnTask<T>(
  stub: () => { wait(timeoutMs: number): Promise<T> },
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  try {
    return await stub().wait(timeoutMs);
  } catch {
    return await stub().wait(Math.max(0, deadline - Date.now()));
  }
}

/**
 * Creates the task in its object and starts its run, or finds it created under the same id before (StartOutcome):
 * the one call through which every way of starting a task starts it (the API's routes, webhook deliveries, schedules).
 */
export function startInObject(env: Pick<Env, "TASKS">, tenant: string, init: TaskInit) {
  return taskStubFor(env, tenant, init.id).start(init);
}

/** A version 4 UUID determined by `parts` (SHA-256, with the version and variant bits set). */
export async function derivedTaskId(...parts: string[]): Promise<string> {
  const bytes = (await sha256Bytes(parts.join("\u0000"))).slice(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
