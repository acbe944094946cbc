// Issue 36 finding 4: an A2A reply decides the request it was shown, never whatever waits when it arrives. The
// input-required status names the request (its message's metadata and data part); a reply that names it (a data
// part, metadata, referenceTaskIds) decides it; a bare text reply is taken only when the task showed exactly that
// one request over A2A; otherwise the reply is answered with what is pending and nothing is decided. A repeated
// messageId gets the original answer; a stale request id gets /v1's refusal.
import type { Message, Task } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import { describe, expect, it } from "vitest";
import { deliveriesUntil, inbox, receiver } from "../support/callback-helpers.ts";
import {
  api,
  defineAgent,
  type EventBody,
  ofType,
  parseEvent,
  pendingRequestId,
  readSse,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import {
  a2aCall,
  asTask,
  BINDINGS,
  clientFor,
  data,
  sendRequest,
  stateName,
  text,
  textsOf,
  userMessage,
} from "./support.ts";

/** An agent whose TodoWrite calls each wait for a person's approval. */
const manual = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });

const todo = (content: string) => toolUse("TodoWrite", { todos: [{ content, status: "pending" }] });

/** Scripts a run that asks for two approvals in a row (R1, then R2), then answers "Planned."; returns its input. */
async function twoApprovals(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  await script(marker, [
    { content: [todo("Pack")], stop_reason: "tool_use" },
    { content: [todo("Cook")], stop_reason: "tool_use" },
    { content: [{ type: "text", text: "Planned." }] },
  ]);
  return `plan ${marker}`;
}

/** The result of SendMessage as a Message (a Task fails the test: the reply was taken). */
function asMessage(result: Message | Task): Message {
  if (!("messageId" in result)) throw new Error(`expected a message, got a task: ${JSON.stringify(result)}`);
  return result;
}

function dataOf(message: Message | undefined): unknown[] {
  return (message?.parts ?? []).flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : []));
}

/** The task's own events so far (a waiting task's stream does not end): read up to its newest event. */
async function eventsSoFar(taskId: string): Promise<EventBody[]> {
  const { last_event_seq } = await waitForTask(taskId, 0);
  const frames = await readSse(await api(`/v1/tasks/${taskId}/events?depth=0`), (f) => Number(f.id) >= last_event_seq);
  return frames.map((f) => parseEvent(f.data));
}

/** The requests a person's decisions have answered so far, in order. */
async function decisions(taskId: string): Promise<unknown[]> {
  return ofType(await eventsSoFar(taskId), "human_decision").map((e) => e.payload.request_id);
}

