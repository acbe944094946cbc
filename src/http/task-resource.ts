// The task as the API finds and returns it: the object a request's task id names (404 for a task that never existed,
// 410 for an expired one), and the stored view plus links to everything about it, cut to what the request's key
// may read. Every response that carries a task, a callback delivery or a human decision is shaped here, so a key
// that may act but not read (scope `run` without `read` or `admin`) never gets from a POST what a GET would refuse
// it: it gets ids, status and links, never the task's input, result, error, pending input or a callback's payload.
import type { Context } from "hono";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import type { HumanDecision } from "../approvals/requests.ts";
import type { Delivery } from "../callbacks/delivery.ts";
import { mayRead as principalMayRead } from "../commands/principal.ts";
import { ApiError } from "../errors.ts";
import type { TaskView } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import type { AppEnv } from "./app-env.ts";
import type { DecisionReceipt, DeliveryReceipt, TaskLinks, TaskReceipt, TaskResource } from "./responses.ts";
import { TaskIdParam } from "./schemas.ts";

/** The stub of the task's object; a malformed id is answered like an unknown one, without touching storage. */
export function taskStub(c: Context<AppEnv>) {
  const raw = c.req.param("id") ?? "";
  if (!TaskIdParam.safeParse(raw).success) throw taskNotFound(raw);
  // The tenant is part of the object's name: another tenant's task id reaches an empty object (404).
  return { id: raw, stub: taskStubFor(c.env, c.get("tenant"), raw) };
}

/** 404 for a task that never existed; 410 task_expired for one its retention policy has deleted. */
export async function missingTask(stub: DurableObjectStub<TaskObject>, id: string): Promise<ApiError> {
  const expired = await stub.expired();
  if (expired) {
    return new ApiError(
      "task_expired",
      `Task ${id} expired at ${expired.expired_at} under the retention policy; its record and files were deleted.`,
      "id",
    );
  }
  return taskNotFound(id);
}

function taskNotFound(id: string): ApiError {
  return new ApiError("task_not_found", `No task with id "${id}".`, "id");
}

/** Whether the request's key may read what it acts on (`read`, or `admin`, which may do everything). */
export function mayRead(c: Context<AppEnv>): boolean {
  return principalMayRead(c.get("apiKey"));
}

export function taskResource(c: Context<AppEnv>, task: TaskView): TaskResource | TaskReceipt {
  const self = `${new URL(c.req.url).origin}/v1/tasks/${task.id}`;
  const links: TaskLinks = {
    self,
    events: `${self}/events`,
    messages: `${self}/messages`,
    artifacts: `${self}/artifacts`,
    workspace: `${self}/workspace`,
    checkpoints: `${self}/checkpoints`,
    trace: `${self}/trace`,
    resume: `${self}/resume`,
    cancel: `${self}/cancel`,
    deliveries: `${self}/deliveries`,
  };
  if (!mayRead(c)) {
    return {
      id: task.id,
      status: task.status,
      parent_task_id: task.parent_task_id,
      last_event_seq: task.last_event_seq,
      links,
    };
  }
  return { ...task, links };
}

export function deliveryResource(c: Context<AppEnv>, delivery: Delivery): Delivery | DeliveryReceipt {
  if (mayRead(c)) return delivery;
  const { id, event_type, event_seq, status, next_attempt_at, created_at } = delivery;
  return { id, event_type, event_seq, status, next_attempt_at, created_at };
}

export function decisionResource(c: Context<AppEnv>, decision: HumanDecision): HumanDecision | DecisionReceipt {
  if (mayRead(c)) return decision;
  const { request_id, action, decided_by, decided_at } = decision;
  return { ...(request_id !== undefined ? { request_id } : {}), action, decided_by, decided_at };
}
