// A child's input is what its parent's model wrote: it is stored redacted, as a result is (src/events/redaction.ts),
// so a secret the parent's model put in a Task call's prompt or description reaches no record of either task that
// the API returns, nor the child's stored task, nor the child's model (docs/operations/redaction.md).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { REDACTED } from "../../src/events/redaction.ts";
import {
  CheckpointListSchema,
  CheckpointSchema,
  MessageListSchema,
  SubagentSessionListSchema,
  TaskListSchema,
  TaskResourceSchema,
  TraceLogSchema,
} from "../../src/http/responses.ts";
import {
  apiJson,
  defineAgent,
  done,
  events,
  fireTimers,
  modelRequest,
  ofType,
  script,
  startTask,
  stubFor,
  textOf,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** A Worker secret's value: the model key of the test deployment (vitest.config.ts). */
const MODEL_KEY = (env as unknown as Record<string, string>).ANTHROPIC_API_KEY as string;

/** The path of every string in `value` that holds `secret` (`$.a.b[2]`), walking every field. */
function pathsHolding(value: unknown, secret: string, path = "$"): string[] {
  if (typeof value === "string") return value.includes(secret) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => pathsHolding(item, secret, `${path}[${i}]`));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [
      ...(key.includes(secret) ? [`${path} (a key)`] : []),
      ...pathsHolding(item, secret, `${path}.${key}`),
    ]);
  }
  return [];
}

/** Every record the API returns for a task: its view, events, messages, checkpoints, sub-agents and trace. */
async function recordsOf(id: string): Promise<Record<string, unknown>> {
  const checkpoints = await apiJson(`/v1/tasks/${id}/checkpoints`, CheckpointListSchema);
  const each = await Promise.all(
    checkpoints.checkpoints.map((c) => apiJson(`/v1/tasks/${id}/checkpoints/${c.checkpoint_id}`, CheckpointSchema)),
  );
  return {
    view: await apiJson(`/v1/tasks/${id}`, TaskResourceSchema),
    events: await events(id),
    messages: await apiJson(`/v1/tasks/${id}/messages`, MessageListSchema),
    checkpoints,
    checkpoint: each,
    subagents: await apiJson(`/v1/tasks/${id}/subagents`, SubagentSessionListSchema),
    trace: await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema),
  };
}

/** What a task's object stores of it: its row and its state (a parent's delegations, a child's origin). */
function storedOf(id: string): Promise<{ task: unknown[]; state: unknown[] }> {
  return runInDurableObject(stubFor(id), (_instance, state) => ({
    task: state.storage.sql.exec("SELECT * FROM task").toArray(),
    state: state.storage.sql.exec("SELECT * FROM task_state").toArray(),
  }));
}

describe("a child's input", () => {
  it("is stored and shown redacted: a secret the parent's model wrote into a Task call is in no record of either task", async () => {
    expect(MODEL_KEY.length).toBeGreaterThanOrEqual(8);
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const part = uniqueMarker("child-redact");
    await script(part, [{ content: [{ type: "text", text: "ok" }] }]);
    const marker = uniqueMarker("parent-redact");
    const call = toolUse("Task", {
      agent: child,
      description: `check ${MODEL_KEY}`,
      prompt: `Call the provider with the key ${MODEL_KEY} ${part}`,
    });
    await script(marker, [{ content: [call], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Delegate ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [started] = ofType(await events(task.id), "subagent_started");
    const childId = String(started?.payload.child_task_id);
    expect((await waitForTask(childId)).status).toBe("completed");

    // What Outpost keeps as the child's input and description, and what the child's model was given.
    const prompt = `Call the provider with the key ${REDACTED} ${part}`;
    expect((await apiJson(`/v1/tasks/${childId}`, TaskResourceSchema)).input).toBe(prompt);
    const listed = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(listed.subagents.map((s) => s.task_description)).toEqual([`check ${REDACTED}`]);
    expect(textOf((await modelRequest(childId, 1)).messages[0]?.content)).toBe(prompt);

    // The listing, once the child has reported to the tenant's directory.
    await fireTimers(childId, ["directory"]);
    const listing = await apiJson(`/v1/tasks?parent_task_id=${task.id}`, TaskListSchema);
    expect(listing.tasks.map((t) => t.id)).toEqual([childId]);
    const records = {
      parent: await recordsOf(task.id),
      child: await recordsOf(childId),
      listing,
      stored: { parent: (await storedOf(task.id)).state, child: await storedOf(childId) },
    };
    expect(pathsHolding(records, MODEL_KEY)).toEqual([]);
  });
});
