// A task's sub-agents as the RPCs see them (src/subagents/): its delegations, its children's reports (an end, or a
// request for a person), the places of its tree of sub-agents, and its children's forwarded events. A child task
// calls these on its parent's object (on its root's for a place in the tree), a session's turn delegating as a task's
// run does. The object's class (durable-objects/task-object.ts) delegates to this.
import type { SubagentRecord, SubagentReport, SubagentWaitReport, TreeAdmission } from "../contracts/subagents.ts";
import type { ForwardedBatch } from "../events/event-tree.ts";
import type { TaskHost } from "./task-host.ts";

export class SubagentSurface {
  private readonly host: TaskHost;

  constructor(host: TaskHost) {
    this.host = host;
  }

  /** The task's delegations to sub-agents, oldest first; null when there is no task. */
  async subagentList(): Promise<SubagentRecord[] | null> {
    return this.host.task() ? this.host.subagents.list() : null;
  }

  /** A sub-agent's child task ended (its report, sent until acknowledged; the same one again changes nothing). */
  async subagentEnded(report: SubagentReport): Promise<void> {
    const { host } = this;
    // A session's turn delegates as a task's run does.
    if (!host.record()) return;
    await host.supervisor.subagentEnded(report, (r) => host.subagents.record(r));
  }

  /**
   * What a sub-agent's child task waits for from a person (its report, sent until acknowledged; the same one again
   * changes nothing): the task shows it and answers it through its own resume.
   */
  async subagentWaiting(report: SubagentWaitReport): Promise<void> {
    const { host } = this;
    // A session's turn delegates as a task's run does: its stream shows the request, which the child answers.
    if (!host.record()) return;
    host.subagents.waiting(report);
    // The task's status as shown changed: its directory entry and callbacks follow.
    await host.supervisor.armOutbox();
  }

  /** A place in this root's tree for a child about to start, or why not (src/subagents/tree-limits.ts). */
  async admitToTree(childId: string, limit: number): Promise<TreeAdmission> {
    return this.host.places.admit(childId, limit);
  }

  /** Gives back the place of a child that did not start after all (its key had no token left). */
  async leaveTree(childId: string): Promise<void> {
    this.host.places.release(childId);
  }

  /**
   * A sub-agent's child task forwards its log here (src/subagents/event-forwarding.ts): each event is stored once, in
   * this task's sequence, before the call returns. Returns how many were new.
   */
  async forwardEvents(batch: ForwardedBatch): Promise<number> {
    return this.host.forwarded.receive(batch);
  }
}
