// A task's checkpoints as the RPCs read them: the list, one as a client sees it (its conversation redacted), one as a
// fork continues from it (unredacted), and what the task knows of the tool calls pending at it (src/tasks/fork.ts).
// A fork (POST /v1/tasks/:id/fork) and a replay read them from the origin's object. The object's class
// (durable-objects/task-object.ts) delegates to this.
import type { Checkpoint, CheckpointSummary } from "../runtime/checkpoints.ts";
import { toolCallLedger } from "../tasks/fork.ts";
import type { ToolCallLedger } from "../tasks/task.ts";
import type { TaskHost } from "./task-host.ts";

export class CheckpointSurface {
  private readonly host: TaskHost;

  constructor(host: TaskHost) {
    this.host = host;
  }

  /** What this task knows of these tool calls, for a fork of one of its checkpoints; null for an unknown task. */
  async toolCallLedger(toolUseIds: string[]): Promise<ToolCallLedger | null> {
    const task = this.host.task();
    return task ? toolCallLedger(this.host, task, toolUseIds) : null;
  }

  /** The task's checkpoints, oldest first, or null for an unknown task. */
  async checkpointList(): Promise<CheckpointSummary[] | null> {
    return this.host.task() ? this.host.checkpoints.list() : null;
  }

  /** One checkpoint with its state (messages included); null if the task or the checkpoint is unknown. */
  async checkpoint(checkpointId: string): Promise<Checkpoint | null> {
    const { host } = this;
    if (!host.task()) return null;
    // As a client reads it: the conversation redacted (a fork takes the state as it is, through forkPoint).
    const checkpoint = host.checkpoints.get(checkpointId);
    return (
      checkpoint && {
        ...checkpoint,
        state: { ...checkpoint.state, messages: host.redactor.value(checkpoint.state.messages) },
      }
    );
  }

  /**
   * A checkpoint as a fork continues from it: the conversation as the model had it, unredacted, since it goes from
   * this object to the fork's and is shown to clients by neither without redaction. Null as for checkpoint().
   */
  async forkPoint(checkpointId: string): Promise<Checkpoint | null> {
    return this.host.task() ? this.host.checkpoints.get(checkpointId) : null;
  }
}
