// A2A push notifications (docs/a2a.md) as more targets of a task's callbacks: the configs a task keeps in its
// key/value state (set through A2A's push-notification config methods, so they live and die with the task's object),
// and the body an A2A receiver gets. The outbox (outbox.ts) turns the same four moments into a delivery per config,
// signed, retried, judged by the callback policy at every attempt and logged like the task's webhook's.
import { z } from "zod";
import { type StateKey, stateKey } from "../lib/state-key.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { type CallbackPayload, CallbackPayloadSchema } from "./payload.ts";

/** The task metadata key that names the A2A context a task was started in (src/a2a/task-mapping.ts). */
export const A2A_CONTEXT_METADATA_KEY = "a2a_context_id";
/** Most configs one task keeps: each is a delivery at every moment. */
export const MAX_PUSH_CONFIGS = 10;
/** A config's id: it is part of its deliveries' ids (webhook-id). */
export const PUSH_CONFIG_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The header that carries a config's token to the receiver (A2A's, as the SDK's sender names it). */
export const NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token";

const PushConfigSchema = z.lazy(() =>
  z.object({
    id: z.string(),
    url: z.string(),
    /** What the receiver gets in X-A2A-Notification-Token to tell this task's notifications apart ("" for none). */
    token: z.string(),
    /** Sent as `Authorization: <scheme> <credentials>`; never shown again once set. */
    authentication: z.object({ scheme: z.string(), credentials: z.string() }).nullable(),
    /** The event it was set after: it is told of the moments after it. */
    after_seq: z.number().int().nonnegative(),
    created_at: z.string(),
  }),
);
export type PushConfig = z.infer<typeof PushConfigSchema>;

/** Where a task keeps its push configs in its key/value state. */
export const PUSH_CONFIGS_KEY: StateKey<PushConfig[]> = stateKey(
  "a2a_push_configs",
  z.lazy(() => z.array(PushConfigSchema)),
);

/** The A2A state of each callback moment. */
const A2A_STATES = {
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  input_required: "TASK_STATE_INPUT_REQUIRED",
} as const;

/**
 * What an A2A push notification POSTs: an A2A StreamResponse (a TaskStatusUpdateEvent, as A2A's push notifications
 * carry), whose metadata holds the Outpost callback the moment would send to the task's webhook (its result, error
 * or pending input). Signed with Standard Webhooks like every callback.
 */
export const PushPayloadSchema = z.lazy(() =>
  z.strictObject({
    statusUpdate: z.strictObject({
      taskId: z.uuid({ version: "v4" }),
      contextId: z.string(),
      status: z.strictObject({ state: z.enum(Object.values(A2A_STATES)), timestamp: z.iso.datetime() }),
      metadata: z.strictObject({ outpost: CallbackPayloadSchema }),
    }),
  }),
);
export type PushPayload = z.infer<typeof PushPayloadSchema>;

/** A push notification's body for a moment, around the callback it would send. */
export function pushPayload(task: TaskRecord, callback: CallbackPayload): PushPayload {
  const context = task.metadata[A2A_CONTEXT_METADATA_KEY];
  return {
    statusUpdate: {
      taskId: task.id,
      contextId: typeof context === "string" ? context : task.id,
      status: { state: A2A_STATES[callback.data.status], timestamp: callback.timestamp },
      metadata: { outpost: callback },
    },
  };
}

/** The delivery id of a push config's delivery of an event: the callback's, then the config's id. */
export function pushDeliveryId(callbackId: string, configId: string): string {
  return `${callbackId}_a2a_${configId}`;
}

/** The config a delivery is for, by its id; undefined for a delivery to the task's webhook. */
export function pushConfigIdOf(deliveryId: string): string | undefined {
  const at = deliveryId.indexOf("_a2a_");
  return at === -1 ? undefined : deliveryId.slice(at + "_a2a_".length);
}

/** A task's push configs, in its key/value state. */
export class PushConfigs {
  private readonly state: Pick<TaskState, "get" | "put">;

  constructor(state: Pick<TaskState, "get" | "put">) {
    this.state = state;
  }

  list(): PushConfig[] {
    return this.state.get(PUSH_CONFIGS_KEY) ?? [];
  }

  get(id: string): PushConfig | undefined {
    return this.list().find((config) => config.id === id);
  }

  /** Sets a config (replacing one with its id); "full" when the task has MAX_PUSH_CONFIGS others. */
  put(config: PushConfig): PushConfig | "full" {
    const others = this.list().filter((c) => c.id !== config.id);
    if (others.length >= MAX_PUSH_CONFIGS) return "full";
    this.state.put(PUSH_CONFIGS_KEY, [...others, config]);
    return config;
  }

  /** Removes a config. Returns whether there was one. */
  delete(id: string): boolean {
    const all = this.list();
    const kept = all.filter((c) => c.id !== id);
    if (kept.length === all.length) return false;
    this.state.put(PUSH_CONFIGS_KEY, kept);
    return true;
  }

  /** The headers a delivery to the config carries besides its signature: its token and its authentication. */
  headersFor(configId: string): Record<string, string> {
    const config = this.get(configId);
    if (!config) return {};
    return {
      ...(config.token ? { [NOTIFICATION_TOKEN_HEADER]: config.token } : {}),
      ...(config.authentication
        ? { authorization: `${config.authentication.scheme} ${config.authentication.credentials}` }
        : {}),
    };
  }
}
