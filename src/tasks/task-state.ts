// Small per-task key/value state kept across evictions (table task_state), in two kinds of keys. Outpost's own are
// StateKeys (src/lib/state-key.ts), each declared with its schema next to the code that owns it: a fork's origin, a
// workflow's run, a person's requests and decisions (src/approvals/requests.ts), a sub-agent's delegations… An agent's
// are any other names, through `runtime.state` (TaskState.agent), which refuses Outpost's names.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type { AgentState } from "../contracts/runtime.ts";
import type { SubagentOrigin } from "../contracts/subagents.ts";
import { JsonObjectSchema } from "../lib/json.ts";
import { isRegisteredStateKey, type StateKey, stateKey, type TypedState } from "../lib/state-key.ts";

/** What a fork keeps of its origin. */
const ForkStateSchema = z.lazy(() =>
  z.object({
    task_id: z.string(),
    checkpoint_id: z.string(),
    turn: z.number(),
    /** The fork point: messages of the conversation that came from the origin. */
    message_count: z.number(),
    /** Inherited calls whose outcome is unknown (ForkOrigin.uncertain): run only after a person approves. */
    uncertain: z.record(z.string(), z.string()).exactOptional(),
  }),
);
export type ForkState = z.infer<typeof ForkStateSchema>;

/** Where a forked task came from (its messages are the task's conversation). */
export const FORK_STATE_KEY = stateKey("fork_origin", ForkStateSchema);

/** A sub-agent's child task: its parent, the Task call it answers and its depth (src/contracts/subagents.ts). */
export const SubagentOriginSchema = z.lazy(() =>
  z.object({
    parent_task_id: z.string(),
    tool_use_id: z.string(),
    depth: z.number(),
    root_task_id: z.string().exactOptional(),
  }),
) satisfies z.ZodType<SubagentOrigin, unknown>;
export const SUBAGENT_ORIGIN_KEY: StateKey<SubagentOrigin> = stateKey("subagent_origin", SubagentOriginSchema);

/** What a workflow's task keeps: the workflow it runs, and for a fork, the node it starts at with the State there. */
const WorkflowTaskStateSchema = z.lazy(() =>
  z.object({
    name: z.string(),
    /** A fork of a workflow checkpoint: the node the run starts at, and the State's fields other than messages. */
    from: z
      .object({
        node: z.string(),
        current_agent: z.string().nullable(),
        routing_key: z.string().nullable(),
        metadata: z.record(z.string(), z.unknown()),
      })
      .exactOptional(),
  }),
);
export type WorkflowTaskState = z.infer<typeof WorkflowTaskStateSchema>;

/** A workflow's run (POST /v1/workflows/:name/tasks). */
export const WORKFLOW_STATE_KEY = stateKey("workflow", WorkflowTaskStateSchema);

/** What an invocation keeps: how many messages of context come before its input (its input is message n). */
const InvocationStateSchema = z.lazy(() => z.object({ context_messages: z.number().int().nonnegative() }));
export type InvocationState = z.infer<typeof InvocationStateSchema>;

/** An invocation (invoke_once). */
export const INVOCATION_STATE_KEY = stateKey("invocation", InvocationStateSchema);

/** The RuntimeAgentRecord a task of a tenant's own agent runs (src/contracts/agent-version.ts). */
export const RuntimeAgentRecordSchema = z.lazy(() =>
  z.object({ version: z.number().int(), definition: JsonObjectSchema, warnings: z.array(z.string()) }),
) satisfies z.ZodType<RuntimeAgentRecord, unknown>;
export const RUNTIME_AGENT_STATE_KEY: StateKey<RuntimeAgentRecord> = stateKey(
  "runtime_agent",
  RuntimeAgentRecordSchema,
);

/**
 * What a replay keeps: the task it replays, and that task's model responses, in order. A response is the SDK's
 * MessageParam, which has no zod schema: the list and each element's role are checked, not the SDK's content blocks.
 */
const ReplayStateSchema = z.lazy(() =>
  z.object({
    task_id: z.string(),
    responses: z.array(
      z.custom<MessageParam>(
        (m) => typeof m === "object" && m !== null && "role" in m && (m.role === "assistant" || m.role === "user"),
        "must be a message ({role, content})",
      ),
    ),
  }),
);
export type ReplayState = z.infer<typeof ReplayStateSchema>;

/** A replay (POST /v1/tasks/:id/replay). */
export const REPLAY_STATE_KEY = stateKey("replay", ReplayStateSchema);

/**
 * A task created under an Idempotency-Key: the request's hash, and the original reply, which a repeat gets again. The
 * reply is the view the object answered with (a task's or a session's, each with its own schema in src/http/): checked
 * here as an object.
 */
export const IDEMPOTENCY_KEY = stateKey(
  "idempotency",
  z.lazy(() =>
    z.object({
      fingerprint: z.string(),
      response: z.custom<object>((v) => typeof v === "object" && v !== null, "must be the view answered"),
    }),
  ),
);

/** Values up to this long (as JSON) are remembered between reads; a longer one (a replay's responses) is read again. */
const REMEMBERED_CHARS = 4096;

export class TaskState implements TypedState {
  /**
   * The agent's own state, exposed as `runtime.state`: any name but Outpost's (a registered StateKey, or a name in a
   * registered family), which it refuses, so an agent can neither read nor overwrite what the run keeps for itself.
   */
  readonly agent: AgentState;
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
    this.agent = {
      get: <T>(key: string) => this.read(agentKey(key)) as T | undefined,
      put: (key, value) => this.write(agentKey(key), JSON.stringify(value)),
    };
  }

  /** The table was just created, empty, by this instance (a new task's object). */
  knownEmpty(): void {
    this.known.clear();
    this.allKnown = true;
  }

  /** The key's value as put stored it: not parsed against its schema again (a run reads its keys at every step). */
  get<T>(key: StateKey<T>): T | undefined {
    return this.read(key.name) as T | undefined;
  }

  delete(key: StateKey<unknown>): void {
    const absent = this.known.get(key.name) === null || (this.allKnown && !this.known.has(key.name));
    if (!absent) this.sql.exec("DELETE FROM task_state WHERE key = ?", key.name);
    this.known.set(key.name, null);
  }

  /** Stores the value after checking it against the key's schema: a value that does not match throws, naming the key. */
  put<T>(key: StateKey<T>, value: T): void {
    const checked = key.schema.safeParse(value);
    if (!checked.success) {
      throw new Error(
        `Task state "${key.name}" refused a value that does not match its schema: ${z.prettifyError(checked.error)}`,
      );
    }
    this.write(key.name, JSON.stringify(value));
  }

  /** Forgets what this instance remembers of storage (after a rolled-back transaction). */
  invalidate(): void {
    this.known.clear();
    this.allKnown = false;
  }

  private read(key: string): unknown {
    let value = this.known.get(key);
    if (value === undefined) {
      value = this.allKnown
        ? null
        : (this.sql.exec<{ value: string }>("SELECT value FROM task_state WHERE key = ?", key).toArray()[0]?.value ??
          null);
      this.remember(key, value);
    }
    return value === null ? undefined : JSON.parse(value);
  }

  private write(key: string, json: string): void {
    this.sql.exec(
      "INSERT INTO task_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      key,
      json,
    );
    this.remember(key, json);
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

/** A name of the agent's own state: any but Outpost's. */
function agentKey(name: string): string {
  if (isRegisteredStateKey(name)) {
    throw new Error(
      `"${name}" is a key Outpost keeps in the task's state for itself: an agent's runtime.state needs another name.`,
    );
  }
  return name;
}
