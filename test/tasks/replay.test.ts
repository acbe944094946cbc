// Replaying a task (POST /v1/tasks/:id/replay, src/tasks/replay.ts): the agent's current definition runs again on the
// same input, each model call answered by the recorded response and each tool call by the recorded result, so no
// model is called and no tool runs; GET /v1/tasks/:id/replay then compares the replay with the task it replays.
// Against the emulator, whose record of requests shows which task called the model.
import { describe, expect, it } from "vitest";
import { ReplayComparisonSchema, type TaskResource, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  emulatorRequests,
  events,
  expectError,
  ofType,
  parseBody,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

async function replayOf(id: string, key?: string): Promise<TaskResource> {
  const res = await api(`/v1/tasks/${id}/replay`, { method: "POST", ...(key ? { key } : {}) });
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

async function comparison(id: string, key?: string) {
  const res = await api(`/v1/tasks/${id}/replay`, key ? { key } : {});
  expect(res.status).toBe(200);
  return parseBody(res, ReplayComparisonSchema);
}

describe("replaying a task", () => {
  it("answers every model call and tool call from the recording: no model request, the same answer, nothing differs", async () => {
    const marker = uniqueMarker("replay-planner");
    await script(marker, [
      {
        content: [toolUse("TodoWrite", { todos: [{ content: "Book the venue", status: "pending" }] })],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "1. Book the venue" }] },
    ]);
    const original = await waitForTask((await startTask("planner", `Plan it ${marker}`)).id);
    expect(original.status).toBe("completed");

    const replay = await replayOf(original.id);
    expect(replay).toMatchObject({ parent_task_id: original.id, trigger: { kind: "replay", task_id: original.id } });
    const done = await waitForTask(replay.id);
    expect([done.status, done.result]).toEqual(["completed", "1. Book the venue"]);
    expect(await emulatorRequests(replay.id)).toEqual([]);
    expect(done.usage.input_tokens + done.usage.output_tokens).toBe(0);
    // The tool call's recorded result was used: the replay's conversation holds it, and no step ran it again.
    const log = await events(replay.id);
    expect(ofType(log, "tool_call_started").length).toBe(0);
    expect(await comparison(replay.id)).toEqual({
      task_id: replay.id,
      replay_of: original.id,
      identical: true,
      differences: [],
    });
  });

  it("reports what a new version of the agent changed: its system prompt on every turn, the rest the same", async () => {
    const name = `replayed_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    const put = (prompt: string) =>
      api(`/v1/agents/${name}`, {
        method: "PUT",
        body: `name: ${name}\ndescription: Replayed.\ninstructions: ${prompt}\nclaude:\n  max_turns: 2\n`,
        headers: { "content-type": "application/yaml" },
        key: "test-author-key",
      });
    expect((await put("You answer briefly, version one.")).status).toBe(201);
    const marker = uniqueMarker("replay-version");
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
    const created = await api(`/v1/agents/${name}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Question ${marker}` }),
      key: "test-author-runner",
    });
    const original = parseBody(created, TaskResourceSchema);
    const ended = await parseBody(
      await api(`/v1/tasks/${(await original).id}?wait=20`, { key: "test-author-runner" }),
      TaskResourceSchema,
    );
    expect(ended.status).toBe("completed");
    expect((await put("You answer at length, version two.")).status).toBe(200);

    const replay = await replayOf(ended.id, "test-author-runner");
    const done = await parseBody(
      await api(`/v1/tasks/${replay.id}?wait=20`, { key: "test-author-runner" }),
      TaskResourceSchema,
    );
    expect([done.status, done.result]).toEqual(["completed", `Answer ${marker}`]);
    expect(await comparison(replay.id, "test-author-runner")).toEqual({
      task_id: replay.id,
      replay_of: ended.id,
      identical: false,
      differences: [
        {
          what: "system_prompt",
          turn: 1,
          original: "You answer briefly, version one.",
          replay: "You answer at length, version two.",
        },
      ],
    });
  });

  it("fails with replay_exhausted when the new version asks for a model call the recording does not have", async () => {
    const name = `exhausted_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    const put = (extra: string) =>
      api(`/v1/agents/${name}`, {
        method: "PUT",
        body: `name: ${name}\ndescription: Replayed.\ninstructions: Answer.\nclaude:\n  max_turns: 3\n${extra}`,
        headers: { "content-type": "application/yaml" },
        key: "test-author-key",
      });
    expect((await put("")).status).toBe(201);
    const marker = uniqueMarker("replay-exhausted");
    await script(marker, [{ content: [{ type: "text", text: "not JSON" }] }]);
    const created = await api(`/v1/agents/${name}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Question ${marker}` }),
      key: "test-author-runner",
    });
    const id = (await parseBody(created, TaskResourceSchema)).id;
    await api(`/v1/tasks/${id}?wait=20`, { key: "test-author-runner" });
    // Version two wants a JSON answer: the recorded "not JSON" makes it ask the model again, which the recording cannot.
    expect((await put("response_format:\n  type: object\n")).status).toBe(200);
    const replay = await replayOf(id, "test-author-runner");
    const done = await parseBody(
      await api(`/v1/tasks/${replay.id}?wait=20`, { key: "test-author-runner" }),
      TaskResourceSchema,
    );
    expect([done.status, done.error?.code]).toEqual(["failed", "replay_exhausted"]);
    // The schema joins the system prompt (src/agents/structured-output.ts), so that differs too.
    const report = await comparison(replay.id, "test-author-runner");
    expect(report.differences.map((d) => [d.what, d.turn])).toEqual([
      ["status", null],
      ["result", null],
      ["system_prompt", 1],
    ]);
  });

  it("refuses a task still running (409 run_not_ended), an unknown one (404), and compares only a replay", async () => {
    const marker = uniqueMarker("replay-running");
    await script(marker, [{ content: [{ type: "text", text: "slow" }] }], { ttft_ms: 20_000 });
    const running = await startTask("assistant", `Wait ${marker}`);
    await expectError(await api(`/v1/tasks/${running.id}/replay`, { method: "POST" }), 409, "run_not_ended");
    expect((await api(`/v1/tasks/${running.id}/cancel`, { method: "POST" })).status).toBe(200);
    await expectError(
      await api(`/v1/tasks/${crypto.randomUUID()}/replay`, { method: "POST" }),
      404,
      "task_not_found",
      "id",
    );
    await expectError(await api(`/v1/tasks/${running.id}/replay`), 409, "replay_unavailable");
  });
});
