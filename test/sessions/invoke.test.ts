// invoke_once (seed 004 AgentBackend.invoke_once) through the HTTP API: one message on a fresh conversation seeded
// with a context, answered with its ExecutionResult (blocking, or as an event stream whose terminal event carries
// it); underneath it is a task, recorded and visible like any other.
import { describe, expect, it } from "vitest";
import { ExecutionResultSchema } from "../../src/contracts/execution-result.ts";
import { InvocationSchema, MessageListSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  defineAgent,
  expectError,
  parseBody,
  parseEvent,
  readSse,
  script,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const helper = defineAgent({ allowedTools: ["TodoWrite"] });

function invoke(body: Record<string, unknown>, query = "", headers: Record<string, string> = {}): Promise<Response> {
  return api(`/v1/agents/${helper}/invoke${query}`, { method: "POST", body: JSON.stringify(body), headers });
}

describe("invoke_once", () => {
  it("answers one message on a conversation seeded with context, with its ExecutionResult, as a task", async () => {
    const marker = uniqueMarker("invoke-context");
    // The reply the emulator gives after one assistant message: reached only when the context is sent.
    await script(marker, [
      { content: [{ type: "text", text: "not this one" }] },
      {
        content: [toolUse("TodoWrite", { todos: [{ content: "Paint", status: "pending" }] })],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "You wanted the fence painted; it is on the list." }] },
    ]);
    const res = await invoke({
      message: "What did I ask for? Put it on the list.",
      context: [
        { role: "user", content: `Please paint the fence ${marker}` },
        { role: "assistant", content: "Sure, I will remember that." },
      ],
    });
    expect(res.status).toBe(200);
    const body = await parseBody(res, InvocationSchema);
    expect(body.status).toBe("completed");
    expect(res.headers.get("location")).toBe(body.links.self);
    const result = ExecutionResultSchema.parse(body.result);
    expect(result).toMatchObject({
      response: "You wanted the fence painted; it is on the list.",
      num_turns: 2,
      is_error: false,
      error_reason: null,
    });
    expect(result.tool_calls.map((c) => c.name)).toEqual(["TodoWrite"]);
    expect(result.tool_results).toEqual([
      { call_id: result.tool_calls[0]?.call_id, result: expect.any(String), is_error: false },
    ]);
    // A task like any other: its conversation holds the context, then the message and the run.
    const task = await waitForTask(body.task_id);
    expect(task).toMatchObject({ status: "completed", input: "What did I ask for? Put it on the list." });
    const messages = await parseBody(await api(`/v1/tasks/${body.task_id}/messages`), MessageListSchema);
    expect(messages.messages.slice(0, 3).map((m) => [m.role, m.content])).toEqual([
      ["user", `Please paint the fence ${marker}`],
      ["assistant", "Sure, I will remember that."],
      ["user", "What did I ask for? Put it on the list."],
    ]);
    expect(messages.messages).toHaveLength(6);
  });

  it("streams the run with Accept: text/event-stream, its terminal event carrying the ExecutionResult", async () => {
    const marker = uniqueMarker("invoke-stream");
    await script(marker, [{ content: [{ type: "text", text: "Streamed once." }] }]);
    const res = await invoke({ message: `Hello ${marker}` }, "", { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const taskId = res.headers.get("x-task-id") ?? "";
    const frames = await readSse(res);
    const types = frames.map((f) => f.event);
    expect(types[0]).toBe("task_created");
    expect(types).toContain("llm_text_delta");
    expect(types.at(-1)).toBe("run_finished");
    const last = parseEvent(frames.at(-1)?.data ?? "");
    expect(ExecutionResultSchema.parse(last.payload.execution_result)).toMatchObject({
      response: "Streamed once.",
      is_error: false,
    });
    expect((await waitForTask(taskId)).status).toBe("completed");
  });

  it("reports a failed run as is_error with its reason, and answers 202 with the task while it runs", async () => {
    const marker = uniqueMarker("invoke-fail");
    const loop = {
      content: [toolUse("TodoWrite", { todos: [{ content: "Again", status: "pending" }] })],
      stop_reason: "tool_use",
    };
    await script(marker, [loop, loop]);
    const failed = await parseBody(await invoke({ message: `Loop ${marker}`, max_turns: 1 }), InvocationSchema);
    expect(failed.status).toBe("failed");
    expect(failed.result).toMatchObject({ is_error: true, num_turns: 1 });
    expect(failed.result.error_reason).toMatch(/^max_turns limit reached/);

    const slow = uniqueMarker("invoke-slow");
    await script(slow, [{ content: [{ type: "text", text: "Later." }] }], { ttft_ms: 1500 });
    const res = await invoke({ message: `Slow ${slow}` }, "?wait=0");
    expect(res.status).toBe(202);
    const task = await parseBody(res, TaskResourceSchema);
    expect((await waitForTask(task.id)).status).toBe("completed");
  });

  it("refuses bad context naming the field, and agents that cannot continue a conversation", async () => {
    await expectError(
      await invoke({ message: "hi", context: [{ role: "system", content: "be brief" }] }),
      400,
      "validation_failed",
      "context.0.role",
    );
    await expectError(await invoke({ message: "" }), 400, "validation_failed", "message");
    await expectError(
      await api("/v1/agents/operator/invoke", { method: "POST", body: JSON.stringify({ message: "hi" }) }),
      400,
      "agent_not_conversational",
      "name",
    );
  });
});
