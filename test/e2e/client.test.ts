// The client package against the Worker under `wrangler dev`: a task created, followed live to its end and waited
// for; a stream cut in the middle and resumed with Last-Event-ID, losing and repeating nothing; Outpost's errors as
// typed OutpostErrors; wait() giving up when told to; a schedule whose run fires by itself under wrangler dev.
import { describe, expect, it } from "vitest";
import { createOutpostClient, OutpostError, type OutpostEvent, OutpostTimeoutError } from "../../client/src/index.ts";
import { cuttingProxy } from "./support/cutting-proxy.ts";
import { e2eClient, marker, outpostUrl, scriptModel } from "./support/harness.ts";
import { E2E_ADMIN_KEY, E2E_OTHER_TENANT_KEY } from "./support/keys.ts";

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");

describe("the client", () => {
  it("creates a task, follows its events to run_finished, and wait() returns the completed task", async () => {
    const m = marker("client-basic");
    await scriptModel(m, [{ content: [{ type: "text", text: "All done." }] }]);
    const outpost = e2eClient();
    const created = await outpost.tasks.create("assistant", { input: `Say you are done ${m}` });

    const seen: OutpostEvent[] = [];
    for await (const event of outpost.tasks.events(created.id)) seen.push(event);

    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.at(-1)?.event_type).toBe("run_finished");
    const task = await outpost.wait(created.id);
    expect(task).toMatchObject({ id: created.id, status: "completed", result: "All done." });
    expect(task.last_event_seq).toBe(seen.length);
  });

  it("resumes a dropped event stream with Last-Event-ID: every event once, in order", async () => {
    const m = marker("client-resume");
    // A long streamed answer, slowly: the stream is live (not a replay) when the proxy cuts it.
    await scriptModel(m, [{ content: [{ type: "text", text: words(60) }] }], { token_delay_ms: 15 });
    const proxy = await cuttingProxy(2, 5);
    const outpost = createOutpostClient({ baseUrl: proxy.url, apiKey: E2E_ADMIN_KEY });
    const created = await outpost.tasks.create("assistant", { input: `Write many words ${m}` });

    const seen: OutpostEvent[] = [];
    for await (const event of outpost.tasks.events(created.id)) seen.push(event);

    // Three connections: the first from the start, each next one from the last event the client had.
    const resumedFrom = proxy.connections.map((c) => c.lastEventId);
    expect(resumedFrom).toHaveLength(3);
    expect(resumedFrom[0]).toBe("");
    expect(Number(resumedFrom[1])).toBeGreaterThanOrEqual(1);
    expect(Number(resumedFrom[2])).toBeGreaterThan(Number(resumedFrom[1]));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.at(-1)?.event_type).toBe("run_finished");
    // The same events as a reader that was never cut.
    const direct: OutpostEvent[] = [];
    for await (const event of e2eClient().tasks.events(created.id)) direct.push(event);
    expect(seen).toEqual(direct);
  });

  it("run() starts a task and follows it in one request, resuming from its own stream when that one drops", async () => {
    const m = marker("client-run");
    await scriptModel(m, [{ content: [{ type: "text", text: words(60) }] }], { token_delay_ms: 15 });
    const proxy = await cuttingProxy(1, 5);
    const outpost = createOutpostClient({ baseUrl: proxy.url, apiKey: E2E_ADMIN_KEY });
    const { id, events } = await outpost.tasks.run("assistant", { input: `Write many words ${m}` });

    const seen: OutpostEvent[] = [];
    for await (const event of events) seen.push(event);

    // The creating POST's stream, cut after five frames, then GET /v1/tasks/:id/events from the last event seen.
    expect(proxy.connections.map((c) => [c.method, c.lastEventId === "" ? "" : "resumed"])).toEqual([
      ["POST", ""],
      ["GET", "resumed"],
    ]);
    expect(Number(proxy.connections[1]?.lastEventId)).toBeGreaterThanOrEqual(5);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen[0]?.event_type).toBe("task_created");
    expect(seen.at(-1)?.event_type).toBe("run_finished");
    const direct: OutpostEvent[] = [];
    for await (const event of e2eClient().tasks.events(id)) direct.push(event);
    expect(seen).toEqual(direct);
  });

  it("throws Outpost's errors as OutpostError with the code, the field and the request id", async () => {
    const outpost = e2eClient();
    const invalid = await outpost.tasks.create("assistant", { input: "" }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(OutpostError);
    expect(invalid).toMatchObject({ status: 400, code: "validation_failed", field: "input" });
    expect((invalid as OutpostError).requestId).toMatch(/^[0-9a-f-]{36}$/);

    const missing = await outpost.tasks.get(crypto.randomUUID()).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: "task_not_found" });

    const wrongKey = createOutpostClient({ baseUrl: outpostUrl(), apiKey: "not-a-key" });
    await expect(wrongKey.agents.list()).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("schedules a run that fires by itself, and reads, lists, pauses, resumes and deletes schedules", async () => {
    const m = marker("client-schedule");
    await scriptModel(m, [{ content: [{ type: "text", text: "On schedule." }] }]);
    const outpost = e2eClient();
    const at = new Date(Date.now() + 2_000).toISOString();
    const once = await outpost.schedules.create({ agent: "assistant", input: `Run once ${m}`, at });
    expect(once).toMatchObject({ status: "active", at, next_run_at: at, cron: null });

    const daily = await outpost.schedules.create({ agent: "assistant", input: `Daily ${m}`, cron: "0 6 * * *" });
    expect((await outpost.schedules.pause(daily.id)).status).toBe("paused");
    const listed = await outpost.schedules.list({ status: ["paused"] });
    expect(listed.schedules.map((s) => s.id)).toContain(daily.id);
    expect((await outpost.schedules.resume(daily.id)).status).toBe("active");
    await outpost.schedules.delete(daily.id);
    await expect(outpost.schedules.get(daily.id)).rejects.toMatchObject({ status: 404, code: "schedule_not_found" });

    let fired = await outpost.schedules.get(once.id);
    for (let i = 0; i < 200 && fired.recent_fires[0]?.outcome !== "started"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      fired = await outpost.schedules.get(once.id);
    }
    expect(fired.status).toBe("finished");
    const task = await outpost.wait(fired.recent_fires[0]?.task_id ?? "");
    expect(task).toMatchObject({
      status: "completed",
      result: "On schedule.",
      trigger: { kind: "schedule", schedule_id: once.id, due_at: at, due_times: 1 },
    });
  });

  it("does not show one tenant's task to another tenant's key", async () => {
    const m = marker("client-tenant");
    await scriptModel(m, [{ content: [{ type: "text", text: "Mine." }] }]);
    const created = await e2eClient().tasks.create("assistant", { input: `Whose ${m}` });
    await expect(e2eClient(E2E_OTHER_TENANT_KEY).tasks.get(created.id)).rejects.toMatchObject({
      status: 404,
      code: "task_not_found",
    });
  });

  it("reaches every route through the typed api, with Outpost's error body on a refusal", async () => {
    const m = marker("client-api");
    await scriptModel(m, [{ content: [{ type: "text", text: "Checked." }] }]);
    const outpost = e2eClient();
    const created = await outpost.tasks.create("assistant", { input: `Check it ${m}` });
    await outpost.wait(created.id);

    const { data, error } = await outpost.api.GET("/v1/tasks/{id}/checkpoints", {
      params: { path: { id: created.id } },
    });
    expect(error).toBeUndefined();
    expect(data?.task_id).toBe(created.id);
    expect(data?.checkpoints.length).toBeGreaterThan(0);

    const refused = await outpost.api.POST("/v1/agents/{name}/tasks", {
      params: { path: { name: "no-such-agent" } },
      body: { input: "hello" },
    });
    expect(refused.response.status).toBe(404);
    expect(refused.error?.error.code).toBe("agent_not_found");
  });

  it("wait() gives up with OutpostTimeoutError when the task has not ended in time", async () => {
    const m = marker("client-timeout");
    await scriptModel(m, [{ content: [{ type: "text", text: "Late." }] }], { ttft_ms: 4_000 });
    const outpost = e2eClient();
    const created = await outpost.tasks.create("assistant", { input: `Take your time ${m}` });
    await expect(outpost.wait(created.id, { timeoutMs: 1_500 })).rejects.toBeInstanceOf(OutpostTimeoutError);
    expect((await outpost.wait(created.id)).status).toBe("completed");
  });

  it("answers with the shipped librarian from documents uploaded to a collection, under wrangler dev", async () => {
    const m = marker("client-knowledge");
    const outpost = e2eClient();
    const put = await outpost.collections.put("handbook", {
      embedding_provider: { provider: "openai", name: "text-embedding-3-small" },
      documents: [
        {
          id: "refunds.md",
          title: "Refunds",
          source: "https://handbook.example/refunds",
          text: "# Refunds\n\nRefunds are paid within 14 days of the request.",
        },
        { id: "shipping.md", title: "Shipping", text: "# Shipping\n\nParcels ship from Lisbon every weekday." },
      ],
    });
    expect(put.collection).toMatchObject({ name: "handbook", document_count: 2, chunk_count: 2, backend: "sqlite" });
    expect((await outpost.collections.documents("handbook")).documents.map((d) => d.id)).toEqual([
      "refunds.md",
      "shipping.md",
    ]);
    // A page at a time: the client passes limit and cursor as the query string.
    const page = await outpost.collections.documents("handbook", { limit: 1 });
    expect(page.documents.map((d) => d.id)).toEqual(["refunds.md"]);
    const rest = await outpost.collections.documents("handbook", { limit: 1, cursor: page.next_cursor ?? "" });
    expect([rest.documents.map((d) => d.id), rest.next_cursor]).toEqual([["shipping.md"], null]);
    await scriptModel(m, [
      {
        content: [
          { type: "tool_use", name: "search_handbook", input: { query: "how many days until a refund is paid" } },
        ],
      },
      { content: [{ type: "text", text: "Within 14 days (https://handbook.example/refunds)." }] },
    ]);
    const task = await outpost.tasks.create("librarian", { input: `When is my refund paid? ${m}` });
    expect(await outpost.wait(task.id)).toMatchObject({
      status: "completed",
      result: "Within 14 days (https://handbook.example/refunds).",
    });
    const completed: OutpostEvent[] = [];
    for await (const event of outpost.tasks.events(task.id)) {
      if (event.event_type === "tool_call_completed") completed.push(event);
    }
    expect(completed).toHaveLength(1);
    const preview = String((completed[0]?.payload as { output_preview?: string } | undefined)?.output_preview);
    const first = (JSON.parse(preview) as { results: { document_id: string; text: string }[] }).results[0];
    expect(first).toMatchObject({ document_id: "refunds.md", text: "Refunds are paid within 14 days of the request." });
    await outpost.collections.deleteDocument("handbook", "shipping.md");
    await expect(outpost.collections.document("handbook", "shipping.md")).rejects.toMatchObject({
      status: 404,
      code: "document_not_found",
    });
    await outpost.collections.delete("handbook");
    await expect(outpost.collections.get("handbook")).rejects.toMatchObject({
      status: 404,
      code: "collection_not_found",
    });
  });
});