describe.each(BINDINGS)("A2A replies bound to the request shown, over %s", (binding) => {
  it("an input-required status message names its request in its metadata and its data part", async () => {
    const client = await clientFor(manual, binding);
    const waiting = asTask(await client.sendMessage(sendRequest(userMessage([text(await twoApprovals("a2a-id"))]))));
    expect(stateName(waiting.status?.state)).toBe("input_required");
    const requestId = pendingRequestId(await waitForTask(waiting.id, 0));
    expect(waiting.status?.message?.metadata).toEqual({ request_id: requestId });
    expect(dataOf(waiting.status?.message)).toEqual([expect.objectContaining({ request_id: requestId })]);
    expect(textsOf(waiting.status?.message?.parts)).toEqual([
      `Approve the call to TodoWrite? Reply "approve" or "reject", naming request ${requestId} (metadata request_id, or a data part {"request_id": …, "action": …}).`,
    ]);
    await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
  });

  it("a second bare approve does not approve a request nobody was shown: it is answered with that request's id, and nothing is decided", async () => {
    const client = await clientFor(manual, binding);
    const waiting = asTask(
      await client.sendMessage(sendRequest(userMessage([text(await twoApprovals("a2a-second"))]))),
    );
    const first = pendingRequestId(await waitForTask(waiting.id, 0));
    // The first approve is taken (the task showed R1) and answered at once, before R2 is asked for.
    const approved = asTask(
      await client.sendMessage(
        sendRequest(userMessage([text("approve")], { taskId: waiting.id }), { returnImmediately: true }),
      ),
    );
    expect(approved.id).toBe(waiting.id);
    // R2 now waits, read on /v1 only: no A2A answer has shown it.
    const second = pendingRequestId(await waitForTask(waiting.id));
    expect(second).not.toBe(first);
    const answer = asMessage(
      await client.sendMessage(sendRequest(userMessage([text("approve")], { taskId: waiting.id }))),
    );
    expect(answer.taskId).toBe(waiting.id);
    expect(answer.metadata).toEqual({ request_id: second });
    expect(dataOf(answer)).toEqual([{ request_id: second, kind: "approval", tool_name: "TodoWrite" }]);
    expect(textsOf(answer.parts).join("")).toContain(`waits for request ${second}`);
    expect(await decisions(waiting.id)).toEqual([first]);
    expect(pendingRequestId(await waitForTask(waiting.id, 0))).toBe(second);
    // Named in the metadata, it is decided.
    const named = { ...userMessage([text("approve")], { taskId: waiting.id }), metadata: { request_id: second } };
    const done = asTask(await client.sendMessage(sendRequest(named)));
    expect(stateName(done.status?.state)).toBe("completed");
    expect(await decisions(waiting.id)).toEqual([first, second]);
  });

  it("a retried reply (the same messageId) gets the original answer and decides nothing more, though the next request was shown", async () => {
    const client = await clientFor(manual, binding);
    const waiting = asTask(await client.sendMessage(sendRequest(userMessage([text(await twoApprovals("a2a-retry"))]))));
    const first = pendingRequestId(await waitForTask(waiting.id, 0));
    const reply = userMessage([text("approve")], { taskId: waiting.id });
    await client.sendMessage(sendRequest(reply, { returnImmediately: true }));
    const second = pendingRequestId(await waitForTask(waiting.id));
    // GetTask shows R2: a new bare reply could now answer it, but not the first one sent again.
    const shown = await client.getTask({ tenant: "", id: waiting.id });
    expect(shown.status?.message?.metadata).toEqual({ request_id: second });
    const again = asTask(await client.sendMessage(sendRequest(reply, { returnImmediately: true })));
    expect(again.id).toBe(waiting.id);
    expect(stateName(again.status?.state)).toBe("input_required");
    expect(await decisions(waiting.id)).toEqual([first]);
    // A new bare approve answers R2, which the task showed.
    const done = asTask(await client.sendMessage(sendRequest(userMessage([text("approve")], { taskId: waiting.id }))));
    expect(stateName(done.status?.state)).toBe("completed");
    expect(await decisions(waiting.id)).toEqual([first, second]);
  });

  it("a bare reply to a request no A2A answer showed is answered with its id; naming it in referenceTaskIds decides it", async () => {
    const client = await clientFor(manual, binding);
    // Started and read over /v1: A2A never showed its request.
    const task = await startTask(manual, await twoApprovals("a2a-unseen"));
    const first = pendingRequestId(await waitForTask(task.id));
    const answer = asMessage(
      await client.sendMessage(sendRequest(userMessage([text("approve")], { taskId: task.id }))),
    );
    expect(answer.metadata).toEqual({ request_id: first });
    expect(await decisions(task.id)).toEqual([]);
    const referenced = { ...userMessage([text("approve")], { taskId: task.id }), referenceTaskIds: [first] };
    const next = asTask(await client.sendMessage(sendRequest(referenced)));
    expect(stateName(next.status?.state)).toBe("input_required");
    expect(await decisions(task.id)).toEqual([first]);
    await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  });

  it("a reply naming a request already answered gets /v1's refusal (already_decided; 409 on HTTP+JSON), and a repeat of the same answer its original answer", async () => {
    const client = await clientFor(manual, binding);
    const waiting = asTask(await client.sendMessage(sendRequest(userMessage([text(await twoApprovals("a2a-stale"))]))));
    const first = pendingRequestId(await waitForTask(waiting.id, 0));
    await client.sendMessage(
      sendRequest(userMessage([data({ request_id: first, action: "approve" })], { taskId: waiting.id })),
    );
    expect(await decisions(waiting.id)).toEqual([first]);
    const stale = {
      message: {
        messageId: crypto.randomUUID(),
        taskId: waiting.id,
        role: "ROLE_USER",
        parts: [{ data: { request_id: first, action: "reject" } }],
      },
    };
    const res = await a2aCall(binding, manual, { method: "SendMessage", params: stale });
    const refusal = (await res.json()) as {
      error: { code: number; message: string; data?: unknown[]; details?: unknown[] };
    };
    expect(res.status).toBe(binding === "JSONRPC" ? 200 : 409);
    expect(refusal.error.code).toBe(binding === "JSONRPC" ? -32602 : 409);
    expect(refusal.error.message).toMatch(new RegExp(`^Request ${first} was already answered: approve by `));
    expect(refusal.error.data ?? refusal.error.details).toEqual([
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "INVALID_PARAMS",
        domain: "a2a-protocol.org",
        metadata: { code: "already_decided", field: "request_id" },
      },
    ]);
    await expect(
      client.sendMessage(
        sendRequest(userMessage([data({ request_id: first, action: "reject" })], { taskId: waiting.id })),
      ),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    // The same answer again is the original answer: the task as it is, nothing decided again.
    const same = asTask(
      await client.sendMessage(
        sendRequest(userMessage([data({ request_id: first, action: "approve" })], { taskId: waiting.id })),
      ),
    );
    expect(stateName(same.status?.state)).toBe("input_required");
    expect(await decisions(waiting.id)).toEqual([first]);
    await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
  });
});

