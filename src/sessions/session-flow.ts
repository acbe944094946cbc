// How a session's messages become turns, in its Durable Object. A message is stored as a queued turn before anything
// runs; the oldest queued turn starts when the session is ready (its user message recorded in the conversation, after
// results for any tool call the turn before left unanswered); a turn's run is an ordinary run of the task machinery
// (src/runtime/) whose shape this gives: the conversation up to the turn's message, and the turn's end as its outcome.
// The turn ends with its ExecutionResult, and the next queued turn starts in the same transaction. Closing ends what
// runs and what is queued. Step names stay unique across turns: each turn numbers its model turns on from the turns
// before it, so nothing one turn did is ever run again by another.
import type { MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { AgentResult } from "../agents/result.ts";
import { PENDING_INPUT_KEY } from "../approvals/requests.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import { emptyUsage } from "../contracts/usage.ts";
import type { ErrorInfo } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Json, JsonObject } from "../lib/json.ts";
import type { MessageLog } from "../runtime/conversation.ts";
import { executionResult, runOutcome, type TurnOutcome } from "../runtime/execution-result.ts";
import { type RunShape, structuredOutputOf } from "../runtime/runner.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { SessionStatus } from "./session.ts";
import { isEnded, type Turn, type TurnLog } from "./turns.ts";

export interface SessionFlowDeps {
  store: TaskStore;
  events: EventLog;
  conversation: MessageLog;
  turns: TurnLog;
  state: Pick<TaskState, "delete">;
  transaction: <T>(fn: () => T) => T;
  /** Results of the given tool calls that ran to completion (the step journal's ledger), by tool_use id. */
  settledToolCalls: (toolUseIds: readonly string[]) => Promise<JsonObject>;
}

/** What a message did: started a turn, queued one, or queued one that interrupts the current turn; or was refused. */
export type SendOutcome =
  | { ok: true; turn: Turn; effect: "started" | "queued" | "interrupting" }
  | { ok: false; code: "session_closed" | "session_busy"; message: string };

/** The reason a turn interrupted by a newer message ends with. */
export const INTERRUPTED = "interrupted by a newer message";

/** What a tool call the turn before left unanswered gets as its result when the next turn starts. */
const UNANSWERED =
  "The call has no result: the turn it belonged to ended (interrupted, failed or out of turns) before it completed.";

export class SessionFlow {
  private readonly deps: SessionFlowDeps;

  constructor(deps: SessionFlowDeps) {
    this.deps = deps;
  }

  /** The session's status as seed 004 names it. */
  status(): SessionStatus {
    switch (this.deps.store.get()?.status) {
      case "closed":
        return "closed";
      case "input_required":
        return "input_required";
      case "pending":
      case "running":
        return this.deps.turns.current()?.streaming ? "streaming" : "processing";
      default:
        return "ready";
    }
  }

  /**
   * A new message, by the session's busy policy: stored as a queued turn (with turn_queued), then started at once
   * when the session is ready. `interrupting` asks the caller to stop the current turn's run.
   */
  async send(message: string, streaming: boolean): Promise<SendOutcome> {
    const { store, turns } = this.deps;
    const session = store.get();
    if (!session || session.status === "closed") {
      return { ok: false, code: "session_closed", message: "The session is closed: it takes no more messages." };
    }
    const current = turns.current();
    const busy = current !== null || turns.nextQueued() !== null;
    if (busy && session.busy === "reject") {
      return {
        ok: false,
        code: "session_busy",
        message: `A turn is under way (${current ? `turn ${current.index}` : "queued turns"}); the session's busy policy is reject. Send again once it has ended, or create the session with busy "enqueue" or "interrupt".`,
      };
    }
    const turn = this.deps.transaction(() => {
      const added = turns.add(crypto.randomUUID(), message, streaming);
      this.deps.events.append("turn_queued", { turn_id: added.id, index: added.index, message, streaming });
      if (current && session.busy === "interrupt") turns.interrupt(current.id);
      return added;
    });
    if (current && session.busy === "interrupt") return { ok: true, turn, effect: "interrupting" };
    const started = await this.startNext();
    return { ok: true, turn: turns.get(turn.id) ?? turn, effect: started?.id === turn.id ? "started" : "queued" };
  }

  /**
   * Starts the oldest queued turn if the session is ready. Returns the started turn, or null (the session is busy,
   * closed, or has nothing queued).
   */
  async startNext(): Promise<Turn | null> {
    if (this.deps.store.get()?.status !== "ready" || !this.deps.turns.nextQueued()) return null;
    const settled = await this.unansweredResults();
    return this.deps.transaction(() => this.startNow(settled));
  }

  /**
   * The run of the current turn. A turn interrupted while its object was away ends here first (canceled, keeping what
   * it did), and the turn after it is the one run. Null when no turn is under way.
   */
  async shape(): Promise<RunShape | null> {
    let turn = this.deps.turns.current();
    if (turn?.interrupted) {
      await this.finishTurn(turn.id, { canceled: INTERRUPTED });
      turn = this.deps.turns.current();
    }
    if (!turn || turn.firstMessage === null || turn.startModelTurn === null) return null;
    const { firstMessage, startModelTurn } = turn;
    const id = turn.id;
    return {
      input: turn.message,
      // The conversation up to the turn's message: the run replays the turn's own steps on top of it, as any run does.
      startFrom: {
        messages: this.deps.conversation.contextMessages().slice(0, firstMessage + 1),
        turn: startModelTurn,
        countTurnsFrom: startModelTurn,
      },
      finish: async (result) => {
        await this.finishTurn(id, { result });
      },
    };
  }

