// Chat sessions (seed 004 AgentSession) through the HTTP API, against the emulator over real HTTP: a conversation of
// several messages, each a durable turn on the task machinery, answered with its ExecutionResult (blocking, or
// streamed); the busy policies under a real race; a turn that waits for a person; an eviction mid-turn; and close.

import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PENDING_INPUT_KEY } from "../../src/approvals/requests.ts";
import { ExecutionResultSchema } from "../../src/contracts/execution-result.ts";
import {
  SessionArtifactListSchema,
  SessionMessageListSchema,
  SessionResourceSchema,
  SessionResumeResponseSchema,
  SessionWorkspaceListSchema,
  TurnResourceSchema,
} from "../../src/http/responses.ts";
import { readTar } from "../../src/run-bundle/tar.ts";
import {
  api,
  defineAgent,
  done,
  editTaskState,
  expectError,
  fireTimers,
  parseBody,
  parseEvent,
  readSse,
  script,
  toolUse,
  UUID_V4,
  uniqueMarker,
} from "../support/helpers.ts";

const chatty = defineAgent({ allowedTools: ["TodoWrite"] });
const reviewed = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });

async function createSession(agent: string, body: Record<string, unknown> = {}) {
  const res = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  const session = await parseBody(res, SessionResourceSchema);
  expect(res.headers.get("location")).toBe(session.links.self);
  return session;
}

function send(id: string, message: string, query = "", headers: Record<string, string> = {}): Promise<Response> {
  return api(`/v1/sessions/${id}/messages${query}`, { method: "POST", body: JSON.stringify({ message }), headers });
}

async function sendAndWait(id: string, message: string) {
  const res = await send(id, message, "?wait=20");
  expect(res.status).toBe(200);
  return parseBody(res, TurnResourceSchema);
}

async function getSession(id: string) {
  const res = await api(`/v1/sessions/${id}`);
  expect(res.status).toBe(200);
  return parseBody(res, SessionResourceSchema);
}

async function waitTurn(id: string, turnId: string) {
  const res = await api(`/v1/sessions/${id}/turns/${turnId}?wait=20`);
  expect(res.status).toBe(200);
  return parseBody(res, TurnResourceSchema);
}

const say = (text: string) => ({ content: [{ type: "text" as const, text }] });

