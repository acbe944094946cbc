// Sub-agents end to end through the API (seed 003 SubAgentSession, seed 004 SubagentConfig): the Task tool starts
// each delegation as a child task in its own object, up to max_parallel at a time; the parent's run stops while they
// work and each child's end wakes it; a child's answer (or its failure) is the Task call's result.

import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubagentSessionListSchema, TaskResourceSchema, TraceLogSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  type EventBody,
  emulatorRequests,
  events,
  fireTimers,
  ofType,
  parseBody,
  parseEvent,
  pendingRequestId,
  readSse,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** The task's events up to the first moment `enough` holds of them (the stream stays open while a run waits). */
async function eventsUntil(id: string, enough: (events: EventBody[]) => boolean): Promise<EventBody[]> {
  const seen: EventBody[] = [];
  await readSse(await api(`/v1/tasks/${id}/events`), (frame) => {
    seen.push(parseEvent(frame.data));
    return enough(seen);
  });
  return seen;
}

/** A Task call delegating `prompt` to `agent`. */
function delegate(agent: string, prompt: string) {
  return toolUse("Task", { agent, description: `do ${prompt.slice(0, 20)}`, prompt });
}

describe("the Task tool", () => {
  it("runs each delegation as a child task, at most max_parallel at once, and answers with each child's result", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 2, agents: [child] } });
    const prompts = ["a", "b", "c"].map((letter) => `Part ${letter} ${uniqueMarker(`child-${letter}`)}`);
    for (const [i, prompt] of prompts.entries()) {
      // Slow enough that the first two overlap while the third waits for a free place.
      await script(prompt, [{ content: [{ type: "text", text: `answer ${i + 1}` }] }], { ttft_ms: 300 });
    }
    const marker = uniqueMarker("parent");
    await script(marker, [{ content: prompts.map((p) => delegate(child, p)), stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Split ${marker}`);
    const finished = await waitForTask(task.id, 30);
    expect(finished.status).toBe("completed");

    const results = await toolResults(task.id, 2);
    expect(results.map((r) => [r.content, r.is_error])).toEqual([
      ["answer 1", false],
      ["answer 2", false],
      ["answer 3", false],
    ]);
    // The parent called the model twice: waiting for its children cost no model call.
    expect((await emulatorRequests(task.id)).length).toBe(2);

    const log = await events(task.id);
    const started = ofType(log, "subagent_started");
    const ended = ofType(log, "subagent_finished");
    expect(started.map((e) => e.payload.agent)).toEqual([child, child, child]);
    expect(ended.map((e) => e.payload.status)).toEqual(["completed", "completed", "completed"]);
    // Two at once: the first two started before either ended; the third only after one of them had.
    const firstEnd = Math.min(...ended.map((e) => e.seq));
    expect(started[1]?.seq).toBeLessThan(firstEnd);
    expect(started[2]?.seq).toBeGreaterThan(firstEnd);

    // The trace shows each Task call with what it delegated.
    const trace = await apiJson(`/v1/tasks/${task.id}/trace`, TraceLogSchema);
    const calls = trace.steps.find((step) => step.step_name === "turn_1")?.tool_calls ?? [];
    expect(calls.map((call) => [call.tool, call.arguments.child_task_id, call.result?.content])).toEqual(
      started.map((e, i) => ["Task", e.payload.child_task_id, `answer ${i + 1}`]),
    );

    // Seed 003 SubAgentSession of each delegation, with the child's own conversation.
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(
      subagents.map((s) => [
        s.session_id,
        s.parent_task_id,
        s.agent_name,
        s.status,
        s.summary,
        s.message_history.length,
      ]),
    ).toEqual(started.map((e, i) => [e.payload.child_task_id, task.id, child, "completed", `answer ${i + 1}`, 2]));
    expect(subagents[0]?.message_history[0]).toMatchObject({ role: "user", content: prompts[0] });

    for (const [i, event] of started.entries()) {
      const childTask = await apiJson(`/v1/tasks/${event.payload.child_task_id}`, TaskResourceSchema);
      expect(childTask).toMatchObject({
        parent_task_id: task.id,
        assigned_agent: child,
        input: prompts[i],
        status: "completed",
        result: `answer ${i + 1}`,
      });
    }
  });

  it("answers with an error the parent's model can act on when a child fails", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Fail ${uniqueMarker("child-fail")}`;
    await script(prompt, [{ content: [], faults: [{ kind: "http", status: 400, message: "bad request" }] }]);
    const marker = uniqueMarker("parent-fail");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Try ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toMatch(/^The sub-agent failed: provider_rejected_request: /);
    const [ended] = ofType(await events(task.id), "subagent_finished");
    expect(ended?.payload).toMatchObject({ status: "failed", is_error: true });
  });

  it("refuses an agent the parent may not delegate to, starting no child", async () => {
    const child = defineAgent({});
    const other = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const marker = uniqueMarker("parent-refused");
    await script(marker, [{ content: [delegate(other, "anything")], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Try ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({
      is_error: true,
      content: `This agent may not delegate to "${other}"; it may delegate to: ${child}.`,
    });
    expect(ofType(await events(task.id), "subagent_started")).toEqual([]);
  });

  it("delivers each child's result exactly once when every object is evicted while the children work", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompts = ["x", "y"].map((letter) => `Slow ${letter} ${uniqueMarker(`evict-${letter}`)}`);
    for (const [i, prompt] of prompts.entries()) {
      await script(prompt, [{ content: [{ type: "text", text: `late ${i + 1}` }] }], { ttft_ms: 1500 });
    }
    const marker = uniqueMarker("parent-evict");
    await script(marker, [{ content: prompts.map((p) => delegate(child, p)), stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Evict ${marker}`);
    const started = ofType(
      await eventsUntil(task.id, (seen) => ofType(seen, "subagent_started").length === 2),
      "subagent_started",
    );
    // Both children have started and sent their model call (which answers only after 1.5 s).
    for (const event of started) {
      const childId = String(event.payload.child_task_id);
      await eventsUntil(childId, (seen) => ofType(seen, "llm_request_sent").length === 1);
    }
    await abortAllDurableObjects();
    // The children resume from their heartbeats; the parent keeps none while it waits: their reports wake it.
    // Both children are still waiting for their model's first token.
    for (const event of started) {
      const child = await apiJson(`/v1/tasks/${event.payload.child_task_id}`, TaskResourceSchema);
      expect(child.status).toBe("running");
    }
    for (const event of started) {
      expect(await fireTimers(String(event.payload.child_task_id), ["heartbeat"])).toBe(true);
    }

    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const results = await toolResults(task.id, 2);
    expect(results.map((r) => r.content)).toEqual(["late 1", "late 2"]);
    const log = await events(task.id);
    expect(ofType(log, "subagent_started")).toHaveLength(2);
    expect(ofType(log, "subagent_finished")).toHaveLength(2);
    expect((await emulatorRequests(task.id)).length).toBe(2);
  });

  it("cancels a parent's running children with it", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Never ${uniqueMarker("cancel-child")}`;
    await script(prompt, [{ content: [{ type: "text", text: "too late" }] }], { ttft_ms: 20_000 });
    const marker = uniqueMarker("parent-cancel");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Cancel ${marker}`);
    const [started] = ofType(
      await eventsUntil(task.id, (seen) => ofType(seen, "subagent_started").length === 1),
      "subagent_started",
    );
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await waitForTask(String(started?.payload.child_task_id), 10)).status).toBe("canceled");
    expect((await waitForTask(task.id)).status).toBe("canceled");
  });

  it("starts a child that needs a person's approval only once approved", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] }, toolPermissions: { Task: "ask" } });
    const prompt = `Approved ${uniqueMarker("child-approved")}`;
    await script(prompt, [{ content: [{ type: "text", text: "did it" }] }]);
    const marker = uniqueMarker("parent-approval");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Ask ${marker}`);
    const waiting = await waitForTask(task.id);
    expect(waiting.status).toBe("input_required");
    const seen = await eventsUntil(task.id, (list) => ofType(list, "input_requested").length === 1);
    expect(ofType(seen, "subagent_started")).toEqual([]);
    const res = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: pendingRequestId(waiting), action: "approve" }),
    });
    expect(res.status).toBe(200);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    expect((await toolResults(task.id, 2))[0]).toMatchObject({ content: "did it", is_error: false });
    expect(ofType(await events(task.id), "subagent_started")).toHaveLength(1);
  });
});

