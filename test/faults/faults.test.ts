// Fault injection (issue 17 §2) on ordinary tasks: each fault is injected where the real one arrives (the model's
// HTTP responses under the SDK, the MCP client's fetch, the object itself), is recorded once as fault_injected, and
// the run recovers (or fails) exactly as it does when the emulator or a dead server produces the same fault.
import { describe, expect, inject, it } from "vitest";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  emulatorRequests,
  events,
  expectError,
  ofType,
  parseEvent,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const MCP_URL = inject("mcpUrl");

/** Two TodoWrite calls, then the answer: three model calls, six checkpoints. */
function plannerScript(): ScriptTurn[] {
  const todo = (content: string, status: string) => ({ todos: [{ content, status }] });
  return [
    { content: [{ type: "text", text: "Planning." }, toolUse("TodoWrite", todo("Read the brief", "pending"))] },
    { content: [{ type: "text", text: "Updating." }, toolUse("TodoWrite", todo("Read the brief", "completed"))] },
    { content: [{ type: "text", text: "The plan is ready: read the brief, then write." }] },
  ];
}

async function faulted(label: string, faults: Record<string, unknown>, turns = plannerScript()) {
  const marker = uniqueMarker(label);
  await script(marker, turns);
  const task = await startTask("planner", `plan it ${marker}`, { faults });
  // A long poll in flight when the object resets is asked again of the new instance (waitOnTask).
  const finished = await waitForTask(task.id, 30);
  return { task: finished, log: await events(task.id) };
}

function injected(log: EventBody[]) {
  return ofType(log, "fault_injected").map((e) => e.payload);
}

describe("model faults", () => {
  it("429 on the second call: the runtime waits out Retry-After and tries again; the run ends as without the fault", async () => {
    const { task, log } = await faulted("fault-429", { model_fault: { kind: "429", call: 2 } });
    expect(task.status).toBe("completed");
    expect(task.result).toBe("The plan is ready: read the brief, then write.");
    expect(injected(log)).toEqual([
      { fault: "model_fault", kind: "429", call: 2, step: null, server: null, tool: null },
    ]);
    // The retry is the runtime's, as for a real 429: scheduled with the server's delay, on the second call only.
    const retries = ofType(log, "llm_retry_scheduled").map((e) => e.payload);
    expect(retries).toEqual([
      expect.objectContaining({ turn_index: 2, status: 429, delay_seconds: 1, http_attempt: 2 }),
    ]);
    // The emulator saw each call once: the faulted attempt never left the Worker.
    expect(await emulatorRequests(task.id)).toHaveLength(3);
    expect(ofType(log, "todo_list_updated")).toHaveLength(2);
  });

  it("529 given as a YAML-style number strikes the first call only", async () => {
    const { task, log } = await faulted("fault-529", { model_fault: 529 });
    expect(task.status).toBe("completed");
    expect(injected(log)).toEqual([
      { fault: "model_fault", kind: "529", call: 1, step: null, server: null, tool: null },
    ]);
    expect(ofType(log, "llm_retry_scheduled").map((e) => [e.payload.turn_index, e.payload.status])).toEqual([[1, 529]]);
  });

  it("midstream: the real stream breaks after its first frames; the model turn runs again and the run completes", async () => {
    const { task, log } = await faulted("fault-midstream", { model_fault: { kind: "midstream", call: 3 } });
    expect(task.status).toBe("completed");
    expect(task.result).toBe("The plan is ready: read the brief, then write.");
    expect(injected(log)).toEqual([
      { fault: "model_fault", kind: "midstream", call: 3, step: null, server: null, tool: null },
    ]);
    // The third call's stream had begun and was cut: its failure, its cost as waste, then the turn's second attempt.
    const failed = ofType(log, "llm_request_failed");
    expect(failed.map((e) => [e.payload.turn_index, e.payload.attempt, e.payload.retryable])).toEqual([[3, 1, true]]);
    const wasted = ofType(log, "llm_call_abandoned");
    expect(wasted.map((e) => e.payload.call)).toEqual(["artifacts/llm/decision_loop_turn_3_attempt_1"]);
    expect(ofType(log, "step_resumed").map((e) => e.payload)).toEqual([
      { step: "turn_3_model", attempt: 2, reason: "stream_broken", delay_ms: 500 },
    ]);
    const sent = ofType(log, "llm_request_sent").map((e) => [e.payload.turn_index, e.payload.attempt]);
    expect(sent).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [3, 2],
    ]);
    // The order a client reads: the failure, the waste, the new attempt, its request.
    const at = (type: string, attempt?: number) =>
      log.findIndex((e) => e.event_type === type && (attempt === undefined || e.payload.attempt === attempt));
    expect(at("llm_request_failed")).toBeLessThan(at("llm_call_abandoned"));
    expect(at("llm_call_abandoned")).toBeLessThan(at("step_resumed"));
    expect(at("step_resumed")).toBeLessThan(at("llm_request_sent", 2));
    // The tools ran once each; the emulator answered the third turn twice; the broken call's tokens are waste.
    expect(ofType(log, "todo_list_updated")).toHaveLength(2);
    expect(await emulatorRequests(task.id)).toHaveLength(4);
    expect(task.usage.recovery.attempts).toBe(1);
    expect(task.usage.recovery.input_tokens).toBeGreaterThan(0);
  });

  it("a stream that breaks on every attempt is tried until the call's horizon, then fails with streaming_error", async () => {
    const marker = uniqueMarker("fault-midstream-always");
    // The emulator's own mid-stream error event (the API's overloaded_error), on each attempt of the first turn.
    const fault = { kind: "stream_error", after_deltas: 1, error_type: "overloaded_error" } as const;
    await script(marker, [
      { content: [{ type: "text", text: "Planning the whole thing, step by step." }], faults: Array(8).fill(fault) },
    ]);
    // A one-second horizon: a try at once, one 0.5 s later, and one at the horizon (fewer on a slow machine).
    const agent = defineAgent({ providerWaitSeconds: 1 });
    const task = await waitForTask((await startTask(agent, `plan it ${marker}`)).id, 30);
    expect(task.status).toBe("failed");
    expect(task.error?.code).toBe("streaming_error");
    const log = await events(task.id);
    const attempts = ofType(log, "llm_request_failed").map((e) => e.payload.attempt);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts).toEqual(attempts.map((_, i) => i + 1));
    const resumed = ofType(log, "step_resumed").map((e) => [e.payload.attempt, e.payload.reason, e.payload.delay_ms]);
    expect(resumed).toHaveLength(attempts.length - 1);
    expect(resumed[0]).toEqual([2, "stream_broken", 500]);
    expect(task.usage.recovery.attempts).toBe(attempts.length);
  });

  it("malformed: a frame of bad JSON ends the stream; the run fails with streaming_error naming it", async () => {
    const { task, log } = await faulted("fault-malformed", { model_fault: "malformed" });
    expect(task.status).toBe("failed");
    expect(task.error?.code).toBe("streaming_error");
    expect(task.error?.message).toMatch(/^The model stream broke after \d+ events: .*JSON/);
    expect(injected(log).map((f) => f.kind)).toEqual(["malformed"]);
  });

  it("a call number past the run's calls injects nothing", async () => {
    const { task, log } = await faulted("fault-none", { model_fault: { kind: "529", call: 9 } });
    expect(task.status).toBe("completed");
    expect(injected(log)).toEqual([]);
    expect(ofType(log, "llm_retry_scheduled")).toEqual([]);
  });
});