describe("a chat session", () => {
  it("holds a three-message conversation, tool use in the middle turn, each answered with its ExecutionResult", async () => {
    const marker = uniqueMarker("session-three");
    // The emulator picks each reply by the assistant messages the request holds: a reply is only reached when the
    // model is sent the whole conversation so far.
    await script(marker, [
      say("Hello! What shall we plan?"),
      {
        content: [toolUse("TodoWrite", { todos: [{ content: "Buy milk", status: "pending" }] })],
        stop_reason: "tool_use",
        usage: { input_tokens: 30, output_tokens: 7 },
      },
      say("Added: buy milk."),
      say("You asked me to add milk."),
    ]);
    const session = await createSession(chatty, { metadata: { user: "ada" } });
    expect(session).toMatchObject({ agent: chatty, status: "ready", busy: "reject", history: [], turns: [] });
    expect(session.id).toMatch(UUID_V4);

    const first = await sendAndWait(session.id, `Hi ${marker}`);
    expect(first).toMatchObject({ index: 1, status: "completed", session_id: session.id });
    expect(first.result).toMatchObject({
      response: "Hello! What shall we plan?",
      tool_calls: [],
      tool_results: [],
      num_turns: 1,
      is_error: false,
      error_reason: null,
      structured_output: null,
    });

    const second = await sendAndWait(session.id, "Add milk to the list.");
    const result = ExecutionResultSchema.parse(second.result);
    expect(result.response).toBe("Added: buy milk.");
    expect(result.num_turns).toBe(2);
    expect(result.tool_calls).toEqual([
      {
        name: "TodoWrite",
        arguments: { todos: [{ content: "Buy milk", status: "pending" }] },
        call_id: expect.any(String),
      },
    ]);
    expect(result.tool_results).toEqual([
      { call_id: result.tool_calls[0]?.call_id, result: expect.any(String), is_error: false },
    ]);
    expect(result.token_usage.prompt_tokens).toBeGreaterThanOrEqual(30);
    expect(result.token_usage.total_tokens).toBe(
      result.token_usage.prompt_tokens + result.token_usage.completion_tokens,
    );

    const third = await sendAndWait(session.id, "What did I ask?");
    expect(third.result?.response).toBe("You asked me to add milk.");

    const now = await getSession(session.id);
    expect(now.status).toBe("ready");
    expect(now.current_turn_id).toBeNull();
    expect(now.turns.map((t) => [t.index, t.status])).toEqual([
      [1, "completed"],
      [2, "completed"],
      [3, "completed"],
    ]);
    expect(now.history).toEqual([
      { role: "user", content: `Hi ${marker}` },
      { role: "assistant", content: "Hello! What shall we plan?" },
      { role: "user", content: "Add milk to the list." },
      { role: "assistant", content: "Added: buy milk." },
      { role: "user", content: "What did I ask?" },
      { role: "assistant", content: "You asked me to add milk." },
    ]);
    expect(now.usage.input_tokens).toBeGreaterThan(0);

    // One stream across the turns: each turn's events between its turn_started and turn_finished, no run_finished.
    const frames = await readSse(
      await api(`/v1/sessions/${session.id}/events`),
      (f) => f.event === "turn_finished" && parseEvent(f.data).payload.index === 3,
    );
    const types = frames.map((f) => f.event);
    expect(types[0]).toBe("session_created");
    expect(types.filter((t) => t === "turn_started")).toHaveLength(3);
    expect(types.filter((t) => t === "turn_finished")).toHaveLength(3);
    expect(types).not.toContain("run_finished");
    expect(types).toContain("tool_call_started");
    const seqs = frames.map((f) => Number(f.id));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("streams a message's turn with Accept: text/event-stream, ending with its ExecutionResult, resumable by Last-Event-ID", async () => {
    const marker = uniqueMarker("session-stream");
    await script(marker, [say("Streaming hello, in several words.")]);
    const session = await createSession(chatty);
    const res = await send(session.id, `Stream ${marker}`, "", { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const turnId = res.headers.get("x-turn-id") ?? "";
    expect(turnId).toMatch(UUID_V4);
    const frames = await readSse(res);
    const types = frames.map((f) => f.event);
    expect(types[0]).toBe("turn_queued");
    expect(types[1]).toBe("turn_started");
    expect(types).toContain("llm_text_delta");
    expect(types.indexOf("llm_text_delta")).toBeLessThan(types.indexOf("turn_finished"));
    expect(types.at(-1)).toBe("turn_finished");
    const last = parseEvent(frames.at(-1)?.data ?? "");
    expect(last.payload).toMatchObject({ turn_id: turnId, status: "completed" });
    expect(ExecutionResultSchema.parse(last.payload.result).response).toBe("Streaming hello, in several words.");
    // While streaming, the session said so.
    const started = parseEvent(frames[1]?.data ?? "");
    expect(started.payload).toMatchObject({ turn_id: turnId, streaming: true });

    // Reconnecting in the middle gets the rest of the turn, and nothing from before the cursor.
    const middle = frames[2]?.id ?? "0";
    const again = await readSse(
      await api(`/v1/sessions/${session.id}/turns/${turnId}/events`, { headers: { "last-event-id": middle } }),
    );
    expect(again.map((f) => f.id)).toEqual(frames.slice(3).map((f) => f.id));
    // Past the turn's end there is nothing left: 204 tells an EventSource to stop.
    const after = await api(`/v1/sessions/${session.id}/turns/${turnId}/events`, {
      headers: { "last-event-id": frames.at(-1)?.id ?? "0" },
    });
    expect(after.status).toBe(204);
    expect((await getSession(session.id)).turns[0]).toMatchObject({ id: turnId, status: "completed", streaming: true });
  });

  it("answers a message to a busy session with 409 session_busy under the default policy, and takes it after", async () => {
    const marker = uniqueMarker("session-reject");
    await script(marker, [say("Slow answer."), say("Second answer.")], { ttft_ms: 1500 });
    const session = await createSession(chatty);
    const first = await send(session.id, `Slow ${marker}`, "?wait=0");
    expect(first.status).toBe(202);
    const turn = await parseBody(first, TurnResourceSchema);
    expect(["queued", "running"]).toContain(turn.status);
    await expectError(await send(session.id, "Are you there?", "?wait=0"), 409, "session_busy");
    expect((await waitTurn(session.id, turn.id)).status).toBe("completed");
    const second = await sendAndWait(session.id, "Now?");
    expect(second.result?.response).toBe("Second answer.");
    // The refused message left no trace: two turns, and the conversation holds only the messages taken.
    const now = await getSession(session.id);
    expect(now.turns).toHaveLength(2);
    expect(now.history.filter((m) => m.role === "user").map((m) => m.content)).toEqual([`Slow ${marker}`, "Now?"]);
  });

  it("runs messages sent while a turn runs in order, one after the other, under busy: enqueue", async () => {
    const marker = uniqueMarker("session-enqueue");
    await script(marker, [say("One."), say("Two."), say("Three.")], { ttft_ms: 400 });
    const session = await createSession(chatty, { busy: "enqueue" });
    const sent = await Promise.all(
      [`First ${marker}`, "Second", "Third"].map(async (m, i) => {
        // Sent in this order, each while the turn before it runs.
        await new Promise((r) => setTimeout(r, i * 50));
        return parseBody(await send(session.id, m, "?wait=0"), TurnResourceSchema);
      }),
    );
    expect(sent.map((t) => t.index)).toEqual([1, 2, 3]);
    // Only the event stream is read until the last turn ends: each turn starts as the one before it ends, with no
    // reader to wake the object.
    await readSse(
      await api(`/v1/sessions/${session.id}/events`),
      (f) => f.event === "turn_finished" && parseEvent(f.data).payload.index === 3,
    );
    const ended = [];
    for (const t of sent) ended.push(await waitTurn(session.id, t.id));
    expect(ended.map((t) => [t.status, t.result?.response])).toEqual([
      ["completed", "One."],
      ["completed", "Two."],
      ["completed", "Three."],
    ]);
    // Each turn started after the one before it ended.
    for (let i = 1; i < ended.length; i++) {
      expect(Date.parse(ended[i]?.started_at ?? "")).toBeGreaterThanOrEqual(Date.parse(ended[i - 1]?.ended_at ?? ""));
    }
    expect((await getSession(session.id)).history.map((m) => m.content)).toEqual([
      `First ${marker}`,
      "One.",
      "Second",
      "Two.",
      "Third",
      "Three.",
    ]);
  });

  it("stops the current turn for a newer message under busy: interrupt, keeping what it did", async () => {
    const marker = uniqueMarker("session-interrupt");
    // The first reply never comes in time: the second message interrupts it.
    await script(marker, [say("Too late."), say("Answer to the second.")], { ttft_ms: 3000 });
    const session = await createSession(chatty, { busy: "interrupt" });
    const first = await parseBody(await send(session.id, `Long ${marker}`, "?wait=0"), TurnResourceSchema);
    // Let the first turn reach its model call.
    await new Promise((r) => setTimeout(r, 300));
    const second = await parseBody(await send(session.id, "Never mind, this instead.", "?wait=0"), TurnResourceSchema);
    const firstEnded = await waitTurn(session.id, first.id);
    expect(firstEnded.status).toBe("canceled");
    expect(firstEnded.result).toMatchObject({ is_error: true, error_reason: "interrupted by a newer message" });
    const secondEnded = await waitTurn(session.id, second.id);
    expect(secondEnded.status).toBe("completed");
    expect(secondEnded.result?.response).toBe("Too late.");
    // Both messages are in the conversation, the model having answered them together.
    const now = await getSession(session.id);
    expect(now.history.map((m) => m.content)).toEqual([`Long ${marker}`, "Never mind, this instead.", "Too late."]);
    expect(now.status).toBe("ready");
  });

  it("answers the tool call an interrupted turn left open when the next message starts, as the model's API requires", async () => {
    const marker = uniqueMarker("session-open-call");
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "Held", status: "pending" }] })], stop_reason: "tool_use" },
      say("Understood, dropping that."),
    ]);
    const session = await createSession(reviewed, { busy: "interrupt" });
    const first = await parseBody(await send(session.id, `Plan ${marker}`, "?wait=20"), TurnResourceSchema);
    // The call waits for a person; the next message interrupts the turn, leaving the call without a result.
    expect((await getSession(session.id)).status).toBe("input_required");
    const second = await parseBody(await send(session.id, "Forget it.", "?wait=20"), TurnResourceSchema);
    expect(second.status).toBe("completed");
    expect(second.result).toMatchObject({ response: "Understood, dropping that.", tool_calls: [], tool_results: [] });
    const firstEnded = await waitTurn(session.id, first.id);
    expect(firstEnded).toMatchObject({
      status: "canceled",
      result: { error_reason: "interrupted by a newer message" },
    });
    const started = (
      await readSse(
        await api(`/v1/sessions/${session.id}/events`),
        (f) => f.event === "turn_finished" && parseEvent(f.data).payload.turn_id === second.id,
      )
    )
      .map((f) => parseEvent(f.data))
      .find((e) => e.event_type === "turn_started" && e.payload.turn_id === second.id);
    const callId = firstEnded.result?.tool_calls[0]?.call_id;
    expect(callId).toBeDefined();
    expect(started?.payload.unanswered_tool_calls).toEqual([callId]);
    // The question is no longer asked.
    expect((await getSession(session.id)).pending_input).toBeNull();
  });

  it("waits for a person inside a turn (input_required) and goes on when the request is answered", async () => {
    const marker = uniqueMarker("session-review");
    await script(marker, [
      say("Hi."),
      { content: [toolUse("TodoWrite", { todos: [{ content: "Ship", status: "pending" }] })], stop_reason: "tool_use" },
      done,
    ]);
    const session = await createSession(reviewed);
    await sendAndWait(session.id, `Hello ${marker}`);
    const res = await send(session.id, "Plan the release.", "?wait=20");
    // The turn waits for a person: answered at once, 202, with the session input_required.
    expect(res.status).toBe(202);
    const turn = await parseBody(res, TurnResourceSchema);
    expect(turn.status).toBe("running");
    const waiting = await getSession(session.id);
    expect(waiting.status).toBe("input_required");
    expect(waiting.current_turn_id).toBe(turn.id);
    const requestId = waiting.pending_input?.request_id ?? "";
    await expectError(await send(session.id, "Hurry up", "?wait=0"), 409, "session_busy");
    const resumed = await api(`/v1/sessions/${session.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: requestId, action: "approve" }),
    });
    expect(resumed.status).toBe(200);
    expect(await parseBody(resumed, SessionResumeResponseSchema)).toMatchObject({
      decision: { request_id: requestId, action: "approve" },
    });
    const ended = await waitTurn(session.id, turn.id);
    expect(ended.status).toBe("completed");
    expect(ended.result?.tool_calls.map((c) => c.name)).toEqual(["TodoWrite"]);
    // A repeat of the answer is the original answer.
    const again = await api(`/v1/sessions/${session.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: requestId, action: "approve" }),
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("fails the turn, not the session, when an approval runs out under onApprovalTimeout: fail", async () => {
    const failing = defineAgent({
      allowedTools: ["TodoWrite"],
      permissionMode: "manual",
      approvalTimeoutSeconds: 3600,
      onApprovalTimeout: "fail",
    });
    const marker = uniqueMarker("session-deadline");
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "Late", status: "pending" }] })], stop_reason: "tool_use" },
      say("Still here."),
    ]);
    const session = await createSession(failing);
    const turn = await parseBody(await send(session.id, `Plan ${marker}`, "?wait=20"), TurnResourceSchema);
    expect((await getSession(session.id)).status).toBe("input_required");
    // The deadline has passed: the alarm it set fires.
    await editTaskState(session.id, (sql) => {
      sql.exec(
        "UPDATE task_state SET value = json_set(value, '$.expires_at', ?) WHERE key = ?",
        new Date(Date.now() - 1000).toISOString(),
        PENDING_INPUT_KEY.name,
      );
    });
    expect(await fireTimers(session.id, ["approval_deadline"])).toBe(true);
    const ended = await waitTurn(session.id, turn.id);
    expect(ended.status).toBe("failed");
    expect(ended.result?.error_reason).toMatch(/before its deadline/);
    const now = await getSession(session.id);
    expect(now).toMatchObject({ status: "ready", pending_input: null, current_turn_id: null });
    // The session goes on: the open call is answered as having no result, and the next message runs.
    const next = await sendAndWait(session.id, "Never mind.");
    expect(next.result?.response).toBe("Still here.");
    const types = (
      await readSse(
        await api(`/v1/sessions/${session.id}/events`),
        (f) => f.event === "turn_finished" && parseEvent(f.data).payload.turn_id === next.id,
      )
    ).map((f) => f.event);
    expect(types).toContain("human_decision");
    expect(types).not.toContain("run_failed");
  });

  it("finishes a turn whose object is evicted in the middle of it, running no step twice", async () => {
    const marker = uniqueMarker("session-evict");
    await script(
      marker,
      [
        say("First."),
        {
          content: [toolUse("TodoWrite", { todos: [{ content: "Once", status: "pending" }] })],
          stop_reason: "tool_use",
        },
        say("Second, after the eviction."),
      ],
      { ttft_ms: 600 },
    );
    const session = await createSession(chatty);
    await sendAndWait(session.id, `Start ${marker}`);
    const turn = await parseBody(await send(session.id, "Go on", "?wait=0"), TurnResourceSchema);
    await new Promise((r) => setTimeout(r, 900));
    await abortAllDurableObjects();
    // A reader wakes the object; the run resumes from its journal.
    const ended = await waitTurn(session.id, turn.id);
    expect(ended.status).toBe("completed");
    expect(ended.result?.response).toBe("Second, after the eviction.");
    expect(ended.result?.tool_calls).toHaveLength(1);
    const frames = await readSse(
      await api(`/v1/sessions/${session.id}/events`),
      (f) => f.event === "turn_finished" && parseEvent(f.data).payload.turn_id === turn.id,
    );
    const toolRuns = frames.filter((f) => f.event === "tool_call_completed");
    expect(toolRuns).toHaveLength(1);
    const seqs = frames.map((f) => Number(f.id));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("counts max_turns per message: a turn out of turns is is_error, and the session takes the next message", async () => {
    const marker = uniqueMarker("session-max-turns");
    const loop = {
      content: [toolUse("TodoWrite", { todos: [{ content: "Again", status: "pending" }] })],
      stop_reason: "tool_use",
    };
    await script(marker, [loop, loop, say("Fine, stopping.")]);
    const session = await createSession(chatty, { max_turns: 2 });
    const first = await sendAndWait(session.id, `Loop ${marker}`);
    expect(first.status).toBe("failed");
    expect(first.result).toMatchObject({ is_error: true, num_turns: 2 });
    expect(first.result?.error_reason).toMatch(/^max_turns limit reached/);
    const second = await sendAndWait(session.id, "Stop looping.");
    expect(second.status).toBe("completed");
    expect(second.result?.response).toBe("Fine, stopping.");
  });

  it("closes: the turn under way ends canceled, no more messages, and the stream ends with session_closed", async () => {
    const marker = uniqueMarker("session-close");
    await script(marker, [say("Never sent.")], { ttft_ms: 3000 });
    const session = await createSession(chatty);
    const turn = await parseBody(await send(session.id, `Busy ${marker}`, "?wait=0"), TurnResourceSchema);
    await new Promise((r) => setTimeout(r, 200));
    const res = await api(`/v1/sessions/${session.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    const closed = await parseBody(res, SessionResourceSchema);
    expect(closed.status).toBe("closed");
    expect(closed.closed_at).not.toBeNull();
    expect(closed.expires_at).not.toBeNull();
    expect(closed.turns[0]).toMatchObject({ id: turn.id, status: "canceled" });
    await expectError(await send(session.id, "Hello?"), 409, "session_closed");
    // Closing again changes nothing.
    const again = await api(`/v1/sessions/${session.id}`, { method: "DELETE" });
    expect((await parseBody(again, SessionResourceSchema)).closed_at).toBe(closed.closed_at);
    const frames = await readSse(await api(`/v1/sessions/${session.id}/events`));
    const types = frames.map((f) => f.event);
    expect(types.at(-1)).toBe("session_closed");
    expect(types.slice(types.indexOf("turn_finished"))).toEqual(["turn_finished", "session_closed"]);
    const last = frames.at(-1)?.id ?? "0";
    expect((await api(`/v1/sessions/${session.id}/events`, { headers: { "last-event-id": last } })).status).toBe(204);
  });
});

describe("a session's record", () => {
  it("serves its conversation, workspace and run bundle, the bundle whole in R2 once it is closed", async () => {
    const writer = defineAgent({ fileSystem: { write: true } });
    const marker = uniqueMarker("session-files");
    await script(marker, [
      { content: [toolUse("Write", { file_path: "notes.md", content: "kept across turns" })], stop_reason: "tool_use" },
      say("Written."),
      say("It says: kept across turns."),
    ]);
    const session = await createSession(writer);
    await sendAndWait(session.id, `Write it ${marker}`);
    await sendAndWait(session.id, "What does it say?");
    const messages = await parseBody(await api(`/v1/sessions/${session.id}/messages`), SessionMessageListSchema);
    expect(messages.session_id).toBe(session.id);
    expect(messages.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    const workspace = await parseBody(await api(`/v1/sessions/${session.id}/workspace`), SessionWorkspaceListSchema);
    const file = workspace.files.find((f) => f.path === "notes.md");
    expect(file).toMatchObject({ type: "file", url: `${session.links.workspace}/notes.md` });
    const read = await api(`/v1/sessions/${session.id}/workspace/notes.md`);
    expect(await read.text()).toBe("kept across turns");
    await expectError(
      await api(`/v1/sessions/${session.id}/workspace/absent.md`),
      404,
      "workspace_file_not_found",
      "path",
    );

    // The whole bundle is written when the session is closed.
    await expectError(await api(`/v1/sessions/${session.id}/bundle`), 409, "run_not_ended");
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
    const tar = new Uint8Array(await (await api(`/v1/sessions/${session.id}/bundle`)).arrayBuffer());
    const archived = readTar(tar).map((entry) => entry.path);
    expect(archived[0]).toBe("bundle.json");
    const bundle = await parseBody(await api(`/v1/sessions/${session.id}/artifacts`), SessionArtifactListSchema);
    const paths = bundle.artifacts.map((a) => a.path);
    expect(paths).toEqual(expect.arrayContaining(["events.jsonl", "final_summary.md", "llm_transcript.log"]));
    expect(archived.sort()).toStrictEqual(paths);
    const summary = await (await api(`/v1/sessions/${session.id}/artifacts/final_summary.md`)).text();
    expect(summary).toContain(`# Session ${session.id}`);
    expect(summary).toContain("- Status: closed");
    const log = await (await api(`/v1/sessions/${session.id}/artifacts/events.jsonl`)).text();
    const types = log
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { event_type: string }).event_type);
    expect(types[0]).toBe("session_created");
    expect(types.at(-1)).toBe("session_closed");
    // A session's files are not a task's, nor the reverse.
    await expectError(await api(`/v1/tasks/${session.id}/artifacts`), 404, "task_not_found", "id");
    await expectError(await api(`/v1/sessions/${crypto.randomUUID()}/workspace`), 404, "session_not_found", "id");
  });
});