  /**
   * Ends a turn whose run has stopped, or that will not run again, and starts the next queued one in the same
   * transaction. An interrupted turn ends canceled, whatever its run returned.
   */
  async finishTurn(
    turnId: string,
    how: { result: AgentResult } | { canceled: string } | { crashed: ErrorInfo },
  ): Promise<ExecutionResult | null> {
    const settled = await this.unansweredResults();
    return this.deps.transaction(() => {
      const turn = this.deps.turns.get(turnId);
      if (!turn || isEnded(turn)) return null;
      let structured: Json | null = null;
      let status: "completed" | "failed" | "canceled";
      let outcome: TurnOutcome;
      if ("canceled" in how || turn.interrupted) {
        status = "canceled";
        const reason = "canceled" in how ? how.canceled : INTERRUPTED;
        outcome = "result" in how ? { ok: false, reason, response: how.result.output } : { ok: false, reason };
      } else if ("crashed" in how) {
        status = "failed";
        outcome = { ok: false, reason: how.crashed.message };
      } else {
        status = how.result.success ? "completed" : "failed";
        outcome = runOutcome(how.result);
        structured = structuredOutputOf(how.result);
      }
      const result = this.endNow(turn, status, outcome, structured);
      this.startNow(settled);
      return result;
    });
  }

  /**
   * Closes the session: a turn under way ends canceled (the caller stops its run), queued turns are dropped, and
   * session_closed is the stream's last event. Returns false when it was closed already.
   */
  close(reason: string): boolean {
    const { store, turns, events } = this.deps;
    return this.deps.transaction(() => {
      if (store.get()?.status === "closed") return false;
      const current = turns.current();
      if (current) this.endNow(current, "canceled", { ok: false, reason });
      for (const turn of turns.list()) if (turn.status === "queued") turns.end(turn.id, "canceled", null);
      if (!store.close()) return false;
      events.append("session_closed", { reason, turns: turns.count(), usage: store.get()?.usage ?? emptyUsage() });
      return true;
    });
  }

  /** Ends the turn with its ExecutionResult and turn_finished; the session is ready again. */
  private endNow(
    turn: Turn,
    status: "completed" | "failed" | "canceled",
    outcome: TurnOutcome,
    structured: Json | null = null,
  ): ExecutionResult {
    const { store, turns, conversation, events, state } = this.deps;
    const usage = store.get()?.usage ?? emptyUsage();
    const messages = turn.firstMessage === null ? [] : conversation.from(turn.firstMessage);
    const result = executionResult(messages, turn.usageBefore ?? usage, usage, outcome, structured);
    turns.end(turn.id, status, result);
    // A turn that waited for a person and was interrupted or closed: its question is no longer asked.
    if (store.get()?.status === "input_required") state.delete(PENDING_INPUT_KEY);
    store.endTurn();
    events.append("turn_finished", { turn_id: turn.id, index: turn.index, status, result });
    return result;
  }

  /**
   * Starts the oldest queued turn inside the caller's transaction, if the session is ready: the user message (after
   * results for the calls the last turn left unanswered), turn_started, and the row to pending for the run.
   */
  private startNow(settled: Unanswered): Turn | null {
    const { store, turns, conversation, events } = this.deps;
    const next = turns.nextQueued();
    if (store.get()?.status !== "ready" || !next) return null;
    // Computed before the transaction from the same last message; a message recorded since would make it stale.
    const unanswered = settled.index === conversation.nextIndex() ? settled.ids : [];
    const results: ToolResultBlockParam[] = unanswered.map((id) => settledResult(id, settled.results[id]));
    const user: MessageParam = {
      role: "user",
      content: results.length > 0 ? [...results, { type: "text", text: next.message }] : next.message,
    };
    const index = conversation.nextIndex();
    const startModelTurn = this.nextModelTurn();
    conversation.record(index, user);
    const started = events.append("turn_started", {
      turn_id: next.id,
      index: next.index,
      message: next.message,
      streaming: next.streaming,
      unanswered_tool_calls: unanswered,
    });
    turns.start(next.id, {
      firstMessage: index,
      startModelTurn,
      usageBefore: store.get()?.usage ?? emptyUsage(),
      startedSeq: started.seq,
    });
    store.startTurn();
    return turns.get(next.id);
  }

  /** The tool calls the conversation's last message asked for and no message answered, with their settled results. */
  private async unansweredResults(): Promise<Unanswered> {
    const { conversation } = this.deps;
    const index = conversation.nextIndex();
    const last = conversation.last();
    const ids =
      last?.role === "assistant" && Array.isArray(last.content)
        ? last.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))
        : [];
    return { index, ids, results: ids.length > 0 ? await this.deps.settledToolCalls(ids) : {} };
  }

  /**
   * The model-turn number the next turn counts on from. A turn that did not complete may have begun a model step it
   * never recorded; one number is skipped after it, so no step of a later turn ever takes that step's name.
   */
  private nextModelTurn(): number {
    const previous = this.deps.turns.lastStarted();
    if (!previous || previous.startModelTurn === null) return 0;
    const taken = previous.result?.num_turns ?? 0;
    return previous.startModelTurn + taken + (previous.status === "completed" ? 0 : 1);
  }
}

interface Unanswered {
  /** The conversation's length when they were read. */
  index: number;
  ids: string[];
  results: JsonObject;
}

/** The result a settled call returned (its journal entry), or an error result for a call without one. */
function settledResult(id: string, settled: unknown): ToolResultBlockParam {
  const stored = settled as { content?: unknown; is_error?: unknown } | undefined;
  if (stored && (typeof stored.content === "string" || Array.isArray(stored.content))) {
    const content = stored.content as NonNullable<ToolResultBlockParam["content"]>;
    return { type: "tool_result", tool_use_id: id, content, is_error: stored.is_error === true };
  }
  return { type: "tool_result", tool_use_id: id, content: UNANSWERED, is_error: true };
}
