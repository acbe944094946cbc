// The session as its object returns it (SessionView): its row as seed 004 shows a session (status, busy policy,
// usage), the history as plain {role, content} text (seed 004 section 3b), its turns with their ExecutionResults, and
// what a waiting turn asks for. Everything text in it that the runtime did not write is redacted.
import { pendingRequest } from "../approvals/requests.ts";
import type { Redactor } from "../events/redaction.ts";
import type { StoredMessage } from "../runtime/conversation.ts";
import { RUNTIME_AGENT_STATE_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { waitingFor } from "../tasks/waiting-for.ts";
import type { HistoryEntry, SessionStatus, SessionView } from "./session.ts";
import { type Turn, turnView } from "./turns.ts";

export interface SessionViewSources {
  status: SessionStatus;
  turns: readonly Turn[];
  messages: readonly StoredMessage[];
  state: Pick<TaskState, "get">;
  redactor: Pick<Redactor, "value">;
  lastEventSeq: number;
}

export function sessionView(session: TaskRecord, from: SessionViewSources): SessionView {
  const stored = from.status === "input_required" ? pendingRequest(from.state) : undefined;
  const current = from.turns.find((t) => t.status === "running");
  return {
    id: session.id,
    agent: session.assigned_agent,
    agent_version: from.state.get(RUNTIME_AGENT_STATE_KEY)?.version ?? null,
    status: from.status,
    busy: session.busy ?? "reject",
    metadata: session.metadata,
    model: session.model,
    history: from.redactor.value(history(from.messages)),
    usage: session.usage,
    turns: from.redactor.value(from.turns.map((t) => turnView(session.id, t))),
    current_turn_id: current?.id ?? null,
    pending_input: stored ? from.redactor.value(stored) : null,
    waiting_for: waitingFor(session.status, from.state),
    created_at: session.created_at,
    closed_at: session.status === "closed" ? session.completed_at : null,
    retention_days: session.retention_days,
    expires_at: session.status === "closed" ? session.expires_at : null,
    last_event_seq: from.lastEventSeq,
  };
}

/** The conversation's text: each message's text blocks (tool calls and their results are the turns' business). */
export function history(messages: readonly StoredMessage[]): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  for (const message of messages) {
    const text =
      typeof message.content === "string"
        ? message.content
        : message.content
            .flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
            .join("\n");
    if (text) entries.push({ role: message.role, content: text });
  }
  return entries;
}