describe("evict_after_step", () => {
  it("resets the object after the nth checkpoint: the run resumes, no tool runs twice, the log stays gapless", async () => {
    const { task, log } = await faulted("fault-evict", { evict_after_step: 3 });
    expect(task.status).toBe("completed");
    expect(task.result).toBe("The plan is ready: read the brief, then write.");
    expect(injected(log)).toEqual([
      { fault: "evict_after_step", kind: "evict", call: null, step: 3, server: null, tool: null },
    ]);
    const types = log.map((e) => e.event_type);
    // Checkpoint 3 (turn_1_tools) is saved, the object resets before the next step, and the run resumes there.
    const third = log.findIndex((e) => e.event_type === "checkpoint_saved" && e.payload.sequence === 3);
    expect(types.slice(third + 1, third + 3)).toEqual(["fault_injected", "run_resumed"]);
    expect(ofType(log, "run_resumed")).toHaveLength(1);
    expect(ofType(log, "todo_list_updated")).toHaveLength(2);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(await emulatorRequests(task.id)).toHaveLength(3);
  });
});

describe("drop_client", () => {
  it("closes the client's stream after the second checkpoint; a reconnect with Last-Event-ID gets the rest, once", async () => {
    const marker = uniqueMarker("fault-drop");
    // Slow enough that the client is watching when the drop comes.
    await script(marker, plannerScript(), { ttft_ms: 200 });
    const task = await startTask("planner", `plan it ${marker}`, { faults: { drop_client: true } });
    const first = (await readSse(await api(`/v1/tasks/${task.id}/events`))).map((f) => parseEvent(f.data));
    // The stream ended without the terminal event, right after the drop was recorded.
    const last = first.at(-1);
    expect(last?.event_type).toBe("fault_injected");
    expect(last?.payload).toEqual({
      fault: "drop_client",
      kind: "drop",
      call: null,
      step: 2,
      server: null,
      tool: null,
    });
    expect(first.map((e) => e.seq)).toEqual(first.map((_, i) => i + 1));
    const rest = (
      await readSse(await api(`/v1/tasks/${task.id}/events`, { headers: { "Last-Event-ID": String(last?.seq) } }))
    ).map((f) => parseEvent(f.data));
    const all = [...first, ...rest];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)?.event_type).toBe("run_finished");
    expect((await waitForTask(task.id)).status).toBe("completed");
    expect(injected(await events(task.id))).toHaveLength(1);
  });
});