describe("session requests the API refuses", () => {
  it("answers unknown and malformed session ids, and unknown turns, with 404", async () => {
    const id = crypto.randomUUID();
    await expectError(await api(`/v1/sessions/${id}`), 404, "session_not_found", "id");
    await expectError(await api("/v1/sessions/not-a-uuid"), 404, "session_not_found", "id");
    await expectError(await send(id, "hello"), 404, "session_not_found", "id");
    await expectError(await api(`/v1/sessions/${id}`, { method: "DELETE" }), 404, "session_not_found", "id");
    const session = await createSession(chatty);
    await expectError(
      await api(`/v1/sessions/${session.id}/turns/${crypto.randomUUID()}`),
      404,
      "turn_not_found",
      "turn_id",
    );
    // A session is not a task, and a task is not a session.
    await expectError(await api(`/v1/tasks/${session.id}`), 404, "task_not_found", "id");
  });

  it("refuses bad bodies naming the field, and agents that cannot hold a conversation", async () => {
    const session = await createSession(chatty);
    await expectError(await send(session.id, "   "), 400, "validation_failed", "message");
    await expectError(
      await api(`/v1/sessions/${session.id}/messages`, { method: "POST", body: JSON.stringify({ text: "hi" }) }),
      400,
      "validation_failed",
      "message",
    );
    await expectError(
      await api(`/v1/agents/${chatty}/sessions`, { method: "POST", body: JSON.stringify({ busy: "sometimes" }) }),
      400,
      "validation_failed",
      "busy",
    );
    await expectError(
      await api("/v1/agents/operator/sessions", { method: "POST", body: "{}" }),
      400,
      "agent_not_conversational",
      "name",
    );
    await expectError(await send(session.id, "hi", "?wait=-1"), 400, "validation_failed", "wait");
    // Nothing was sent: the session holds no turn.
    expect((await getSession(session.id)).turns).toEqual([]);
  });

  it("counts each message against the key's rate limit, storing nothing past it", async () => {
    const marker = uniqueMarker("session-rate");
    await script(marker, [say("One."), say("Two.")]);
    // 3 runs a minute (vitest.config.ts): the session's creation and two messages.
    const key = "test-limited-key";
    const created = await api(`/v1/agents/${chatty}/sessions`, { method: "POST", body: "{}", key });
    expect(created.status).toBe(201);
    const { id } = await parseBody(created, SessionResourceSchema);
    const message = (text: string) =>
      api(`/v1/sessions/${id}/messages?wait=20`, { method: "POST", body: JSON.stringify({ message: text }), key });
    expect((await message(`Hi ${marker}`)).status).toBe(200);
    expect((await message("Again")).status).toBe(200);
    await expectError(await message("Once more"), 429, "rate_limited");
    const now = await parseBody(await api(`/v1/sessions/${id}`, { key }), SessionResourceSchema);
    expect(now.turns).toHaveLength(2);
  });

  it("gives a key that may act but not read only ids, status and links, and no stream", async () => {
    const marker = uniqueMarker("session-run-key");
    await script(marker, [say("Secret answer.")]);
    const session = await createSession(chatty);
    const runKey = "test-run-key";
    const res = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
      method: "POST",
      body: JSON.stringify({ message: `Hi ${marker}` }),
      key: runKey,
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["id", "index", "links", "session_id", "status"]);
    await expectError(
      await api(`/v1/sessions/${session.id}/messages`, {
        method: "POST",
        body: JSON.stringify({ message: "stream it" }),
        key: runKey,
        headers: { accept: "text/event-stream" },
      }),
      403,
      "insufficient_scope",
      "authorization",
    );
  });
});
