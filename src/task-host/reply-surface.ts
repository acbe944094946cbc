// A task's replies as the RPCs see them (src/approvals/replies.ts): the request an A2A answer showed a client, and a
// reply bound to the request it was shown, with the facts the rule needs read from the task (what it shows waiting,
// its sub-agents' requests, its decisions, its delivered callbacks). The object's class delegates to this.

import {
  bindReply,
  REPLIES_KEY,
  type Reply,
  type ReplyBinding,
  type ReplyCall,
  type ReplyFacts,
  SHOWN_REQUEST_KEY,
} from "../approvals/replies.ts";
import { decisionKey, pendingRequest } from "../approvals/requests.ts";
import type { TaskHost } from "./task-host.ts";

export class ReplySurface {
  private readonly host: TaskHost;

  constructor(host: TaskHost) {
    this.host = host;
  }

  /** The object's RPC: a request shown (answered null), or a reply bound (null for an unknown task). */
  async call(call: ReplyCall): Promise<ReplyBinding | null> {
    if ("shown" in call) {
      this.shown(call.shown);
      return null;
    }
    return this.bind(call.reply);
  }

  /** An A2A answer showed a client the request the task waits for: a bare reply may answer it now. */
  shown(requestId: string): void {
    const { host } = this;
    const task = host.task();
    if (!task) return;
    const view = host.view(task);
    if (view.status !== "input_required" || view.pending_input?.request_id !== requestId) return;
    if (host.state.get(SHOWN_REQUEST_KEY) !== requestId) host.state.put(SHOWN_REQUEST_KEY, requestId);
  }

  /**
   * Binds a reply to what the task waits for (src/approvals/replies.ts); null for an unknown task. A binding that
   * answers with what waits shows it, as an A2A answer does.
   */
  bind(reply: Reply): ReplyBinding | null {
    const { host } = this;
    const task = host.task();
    if (!task) return null;
    const { binding, remember } = bindReply(this.facts(), host.state.get(REPLIES_KEY) ?? [], reply);
    host.supervisor.transaction(() => {
      if (remember) host.state.put(REPLIES_KEY, remember);
      if (binding.outcome === "pending" && binding.request) {
        host.state.put(SHOWN_REQUEST_KEY, binding.request.request_id);
      }
    });
    return binding;
  }

  private facts(): ReplyFacts {
    const { host } = this;
    const task = host.requireTask();
    const view = host.view(task);
    const pending = view.status === "input_required" ? view.pending_input : null;
    // The task's own request (a running parent shows a sub-agent's, and has none of its own).
    const own = task.status === "input_required" && pendingRequest(host.state) ? 1 : 0;
    return {
      status: view.status,
      shown: pending ? { request_id: pending.request_id, kind: pending.kind, tool_name: pending.tool_name } : null,
      waiting: own + host.subagents.waitingChildren().length,
      isRequest: (id) =>
        id === pending?.request_id ||
        host.state.get(decisionKey(id)) !== undefined ||
        host.subagents.childFor(id) !== undefined,
      wasShown: (id) =>
        host.state.get(SHOWN_REQUEST_KEY) === id ||
        host.callbacks
          .list()
          .some(
            (delivery) =>
              delivery.status === "delivered" &&
              delivery.payload.type === "task.input_required" &&
              delivery.payload.data.pending_input.request_id === id,
          ),
    };
  }
}
