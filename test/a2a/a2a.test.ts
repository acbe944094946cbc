// A2A v1.0 (docs/a2a.md): the official @a2a-js/sdk client, unchanged, drives every agent over both bindings (JSON-RPC
// and HTTP+JSON) through the Worker's own fetch. Each test names the requirement of the A2A specification it proves.
import { TaskState } from "@a2a-js/sdk";
import {
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "@a2a-js/sdk/errors";
import { describe, expect, it } from "vitest";
import { api, defineAgent, script, toolUse, uniqueMarker, waitForTask } from "../support/helpers.ts";
import {
  asTask,
  BINDINGS,
  clientFor,
  clientSpeaking,
  drain,
  label,
  sendRequest,
  stateName,
  text,
  textsOf,
  userMessage,
} from "./support.ts";

/** An agent with no tools: it answers from the conversation. Only the default tenant sees it. */
const chat = defineAgent({ description: "Answers questions.", tenants: ["default"] });
/** An agent that asks the person a question (AskUser) before it answers. */
const asker = defineAgent({ allowedTools: ["AskUser"] });
/** An agent whose TodoWrite calls wait for a person's approval. */
const manual = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
/** An agent that writes files into its task's workspace. */
const writer = defineAgent({ allowedTools: ["Write"], fileSystem: { read: true, write: true } });

describe.each(BINDINGS)("A2A over %s", (binding) => {
  it("SendMessage (blocking) returns the task completed, its answer as the response artifact and its history (A2A §3.1.1, §4.1)", async () => {
    const marker = uniqueMarker("a2a-send");
    await script(marker, [{ content: [{ type: "text", text: "The answer is 42." }] }]);
    const client = await clientFor(chat, binding);
    const task = asTask(await client.sendMessage(sendRequest(userMessage([text(`question ${marker}`)]))));
    expect(stateName(task.status?.state)).toBe("completed");
    expect(task.artifacts.map((a) => [a.artifactId, textsOf(a.parts)])).toEqual([["response", ["The answer is 42."]]]);
    expect(task.history.map((m) => textsOf(m.parts))).toEqual([[`question ${marker}`], ["The answer is 42."]]);
    // The A2A task is the Outpost task: same id, same outcome.
    const outpost = await waitForTask(task.id);
    expect(outpost.status).toBe("completed");
    expect(outpost.result).toBe("The answer is 42.");
    expect(task.contextId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("SendMessage with returnImmediately returns the task at once, and GetTask reads it later (A2A §3.2.2, §3.1.3)", async () => {
    const marker = uniqueMarker("a2a-async");
    await script(marker, [{ content: [{ type: "text", text: "Slowly done." }] }], { ttft_ms: 300 });
    const client = await clientFor(chat, binding);
    const task = asTask(
      await client.sendMessage(sendRequest(userMessage([text(`work ${marker}`)]), { returnImmediately: true })),
    );
    expect(["submitted", "working"]).toContain(stateName(task.status?.state));
    expect(task.artifacts).toEqual([]);
    await waitForTask(task.id);
    const later = await client.getTask({ tenant: "", id: task.id, historyLength: 1 });
    expect(stateName(later.status?.state)).toBe("completed");
    // historyLength keeps the most recent messages only.
    expect(later.history.map((m) => textsOf(m.parts))).toEqual([["Slowly done."]]);
    const none = await client.getTask({ tenant: "", id: task.id, historyLength: 0 });
    expect(none.history).toEqual([]);
  });

  it("a message in a task's contextId continues that conversation in a new task (A2A §3.4.1 contextId)", async () => {
    const marker = uniqueMarker("a2a-context");
    await script(marker, [
      { content: [{ type: "text", text: "Noted: your name is Ada." }] },
      { content: [{ type: "text", text: "Your name is Ada." }] },
    ]);
    const client = await clientFor(chat, binding);
    const first = asTask(await client.sendMessage(sendRequest(userMessage([text(`my name is Ada ${marker}`)]))));
    const second = asTask(
      await client.sendMessage(sendRequest(userMessage([text("what is my name?")], { contextId: first.contextId }))),
    );
    expect(second.id).not.toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    expect(stateName(second.status?.state)).toBe("completed");
    expect(second.history.map((m) => textsOf(m.parts))).toEqual([
      [`my name is Ada ${marker}`],
      ["Noted: your name is Ada."],
      ["what is my name?"],
      ["Your name is Ada."],
    ]);
    // ListTasks filtered by the context finds both, newest first.
    const listed = await client.listTasks({
      tenant: "",
      contextId: first.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([second.id, first.id]);
  });

  it("a context's task is found by its next message at once: one still running is refused, not left out of the conversation", async () => {
    const marker = uniqueMarker("a2a-context-at-once");
    await script(marker, [{ content: [{ type: "text", text: "Slowly noted." }] }], { ttft_ms: 1500 });
    const client = await clientFor(chat, binding);
    const first = asTask(
      await client.sendMessage(
        sendRequest(userMessage([text(`my name is Ada ${marker}`)]), { returnImmediately: true }),
      ),
    );
    expect(["submitted", "working"]).toContain(stateName(first.status?.state));
    // Well within the directory's report interval: the first task is listed already, so the follow-up sees it.
    await expect(
      client.sendMessage(sendRequest(userMessage([text("what is my name?")], { contextId: first.contextId }))),
    ).rejects.toThrow(new RegExp(`Task ${first.id} of this context has not ended`));
    await waitForTask(first.id);
  });

  it("SendStreamingMessage streams the task, its working state, the answer's chunks and the completed state (A2A §3.1.2)", async () => {
    const marker = uniqueMarker("a2a-stream");
    await script(marker, [{ content: [{ type: "text", text: "one two three four" }] }], { token_delay_ms: 5 });
    const client = await clientFor(chat, binding);
    const items = await drain(client.sendMessageStream(sendRequest(userMessage([text(`stream ${marker}`)]))));
    const labels = items.map(label);
    expect(labels[0]).toBe("task:submitted");
    expect(labels[1]).toBe("status:working");
    expect(labels.slice(-2)).toEqual(["artifact:last", "status:completed"]);
    const chunks = items.flatMap((i) =>
      i.payload?.$case === "artifactUpdate" && !i.payload.value.lastChunk
        ? textsOf(i.payload.value.artifact?.parts)
        : [],
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe("one two three four");
    expect(labels.filter((l) => l === "artifact:start")).toEqual(["artifact:start"]);
    const last = items.at(-2)?.payload;
    expect(last?.$case === "artifactUpdate" && textsOf(last.value.artifact?.parts)).toEqual(["one two three four"]);
  });

  it("SendStreamingMessage starts the answer again when its stream broke and the turn ran again", async () => {
    const marker = uniqueMarker("a2a-broken");
    const fault = { kind: "stream_error", after_deltas: 2, error_type: "overloaded_error" } as const;
    await script(marker, [{ content: [{ type: "text", text: "one two three four" }], faults: [fault] }], {
      token_delay_ms: 5,
    });
    const client = await clientFor(chat, binding);
    const items = await drain(client.sendMessageStream(sendRequest(userMessage([text(`broken ${marker}`)]))));
    const updates = items.flatMap((i) =>
      i.payload?.$case === "artifactUpdate" && !i.payload.value.lastChunk
        ? [{ append: i.payload.value.append, text: textsOf(i.payload.value.artifact?.parts).join("") }]
        : [],
    );
    // The broken attempt's two words, then the second attempt's answer, which replaces them (append: false).
    const restart = updates.findIndex((u, index) => index > 0 && !u.append);
    expect(restart).toBeGreaterThan(0);
    expect(
      updates
        .slice(0, restart)
        .map((u) => u.text)
        .join(""),
    ).toBe("one two ");
    expect(
      updates
        .slice(restart)
        .map((u) => u.text)
        .join(""),
    ).toBe("one two three four");
    expect(items.map(label).slice(-2)).toEqual(["artifact:last", "status:completed"]);
  });

  it("SubscribeToTask after a dropped stream continues to the end without losing the task's state (A2A §3.1.6)", async () => {
    const marker = uniqueMarker("a2a-resubscribe");
    const answer = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    await script(marker, [{ content: [{ type: "text", text: answer }] }], { token_delay_ms: 20 });
    const client = await clientFor(chat, binding);
    const stream = client.sendMessageStream(sendRequest(userMessage([text(`long ${marker}`)])));
    let taskId = "";
    for await (const item of stream) {
      if (item.payload?.$case === "task") taskId = item.payload.value.id;
      // Dropped after the first chunk of the answer.
      if (item.payload?.$case === "artifactUpdate") break;
    }
    expect(taskId).not.toBe("");
    const resumed = await drain(client.resubscribeTask({ tenant: "", id: taskId }));
    const labels = resumed.map(label);
    expect(labels[0]).toBe("task:working");
    expect(labels.slice(-2)).toEqual(["artifact:last", "status:completed"]);
    const last = resumed.at(-2)?.payload;
    expect(last?.$case === "artifactUpdate" && textsOf(last.value.artifact?.parts)).toEqual([answer]);
    // A task that has ended has nothing to subscribe to.
    await expect(drain(client.resubscribeTask({ tenant: "", id: taskId }))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
  });

  it("CancelTask cancels a working task, and a task that has ended is TaskNotCancelable (A2A §3.1.5)", async () => {
    const marker = uniqueMarker("a2a-cancel");
    await script(marker, [{ content: [{ type: "text", text: "never finished" }] }], { ttft_ms: 5_000 });
    const client = await clientFor(chat, binding);
    const task = asTask(
      await client.sendMessage(sendRequest(userMessage([text(`cancel ${marker}`)]), { returnImmediately: true })),
    );
    const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(stateName(canceled.status?.state)).toBe("canceled");
    expect((await waitForTask(task.id)).status).toBe("canceled");
    await expect(client.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    );
  });

  it("a question makes the task input-required, and a message with its taskId answers it (A2A §4.1.3 input-required)", async () => {
    const marker = uniqueMarker("a2a-question");
    await script(marker, [
      { content: [toolUse("AskUser", { question: "Which city?" })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Booked in Lyon." }] },
    ]);
    const client = await clientFor(asker, binding);
    const waiting = asTask(await client.sendMessage(sendRequest(userMessage([text(`book ${marker}`)]))));
    expect(stateName(waiting.status?.state)).toBe("input_required");
    expect(textsOf(waiting.status?.message?.parts)).toEqual(["Which city?"]);
    const answered = asTask(
      await client.sendMessage(
        sendRequest(userMessage([text("Lyon")], { taskId: waiting.id, contextId: waiting.contextId })),
      ),
    );
    expect(answered.id).toBe(waiting.id);
    expect(stateName(answered.status?.state)).toBe("completed");
    expect(answered.artifacts.map((a) => textsOf(a.parts))).toEqual([["Booked in Lyon."]]);
    const outpost = await waitForTask(waiting.id);
    expect(outpost.status).toBe("completed");
  });

  it("an approval streams as input-required, and a streamed reply approves it through the same resume (A2A §3.1.2, §4.1.3)", async () => {
    const marker = uniqueMarker("a2a-approval");
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "Pack", status: "pending" }] })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Planned." }] },
    ]);
    const client = await clientFor(manual, binding);
    const first = await drain(client.sendMessageStream(sendRequest(userMessage([text(`plan ${marker}`)]))));
    expect(first.map(label).at(-1)).toBe("status:input_required");
    const taskId = first[0]?.payload?.$case === "task" ? first[0].payload.value.id : "";
    // A word that is neither approval nor rejection is refused, and the task still waits.
    await expect(client.sendMessage(sendRequest(userMessage([text("maybe")], { taskId })))).rejects.toThrow(/approve/);
    const second = await drain(client.sendMessageStream(sendRequest(userMessage([text("approve")], { taskId }))));
    expect(second.map(label)).toEqual(["task:working", "artifact:start", "artifact:last", "status:completed"]);
    const outpost = await waitForTask(taskId);
    expect(outpost.result).toBe("Planned.");
    // The reply to a task that has ended is refused: a new message in its context goes on.
    await expect(client.sendMessage(sendRequest(userMessage([text("approve")], { taskId })))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
  });

  it("an ended task's workspace files are artifacts of url parts linking to the task's files (A2A §4.1.7 Artifact)", async () => {
    const marker = uniqueMarker("a2a-files");
    await script(marker, [
      {
        content: [toolUse("Write", { file_path: "notes/plan.md", content: "# Plan\n" })],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "Written." }] },
    ]);
    const client = await clientFor(writer, binding);
    const task = asTask(await client.sendMessage(sendRequest(userMessage([text(`write ${marker}`)]))));
    expect(stateName(task.status?.state)).toBe("completed");
    const files = task.artifacts.find((a) => a.artifactId === "workspace");
    const parts = (files?.parts ?? []).map((p) => [p.filename, p.content?.$case === "url" ? p.content.value : null]);
    const link = `https://outpost.test/v1/tasks/${task.id}/workspace/notes/plan.md`;
    expect(parts).toEqual([["notes/plan.md", link]]);
    // The link is the HTTP API's, read with the same key.
    const file = await api(link.slice("https://outpost.test".length));
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("# Plan\n");
  });

  it("GetTask of an unknown task, and of another tenant's task, is TaskNotFoundError (A2A §3.3.2)", async () => {
    const marker = uniqueMarker("a2a-tenant");
    await script(marker, [{ content: [{ type: "text", text: "mine" }] }]);
    const client = await clientFor(asker, binding);
    await expect(client.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    const task = asTask(await client.sendMessage(sendRequest(userMessage([text(`tenant ${marker}`)]))));
    const beta = await clientFor(asker, binding, "test-beta-key");
    await expect(beta.getTask({ tenant: "", id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(beta.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    const listed = await beta.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks).toEqual([]);
  });

  it("a request naming an unsupported A2A-Version is refused with VersionNotSupportedError (A2A §3.6.2)", async () => {
    const card = await (await clientFor(chat, binding)).getAgentCard();
    const newer = await clientSpeaking("9.9", card, binding);
    await expect(newer.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(
      VersionNotSupportedError,
    );
    await expect(newer.sendMessage(sendRequest(userMessage([text("hello")])))).rejects.toBeInstanceOf(
      VersionNotSupportedError,
    );
  });

  it("GetExtendedAgentCard gives a key holder the card with the agent's model and limits (A2A §3.1.11)", async () => {
    const client = await clientFor(chat, binding);
    const extended = await client.getAgentCard();
    expect(extended.name).toBe(chat);
    expect(extended.description).toMatch(/^Answers questions\. .*At most 4 model turns a task\./);
  });
});

describe("A2A agent cards", () => {
  it("an agent's card names its interfaces for both bindings, streaming and push, and the bearer scheme (A2A §8)", async () => {
    const res = await api(`/a2a/${chat}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: chat,
      description: "Answers questions.",
      supportedInterfaces: [
        { url: `https://outpost.test/a2a/${chat}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: `https://outpost.test/a2a/${chat}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      ],
      capabilities: { streaming: true, extendedAgentCard: true },
      securitySchemes: { outpost_api_key: { httpAuthSecurityScheme: { scheme: "Bearer" } } },
      securityRequirements: [{ schemes: { outpost_api_key: {} } }],
    });
    const asks = (await (await api(`/a2a/${asker}/.well-known/agent-card.json`)).json()) as {
      skills: { id: string }[];
    };
    expect(asks.skills.map((s) => s.id)).toEqual(["tool:AskUser"]);
  });

  it("GET /a2a lists the cards of the agents the key's tenant may run, and no other tenant's (A2A §8.2)", async () => {
    const res = await api("/a2a");
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { agents: { name: string }[] }).agents.map((a) => a.name);
    expect(names).toContain(chat);
    expect(names).toContain(asker);
    const beta = (
      (await (await api("/a2a", { key: "test-beta-key" })).json()) as { agents: { name: string }[] }
    ).agents.map((a) => a.name);
    expect(beta).toContain(asker);
    expect(beta).not.toContain(chat);
    const card = await api(`/a2a/${chat}/.well-known/agent-card.json`, { key: "test-beta-key" });
    expect(card.status).toBe(404);
  });

  it("every /a2a route needs an API key, and sending a message needs the run scope", async () => {
    expect((await api("/a2a", { key: null })).status).toBe(401);
    expect((await api(`/a2a/${chat}/.well-known/agent-card.json`, { key: null })).status).toBe(401);
    const rpc = (key: string) =>
      api(`/a2a/${chat}`, {
        method: "POST",
        key,
        headers: { "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
        }),
      });
    const refused = await rpc("test-read-key");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("insufficient_scope");
    const rest = await api(`/a2a/${chat}/tasks`, { key: "test-run-key", headers: { "a2a-version": "1.0" } });
    expect(rest.status).toBe(403);
  });

  it("a body that is not JSON is ContentTypeNotSupported on both bindings (A2A §3.3.2)", async () => {
    const rpc = await api(`/a2a/${chat}`, {
      method: "POST",
      headers: { "a2a-version": "1.0", "content-type": "text/plain" },
      body: "hello",
    });
    expect(rpc.status).toBe(200);
    expect(((await rpc.json()) as { error: { code: number } }).error.code).toBe(-32005);
    const rest = await api(`/a2a/${chat}/message:send`, {
      method: "POST",
      headers: { "a2a-version": "1.0", "content-type": "text/plain" },
      body: "hello",
    });
    expect(rest.status).toBe(400);
    const body = (await rest.json()) as { error: { code: number; status: string; details: { reason: string }[] } };
    expect(body.error.code).toBe(400);
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.details.map((d) => d.reason)).toEqual(["CONTENT_TYPE_NOT_SUPPORTED"]);
  });

  it("a JSON-RPC request without an A2A-Version header is read as 0.3 and refused with -32009 (A2A §3.6.2)", async () => {
    const res = await api(`/a2a/${chat}`, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: crypto.randomUUID() } }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number; error: { code: number } };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32009);
  });
});
