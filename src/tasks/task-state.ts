import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
// Small per-task key/value state that agents and built-in tools keep across evictions (e.g. the TodoWrite list).
// Exposed to agents as `runtime.state`. A person's requests and decisions live here too, under the keys of
// src/approvals/requests.ts.

/** Where a forked task came from: ForkState (its messages are the task's conversation). */
export const FORK_STATE_KEY = "fork_origin";

/** A sub-agent's child task: its parent, the Task call it answers and its depth (src/contracts/subagents.ts). */
export const SUBAGENT_ORIGIN_KEY = "subagent_origin";

/** What a fork keeps of its origin. */
export interface ForkState {
  task_id: string;
  checkpoint_id: string;
  turn: number;
  /** The fork point: messages of the conversation that came from the origin. */
  message_count: number;
  /** Inherited calls whose outcome is unknown (ForkOrigin.uncertain): run only after a person approves. */
  uncertain?: Record<string, string>;
}

/** A workflow's run (POST /v1/workflows/:name/tasks): WorkflowTaskState. */
export const WORKFLOW_STATE_KEY = "workflow";

/** What a workflow's task keeps: the workflow it runs, and for a fork, the node it starts at with the State there. */
export interface WorkflowTaskState {
  name: string;
  /** A fork of a workflow checkpoint: the node the run starts at, and the State's fields other than messages. */
  from?: {
    node: string;
    current_agent: string | null;
    routing_key: string | null;
    metadata: Record<string, unknown>;
  };
}

/** An invocation (invoke_once): InvocationState. */
export const INVOCATION_STATE_KEY = "invocation";

/** What an invocation keeps: how many messages of context come before its input (its input is message n). */
export interface InvocationState {
  context_messages: number;
}

/** A task of a tenant's own agent: the RuntimeAgentRecord (src/contracts/agent-version.ts) it runs. */
export const RUNTIME_AGENT_STATE_KEY = "runtime_agent";

/** A replay (POST /v1/tasks/:id/replay): ReplayState. */
export const REPLAY_STATE_KEY = "replay";

/** What a replay keeps: the task it replays, and that task's model responses, in order. */
export interface ReplayState {
  task_id: string;
  responses: MessageParam[];
}

/** A task created under an Idempotency-Key: {fingerprint, response} (the request's hash and the original reply). */
export const IDEMPOTENCY_KEY = "idempotency";

/** Values up to this long (as JSON) are remembered between reads; a longer one (a replay's responses) is read again. */
const REMEMBERED_CHARS = 4096;

export class TaskState {
  private readonly sql: SqlStorage;
  /**
   * What storage holds under a key, as this instance read or wrote it (its JSON, or null for no row): the object is
   * the table's only writer, and a run reads the same few keys at every step. Forgotten after a rolled-back
   * transaction (invalidate). Each get parses anew, so a caller may change what it got.
   */
  private readonly known = new Map<string, string | null>();
  /**
   * Set when this instance created the table, empty, and has remembered every value written since: a key it does not
   * know is then absent, with no read. Cleared when a value is too long to remember, and by invalidate().
   */
  private allKnown = false;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** The table was just created, empty, by this instance (a new task's object). */
  knownEmpty(): void {
    this.known.clear();
    this.allKnown = true;
  }

  get<T>(key: string): T | undefined {
    let value = this.known.get(key);
    if (value === undefined) {
      value = this.allKnown
        ? null
        : (this.sql.exec<{ value: string }>("SELECT value FROM task_state WHERE key = ?", key).toArray()[0]?.value ??
          null);
      this.remember(key, value);
    }
    return value === null ? undefined : (JSON.parse(value) as T);
  }

  delete(key: string): void {
    const absent = this.known.get(key) === null || (this.allKnown && !this.known.has(key));
    if (!absent) this.sql.exec("DELETE FROM task_state WHERE key = ?", key);
    this.known.set(key, null);
  }

  put(key: string, value: unknown): void {
    const json = JSON.stringify(value);
    this.sql.exec(
      "INSERT INTO task_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      key,
      json,
    );
    this.remember(key, json);
  }

  /** Forgets what this instance remembers of storage (after a rolled-back transaction). */
  invalidate(): void {
    this.known.clear();
    this.allKnown = false;
  }

  private remember(key: string, value: string | null): void {
    if (value === null || value.length <= REMEMBERED_CHARS) {
      this.known.set(key, value);
      return;
    }
    this.known.delete(key);
    // A key present but not remembered: unknown keys are no longer known to be absent.
    this.allKnown = false;
  }
}
