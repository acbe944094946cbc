// The typed keys of a task's key/value state (src/lib/state-key.ts, src/tasks/task-state.ts) over a real object's
// storage: every key Outpost keeps is declared once, a write that does not match its key's schema is refused naming
// the key, what one instance writes another reads back, and an agent's own state (runtime.state) takes any name but
// Outpost's, through a real run as well.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
// The task object imports every module that declares a key: with it loaded, the registry holds them all.
import "../../durable-objects/task-object.ts";
import { Agent } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import type { AgentContext } from "../../src/agents/context.ts";
import { type AgentResult, successResult } from "../../src/agents/result.ts";
import { decisionKey, PENDING_INPUT_KEY } from "../../src/approvals/requests.ts";
import type { RuntimeAgentRecord } from "../../src/contracts/agent-version.ts";
import type { SubagentOrigin, SubagentRecord } from "../../src/contracts/subagents.ts";
import type { FaultState, FaultStateSchema } from "../../src/faults/faults.ts";
import { registeredStateKeys, stateKey, stateKeyFamily } from "../../src/lib/state-key.ts";
import { AWAITING_SUBAGENTS_KEY } from "../../src/runtime/run-wiring.ts";
import { MIGRATIONS, migrate } from "../../src/storage/migrations.ts";
import type { StoredDelegationSchema } from "../../src/subagents/delegations.ts";
import type { TaskPrincipal, TaskPrincipalSchema } from "../../src/tasks/principal.ts";
import {
  FORK_STATE_KEY,
  type RuntimeAgentRecordSchema,
  type SubagentOriginSchema,
  TaskState,
  WORKFLOW_STATE_KEY,
} from "../../src/tasks/task-state.ts";
import { TODO_STATE_KEY } from "../../src/tools/todo-write.ts";
import { startTask, stubFor, waitForTask } from "../support/helpers.ts";