describe("a sub-agent waiting for a person", () => {
  /** A parent delegating to a child whose first call (TodoWrite) waits for a person's approval. */
  async function waitingTree(label: string) {
    const child = defineAgent({ allowedTools: ["TodoWrite"], toolPermissions: { TodoWrite: "ask" } });
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Plan ${uniqueMarker(`${label}-child`)}`;
    await script(prompt, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "a", status: "pending" }] })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "planned" }] },
    ]);
    const marker = uniqueMarker(`${label}-parent`);
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Delegate ${marker}`);
    // ?wait= answers as soon as the parent shows its child's request.
    const shown = await waitForTask(task.id, 20);
    return { task, shown, child };
  }

  it("shows the child's request on the parent, which answers it; a repeat gets the same answer", async () => {
    const { task, shown, child } = await waitingTree("via-parent");
    expect(shown.status).toBe("input_required");
    const childId = shown.pending_input?.task_id;
    expect(childId).toBeDefined();
    const childTask = await apiJson(`/v1/tasks/${childId}`, TaskResourceSchema);
    expect(childTask).toMatchObject({ status: "input_required", assigned_agent: child, parent_task_id: task.id });
    expect(shown.pending_input).toMatchObject({
      ...childTask.pending_input,
      task_id: childId,
      kind: "approval",
      tool_name: "TodoWrite",
    });
    const requested = ofType(
      await eventsUntil(task.id, (seen) => ofType(seen, "subagent_input_requested").length === 1),
      "subagent_input_requested",
    );
    expect(requested[0]?.payload).toMatchObject({ child_task_id: childId, request_id: pendingRequestId(shown) });

    const body = JSON.stringify({ request_id: pendingRequestId(shown), action: "approve" });
    const res = await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body });
    expect(res.status).toBe(200);
    const answered = await parseBody(res, TaskResourceSchema.extend({ decision: z.object({ action: z.string() }) }));
    // The answer names the task that was waiting: the child.
    expect(answered).toMatchObject({ id: childId, decision: { action: "approve" } });
    const again = await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    expect((await toolResults(task.id, 2))[0]).toMatchObject({ content: "planned", is_error: false });
    const log = await events(task.id);
    expect(ofType(log, "subagent_input_answered").map((e) => e.payload.request_id)).toEqual([pendingRequestId(shown)]);
    // A stale request: the child no longer waits for it.
    const stale = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: pendingRequestId(shown), action: "reject" }),
    });
    expect(stale.status).toBe(409);
  });

  it("stops showing the request once the child is answered directly", async () => {
    const { task, shown } = await waitingTree("direct");
    const childId = String(shown.pending_input?.task_id);
    const res = await api(`/v1/tasks/${childId}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: pendingRequestId(shown), action: "approve" }),
    });
    expect(res.status).toBe(200);
    // The parent shows the request until the child's report reaches it, then waits for the child as before.
    let status = "input_required";
    for (let i = 0; i < 100 && status === "input_required"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema)).status;
    }
    expect(status).not.toBe("input_required");
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "subagent_input_requested")).toHaveLength(1);
    expect(ofType(log, "subagent_input_answered")).toHaveLength(1);
  });
});

describe("the Task tool and a tenant's own agents", () => {
  const ADMIN = "test-author-key";
  const RUNNER = "test-author-runner";

  async function putAgent(name: string, instructions: string): Promise<void> {
    const body = `name: ${name}\ndescription: A tenant's helper.\ninstructions: ${instructions}\nclaude:\n  max_turns: 2\n`;
    const res = await api(`/v1/agents/${name}`, {
      method: "PUT",
      body,
      headers: { "content-type": "application/yaml" },
      key: ADMIN,
    });
    expect(res.status).toBe(201);
  }

  /** The tool results the parent's model got on its second turn, read as `key`. */
  async function secondTurnResults(id: string, key: string): Promise<{ content: unknown; is_error?: boolean }[]> {
    const res = await api(`/v1/tasks/${id}/artifacts/artifacts/llm/decision_loop_turn_2_attempt_1_request.txt`, {
      key,
    });
    expect(res.status).toBe(200);
    const request = JSON.parse(await res.text()) as { messages: { content: unknown }[] };
    return request.messages.at(-1)?.content as { content: unknown; is_error?: boolean }[];
  }

  it("delegates to the tenant's own agent, recording the version the child runs, and to no other tenant's", async () => {
    const helper = `helper_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    await putAgent(helper, "You help, version one.");
    const lead = defineAgent({ subagents: { enabled: true, agents: [helper] } });
    const prompt = `Help ${uniqueMarker("tenant-child")}`;
    await script(prompt, [{ content: [{ type: "text", text: "helped" }] }]);
    const marker = uniqueMarker("tenant-parent");
    await script(marker, [{ content: [delegate(helper, prompt)], stop_reason: "tool_use" }, done]);
    const res = await api(`/v1/agents/${lead}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Lead ${marker}` }),
      key: RUNNER,
    });
    expect(res.status).toBe(202);
    const task = await parseBody(res, TaskResourceSchema);
    const finished = await apiJson(`/v1/tasks/${task.id}?wait=30`, TaskResourceSchema, { key: RUNNER });
    expect(finished.status).toBe("completed");
    expect((await secondTurnResults(task.id, RUNNER)).map((r) => [r.content, r.is_error ?? false])).toEqual([
      ["helped", false],
    ]);

    const sessions = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema, { key: RUNNER });
    expect(sessions.subagents).toHaveLength(1);
    expect(sessions.subagents[0]).toMatchObject({ agent_name: helper, agent_version: 1, status: "completed" });
    const child = await apiJson(`/v1/tasks/${sessions.subagents[0]?.session_id}`, TaskResourceSchema, {
      key: RUNNER,
    });
    expect(child).toMatchObject({ assigned_agent: helper, agent_version: 1, parent_task_id: task.id });
    // The child ran the tenant's instructions.
    const system = await api(
      `/v1/tasks/${child.id}/artifacts/artifacts/llm/decision_loop_turn_1_attempt_1_request.txt`,
      { key: RUNNER },
    );
    expect(JSON.stringify(JSON.parse(await system.text()).system)).toContain("You help, version one.");

    // The same delegation from another tenant finds no such agent.
    const elsewhere = uniqueMarker("other-tenant-parent");
    await script(elsewhere, [{ content: [delegate(helper, prompt)], stop_reason: "tool_use" }, done]);
    const other = await startTask(lead, `Lead ${elsewhere}`);
    expect((await waitForTask(other.id, 30)).status).toBe("completed");
    const [refused] = await toolResults(other.id, 2);
    expect(refused).toMatchObject({ is_error: true, content: `There is no agent "${helper}" in this deployment.` });
  });
});