describe("mcp_fault", () => {
  const agentWith = (timeout?: number) =>
    defineAgent({
      mcpServers: {
        everything: {
          url: MCP_URL,
          headers: { Authorization: { secret: "MCP_TEST_TOKEN", prefix: "Bearer " } },
          ...(timeout ? { tools: { echo: { timeout_seconds: timeout } } } : {}),
        },
      },
    });
  const echoTwice = (): ScriptTurn[] => [
    { content: [toolUse("mcp__everything__echo", { message: "one" })], stop_reason: "tool_use" },
    { content: [toolUse("mcp__everything__echo", { message: "two" })], stop_reason: "tool_use" },
    done,
  ];

  it("down: every call to the server is refused; the model gets error results and the run goes on", async () => {
    const agent = agentWith();
    const marker = uniqueMarker("fault-mcp-down");
    await script(marker, echoTwice());
    const started = await startTask(agent, `echo ${marker}`, {
      faults: { mcp_fault: { server: "everything", kind: "down" } },
    });
    const task = await waitForTask(started.id, 30);
    expect(task.status).toBe("completed");
    const log = await events(task.id);
    // The tools were listed before the fault: it strikes the calls, not the connection.
    expect(ofType(log, "mcp_servers_connected")).toHaveLength(1);
    expect(injected(log)).toEqual([
      { fault: "mcp_fault", kind: "down", call: null, step: null, server: "everything", tool: "echo" },
      { fault: "mcp_fault", kind: "down", call: null, step: null, server: "everything", tool: "echo" },
    ]);
    expect(ofType(log, "mcp_tool_call_completed")).toEqual([]);
    expect(ofType(log, "mcp_tool_call_failed")).toHaveLength(2);
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain("connection refused");
  });

  it("timeout: the call is never answered and ends at its timeout_seconds", async () => {
    const agent = agentWith(1);
    const marker = uniqueMarker("fault-mcp-timeout");
    await script(marker, [echoTwice()[0] as ScriptTurn, done]);
    const started = await startTask(agent, `echo ${marker}`, {
      faults: { mcp_fault: { server: "everything", kind: "timeout" } },
    });
    const task = await waitForTask(started.id, 30);
    expect(task.status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "mcp_tool_call_failed").map((e) => e.payload.error)).toEqual([
      { code: "timeout", message: "the call did not finish within its timeout of 1 s" },
    ]);
  });
});

describe("who may inject faults, and what", () => {
  it("refuses faults where the operator has not turned them on for the tenant", async () => {
    const res = await api("/v1/agents/planner/tasks", {
      method: "POST",
      key: "test-beta-key",
      body: JSON.stringify({ input: "plan", faults: { model_fault: "429" } }),
    });
    const body = await expectError(res, 403, "fault_injection_disabled", "faults");
    expect(body.error.message).toContain("OUTPOST_FAULT_INJECTION");
  });

  it("names the field of a fault it cannot read", async () => {
    const post = (faults: unknown) =>
      api("/v1/agents/planner/tasks", { method: "POST", body: JSON.stringify({ input: "plan", faults }) });
    await expectError(await post({ model_fault: "404" }), 400, "validation_failed", "faults.model_fault");
    await expectError(
      await post({ model_fault: { kind: "529", call: 0 } }),
      400,
      "validation_failed",
      "faults.model_fault.call",
    );
    await expectError(await post({ evict_after_step: 1.5 }), 400, "validation_failed", "faults.evict_after_step");
    await expectError(await post({ drop_client: false }), 400, "validation_failed", "faults");
    await expectError(await post({ crash: true }), 400, "validation_failed", "faults.crash");
    await expectError(
      await post({ mcp_fault: { server: "nowhere", kind: "down" } }),
      400,
      "validation_failed",
      "faults.mcp_fault.server",
    );
  });
});
