// The task as the API returns it: the stored view plus links to everything about it.
import type { Context } from "hono";
import type { TaskView } from "../tasks/task.ts";
import type { AppEnv } from "./app-env.ts";

export interface TaskResource extends TaskView {
  links: {
    self: string;
    events: string;
    messages: string;
    artifacts: string;
    workspace: string;
    checkpoints: string;
    resume: string;
    cancel: string;
    deliveries: string;
  };
}

export function taskResource(c: Context<AppEnv>, task: TaskView): TaskResource {
  const self = `${new URL(c.req.url).origin}/v1/tasks/${task.id}`;
  return {
    ...task,
    links: {
      self,
      events: `${self}/events`,
      messages: `${self}/messages`,
      artifacts: `${self}/artifacts`,
      workspace: `${self}/workspace`,
      checkpoints: `${self}/checkpoints`,
      resume: `${self}/resume`,
      cancel: `${self}/cancel`,
      deliveries: `${self}/deliveries`,
    },
  };
}