describe("A2A replies while several requests wait", () => {
  it("a bare reply is not taken while two sub-agents wait for a person: it is answered with the request shown", async () => {
    const child = defineAgent({ allowedTools: ["TodoWrite"], toolPermissions: { TodoWrite: "ask" } });
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 2, agents: [child] } });
    const prompts = ["a", "b"].map((letter) => `Plan ${uniqueMarker(`a2a-two-${letter}`)}`);
    for (const prompt of prompts) {
      await script(prompt, [
        { content: [todo(prompt)], stop_reason: "tool_use" },
        { content: [{ type: "text", text: "planned" }] },
      ]);
    }
    const marker = uniqueMarker("a2a-two-parent");
    const delegate = (prompt: string) => toolUse("Task", { agent: child, description: "plan", prompt });
    await script(marker, [
      { content: prompts.map(delegate), stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Both planned." }] },
    ]);
    const task = await startTask(parent, `Delegate ${marker}`);
    // Both children's requests reach the parent.
    let asked = 0;
    await readSse(await api(`/v1/tasks/${task.id}/events`), (frame) => {
      if (JSON.parse(frame.data).event_type === "subagent_input_requested") asked += 1;
      return asked === 2;
    });
    const client = await clientFor(parent, "JSONRPC");
    const shown = await client.getTask({ tenant: "", id: task.id });
    expect(stateName(shown.status?.state)).toBe("input_required");
    const requestId = shown.status?.message?.metadata?.request_id;
    expect(typeof requestId).toBe("string");
    const answer = asMessage(
      await client.sendMessage(sendRequest(userMessage([text("approve")], { taskId: task.id }))),
    );
    expect(answer.metadata).toEqual({ request_id: requestId });
    expect(ofType(await eventsSoFar(task.id), "subagent_input_answered")).toEqual([]);
    await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  });
});

describe("A2A replies: what counts as shown", () => {
  it("an input_required callback delivered to the task's client shows the request: a bare reply then decides it", async () => {
    const input = await twoApprovals("a2a-pushed");
    const task = await startTask(manual, input, {
      webhook: { url: `${receiver}/r/${inbox("a2a-pushed")}`, events: ["input_required"] },
    });
    const first = pendingRequestId(await waitForTask(task.id));
    const delivered = await deliveriesUntil(task.id, (list) => list.some((d) => d.status === "delivered"));
    expect(delivered.map((d) => [d.event_type, d.status])).toEqual([["task.input_required", "delivered"]]);
    const client = await clientFor(manual, "JSONRPC");
    const next = asTask(
      await client.sendMessage(
        sendRequest(userMessage([text("approve")], { taskId: task.id }), { returnImmediately: true }),
      ),
    );
    expect(next.id).toBe(task.id);
    expect(await decisions(task.id)).toEqual([first]);
    await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  });

  it("a key that may not read is never taken at its bare word, nor told what waits", async () => {
    const client = await clientFor(manual, "JSONRPC");
    const waiting = asTask(
      await client.sendMessage(sendRequest(userMessage([text(await twoApprovals("a2a-runner"))]))),
    );
    const res = await a2aCall(
      "JSONRPC",
      manual,
      {
        method: "SendMessage",
        params: {
          message: { messageId: "m-runner", taskId: waiting.id, role: "ROLE_USER", parts: [{ text: "approve" }] },
        },
      },
      { key: "test-run-key" },
    );
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { message: Record<string, unknown> } };
    expect(result.message).toEqual({
      messageId: `${waiting.id}-reply-m-runner`,
      contextId: waiting.contextId,
      taskId: waiting.id,
      role: "ROLE_AGENT",
      parts: [
        {
          text: `Nothing was decided: task ${waiting.id} waits for a request this API key may not read; a key with the read scope can see which, and name it.`,
          mediaType: "text/plain",
        },
      ],
    });
    expect(await decisions(waiting.id)).toEqual([]);
    await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
  });
});