/** Runs `fn` over a fresh task object's migrated storage. */
async function inObject<T>(fn: (sql: SqlStorage) => T): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`task-state-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    migrate(state.storage, MIGRATIONS);
    return fn(state.storage.sql);
  });
}

/** An intersection as one object type: toEqualTypeOf tells `A & B` from the object with the same members. */
type Flat<T> = { [K in keyof T]: T[K] };

const rows = (sql: SqlStorage) =>
  sql.exec<{ key: string; value: string }>("SELECT key, value FROM task_state ORDER BY key").toArray();

describe("the keys of a task's state", () => {
  it("registers every key Outpost keeps once, each name by the module that owns it", () => {
    const keys = registeredStateKeys();
    expect(keys.map((k) => `${k.name}${k.family ? "*" : ""}`).sort()).toEqual([
      "a2a_push_configs",
      "a2a_replies",
      "a2a_shown_request",
      "awaiting_subagents",
      "callbacks_cursor",
      "context_view",
      "decision:*",
      "directory_reported",
      "evaluation_reported",
      "events_forwarded_through",
      "faults",
      "fork_origin",
      "idempotency",
      "invocation",
      "pending_input",
      "provider_wait",
      "replay",
      "runtime_agent",
      "subagent_origin",
      "subagent_reported",
      "subagent_requests",
      "subagent_wait_reported",
      "subagents",
      "task_principal",
      "telemetry_exported",
      "telemetry_exported_turns",
      "todo_list",
      "tree_member:*",
      "tree_size",
      "workflow",
    ]);
    expect(new Set(keys.map((k) => k.name)).size).toBe(keys.length);
  });

  it("refuses a second declaration of a name, or of one under a family, and registers neither", () => {
    const before = registeredStateKeys().length;
    expect(() => stateKey("pending_input", z.string())).toThrow(
      'Task state key "pending_input" is declared twice (it clashes with "pending_input"): each key has one owner.',
    );
    expect(() => stateKey("decision:toolu_1", z.string())).toThrow(
      'Task state key "decision:toolu_1" is declared twice (it clashes with "decision:"): each key has one owner.',
    );
    expect(() => stateKeyFamily("subagent", z.string())).toThrow(/^Task state key "subagent" is declared twice/);
    expect(registeredStateKeys()).toHaveLength(before);
  });

  it("declares each value's schema with the type its readers use, in both directions", () => {
    // Checked by tsc (npm run check): a field added to one and not the other fails to compile.
    expectTypeOf<z.output<typeof SubagentOriginSchema>>().toEqualTypeOf<SubagentOrigin>();
    expectTypeOf<z.output<typeof RuntimeAgentRecordSchema>>().toEqualTypeOf<RuntimeAgentRecord>();
    expectTypeOf<z.output<typeof StoredDelegationSchema>>().toEqualTypeOf<
      Flat<SubagentRecord & { started: boolean }>
    >();
    expectTypeOf<z.output<typeof FaultStateSchema>>().toEqualTypeOf<FaultState>();
    expectTypeOf<z.output<typeof TaskPrincipalSchema>>().toEqualTypeOf<TaskPrincipal>();
  });
});

describe("a task's typed state", () => {
  it("refuses a value that does not match its key's schema, naming the key, and writes nothing", async () => {
    const result = await inObject((sql) => {
      const state = new TaskState(sql);
      let message = "";
      try {
        state.put(TODO_STATE_KEY, [{ content: "", status: "pending" }]);
      } catch (error) {
        message = error instanceof Error ? error.message : String(error);
      }
      return { message, value: state.get(TODO_STATE_KEY), rows: rows(sql) };
    });
    expect(result.message).toBe(
      'Task state "todo_list" refused a value that does not match its schema: ✖ Too small: expected string to have >=1 characters\n  → at [0].content',
    );
    expect(result.value).toBeUndefined();
    expect(result.rows).toEqual([]);
  });

  it("reads back in a new instance over the same storage what another wrote, and deletes a key", async () => {
    const fork = { task_id: "t-origin", checkpoint_id: "cp-1", turn: 2, message_count: 5, uncertain: { toolu_1: "t" } };
    const decision = {
      request_id: "toolu_1",
      action: "approve" as const,
      message: null,
      tool_input: null,
      state_updates: null,
      decided_by: "key-fingerprint",
      decided_at: "2026-01-02T03:04:05.000Z",
    };
    const result = await inObject((sql) => {
      const writer = new TaskState(sql);
      writer.put(FORK_STATE_KEY, fork);
      writer.put(WORKFLOW_STATE_KEY, { name: "review" });
      writer.put(decisionKey("toolu_1"), decision);
      writer.put(AWAITING_SUBAGENTS_KEY, true);
      writer.delete(AWAITING_SUBAGENTS_KEY);
      const reader = new TaskState(sql);
      return {
        fork: reader.get(FORK_STATE_KEY),
        workflow: reader.get(WORKFLOW_STATE_KEY),
        decision: reader.get(decisionKey("toolu_1")),
        other: reader.get(decisionKey("toolu_2")),
        awaiting: reader.get(AWAITING_SUBAGENTS_KEY),
        keys: rows(sql).map((r) => r.key),
      };
    });
    expect(result).toEqual({
      fork,
      workflow: { name: "review" },
      decision,
      other: undefined,
      awaiting: undefined,
      keys: ["decision:toolu_1", "fork_origin", "workflow"],
    });
  });
});

describe("an agent's own state (runtime.state)", () => {
  it("keeps any name but Outpost's, and refuses a key Outpost keeps or one under a family, to read or to write", async () => {
    const refused = (fn: () => unknown) => {
      try {
        fn();
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    };
    const result = await inObject((sql) => {
      const state = new TaskState(sql);
      state.put(WORKFLOW_STATE_KEY, { name: "review" });
      state.agent.put("notes", { seen: 1 });
      return {
        put: refused(() => state.agent.put("pending_input", { kind: "approval" })),
        family: refused(() => state.agent.put("decision:toolu_1", { action: "approve" })),
        get: refused(() => state.agent.get("workflow")),
        notes: new TaskState(sql).agent.get("notes"),
        rows: rows(sql),
      };
    });
    expect(result).toEqual({
      put: "\"pending_input\" is a key Outpost keeps in the task's state for itself: an agent's runtime.state needs another name.",
      family:
        "\"decision:toolu_1\" is a key Outpost keeps in the task's state for itself: an agent's runtime.state needs another name.",
      get: "\"workflow\" is a key Outpost keeps in the task's state for itself: an agent's runtime.state needs another name.",
      notes: { seen: 1 },
      rows: [
        { key: "notes", value: '{"seen":1}' },
        { key: "workflow", value: '{"name":"review"}' },
      ],
    });
  });

  it("lets a run's agent keep its own keys and never write the request a person answers", async () => {
    const name = `state_agent_${crypto.randomUUID().slice(0, 8)}`;
    registry.register(
      name,
      class extends Agent {
        constructor() {
          super({ name, systemPrompt: "You keep notes." });
        }

        override async execute(context: AgentContext): Promise<AgentResult> {
          const { state } = context.runtime;
          state.put("notes", { seen: 1 });
          let refusal = "";
          try {
            state.put(PENDING_INPUT_KEY.name, { kind: "approval", request_id: "forged" });
          } catch (error) {
            refusal = error instanceof Error ? error.message : String(error);
          }
          return successResult(JSON.stringify({ notes: state.get("notes"), refusal }), context.runtime.usage());
        }
      },
    );
    const task = await startTask(name, "Keep notes.");
    const ended = await waitForTask(task.id);
    expect(ended.status).toBe("completed");
    expect(JSON.parse(String(ended.result))).toEqual({
      notes: { seen: 1 },
      refusal:
        "\"pending_input\" is a key Outpost keeps in the task's state for itself: an agent's runtime.state needs another name.",
    });
    const stored = await runInDurableObject(stubFor(task.id), (_instance, state) => rows(state.storage.sql));
    expect(stored.map((r) => r.key)).toContain("notes");
    expect(stored.map((r) => r.key)).not.toContain("pending_input");
  });
});
