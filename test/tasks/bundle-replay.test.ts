// Replaying a run from its bundle (POST /v1/replays, src/http/routes/replays.ts, src/http/bundle-replay.ts): the tar
// GET /v1/tasks/:id/bundle downloads is posted back, and the replay runs from it alone, through the same planning and
// task creation as a replay of the task itself; GET /v1/tasks/:id/replay compares it with the bundle it kept.
// Against the emulator, whose record of requests shows that no model was called.
import { describe, expect, it } from "vitest";
import { ReplayComparisonSchema, type TaskResource, TaskResourceSchema } from "../../src/http/responses.ts";
import { packTar, readTar } from "../../src/run-bundle/tar.ts";
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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function bundleOf(id: string, key?: string): Promise<Uint8Array> {
  const res = await api(`/v1/tasks/${id}/bundle`, key ? { key } : {});
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

function postBundle(bundle: Uint8Array, options: { key?: string; agent?: string; type?: string } = {}) {
  return api(`/v1/replays${options.agent !== undefined ? `?agent=${encodeURIComponent(options.agent)}` : ""}`, {
    method: "POST",
    body: bundle,
    headers: { "content-type": options.type ?? "application/x-tar" },
    ...(options.key ? { key: options.key } : {}),
  });
}

async function replayOf(bundle: Uint8Array, options: { key?: string; agent?: string } = {}): Promise<TaskResource> {
  const res = await postBundle(bundle, options);
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

async function ended(id: string, key?: string): Promise<TaskResource> {
  return parseBody(await api(`/v1/tasks/${id}?wait=20`, key ? { key } : {}), TaskResourceSchema);
}

async function comparison(id: string, key?: string) {
  const res = await api(`/v1/tasks/${id}/replay`, key ? { key } : {});
  expect(res.status).toBe(200);
  return parseBody(res, ReplayComparisonSchema);
}

/** The bundle's files, by path. */
function unpack(bundle: Uint8Array): Map<string, string> {
  return new Map(
    readTar(bundle).map((e) => [e.path, decoder.decode(bundle.subarray(e.offset, e.offset + e.size))] as const),
  );
}

/** The bundle again, with some files replaced (a string) or left out (null). */
function repack(bundle: Uint8Array, changes: Record<string, string | null>): Uint8Array {
  const files = unpack(bundle);
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) files.delete(path);
    else files.set(path, content);
  }
  return packTar([...files].map(([path, text]) => ({ path, content: encoder.encode(text), mtimeMs: 0 }))).archive;
}

/** A planner task that wrote a todo list, then answered; ended. */
async function plannedTask(label: string, answer = "1. Book the venue", todo = "Book the venue") {
  const marker = uniqueMarker(label);
  await script(marker, [
    { content: [toolUse("TodoWrite", { todos: [{ content: todo, status: "pending" }] })], stop_reason: "tool_use" },
    { content: [{ type: "text", text: answer }] },
  ]);
  const task = await waitForTask((await startTask("planner", `Plan it ${marker}`)).id);
  expect(task.status).toBe("completed");
  return task;
}

describe("replaying a run from its bundle", () => {
  it("answers every model and tool call from the bundle: no model request, the same answer, nothing differs", async () => {
    const original = await plannedTask("bundle-replay");
    const replay = await replayOf(await bundleOf(original.id));
    expect(replay).toMatchObject({
      assigned_agent: "planner",
      parent_task_id: null,
      trigger: { kind: "replay", task_id: original.id, source: "bundle" },
    });
    const done = await waitForTask(replay.id);
    expect([done.status, done.result]).toEqual(["completed", "1. Book the venue"]);
    expect(await emulatorRequests(replay.id)).toEqual([]);
    expect(done.usage.input_tokens + done.usage.output_tokens).toBe(0);
    // The tool call's recorded result, read from the bundle, answered it: no step ran it again.
    expect(ofType(await events(replay.id), "tool_call_started")).toEqual([]);
    expect(await comparison(replay.id)).toEqual({
      task_id: replay.id,
      replay_of: original.id,
      identical: true,
      differences: [],
    });
  });

  it("replays a bundle whose task is not in the tenant: another tenant's, or one that never existed here", async () => {
    const original = await plannedTask("bundle-elsewhere");
    const bundle = await bundleOf(original.id);
    // Tenant beta cannot see the task (404), yet replays its bundle: the replay never reads the task.
    await expectError(await api(`/v1/tasks/${original.id}`, { key: "test-beta-key" }), 404, "task_not_found", "id");
    const beta = await replayOf(bundle, { key: "test-beta-key" });
    expect([(await ended(beta.id, "test-beta-key")).result]).toEqual(["1. Book the venue"]);
    expect((await comparison(beta.id, "test-beta-key")).identical).toBe(true);

    // The same recording under an id no task ever had.
    const elsewhere = crypto.randomUUID();
    const files = unpack(bundle);
    const task = JSON.parse(files.get("task.json") as string) as Record<string, unknown>;
    const moved = repack(bundle, { "task.json": JSON.stringify({ ...task, id: elsewhere }) });
    const replay = await replayOf(moved);
    expect(replay.trigger).toEqual({ kind: "replay", task_id: elsewhere, source: "bundle" });
    expect((await waitForTask(replay.id)).result).toBe("1. Book the venue");
    expect(await comparison(replay.id)).toEqual({
      task_id: replay.id,
      replay_of: elsewhere,
      identical: true,
      differences: [],
    });
  });

  it("reports what a new version of the agent changed, and replays with another agent when asked", async () => {
    const name = `bundled_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
    const put = (agent: string, prompt: string) =>
      api(`/v1/agents/${agent}`, {
        method: "PUT",
        body: `name: ${agent}\ndescription: Replayed.\ninstructions: ${prompt}\nclaude:\n  max_turns: 2\n`,
        headers: { "content-type": "application/yaml" },
        key: "test-author-key",
      });
    expect((await put(name, "You answer briefly, version one.")).status).toBe(201);
    const marker = uniqueMarker("bundle-version");
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
    const created = await api(`/v1/agents/${name}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Question ${marker}` }),
      key: "test-author-runner",
    });
    const original = await ended((await parseBody(created, TaskResourceSchema)).id, "test-author-runner");
    expect(original.status).toBe("completed");
    const bundle = await bundleOf(original.id, "test-author-runner");
    expect((await put(name, "You answer at length, version two.")).status).toBe(200);

    const replay = await replayOf(bundle, { key: "test-author-runner" });
    expect((await ended(replay.id, "test-author-runner")).result).toBe(`Answer ${marker}`);
    const promptChanged = {
      what: "system_prompt",
      turn: 1,
      original: "You answer briefly, version one.",
      replay: "You answer at length, version two.",
    };
    expect(await comparison(replay.id, "test-author-runner")).toEqual({
      task_id: replay.id,
      replay_of: original.id,
      identical: false,
      differences: [promptChanged],
    });

    // ?agent= replays the same recording with another agent of the tenant.
    const other = `${name}_b`;
    expect((await put(other, "You are the other agent.")).status).toBe(201);
    const handed = await replayOf(bundle, { key: "test-author-runner", agent: other });
    expect(handed.assigned_agent).toBe(other);
    expect((await ended(handed.id, "test-author-runner")).status).toBe("completed");
    expect((await comparison(handed.id, "test-author-runner")).differences).toEqual([
      { ...promptChanged, replay: "You are the other agent." },
    ]);

    // Another tenant cannot replay with this tenant's agent, recorded or named: 404 as for any unknown agent.
    await expectError(await postBundle(bundle, { key: "test-beta-key" }), 404, "agent_not_found", "agent");
    await expectError(
      await postBundle(await bundleOf((await plannedTask("bundle-other-agent")).id), {
        key: "test-beta-key",
        agent: other,
      }),
      404,
      "agent_not_found",
      "agent",
    );
  });

  it("replays a bundle whose secrets were redacted: the redacted values replay as they are, nothing differs", async () => {
    const secret = `ghp_${"a1B2c3D4e5".repeat(4)}`;
    const original = await plannedTask("bundle-redacted", `Use ${secret} to push.`, `Push with ${secret}`);
    const bundle = await bundleOf(original.id);
    const files = unpack(bundle);
    expect(files.get("checkpoints.json")).toContain("[REDACTED]");
    expect([...files.values()].some((text) => text.includes(secret))).toBe(false);

    const replay = await replayOf(bundle);
    const done = await waitForTask(replay.id);
    expect([done.status, done.result]).toEqual(["completed", "Use [REDACTED] to push."]);
    expect(await comparison(replay.id)).toEqual({
      task_id: replay.id,
      replay_of: original.id,
      identical: true,
      differences: [],
    });
  });

  it("is the same replay for a retry with the same Idempotency-Key, and refuses that key for another bundle", async () => {
    const bundle = await bundleOf((await plannedTask("bundle-idempotent")).id);
    const key = `bundle-${crypto.randomUUID()}`;
    const send = (body: Uint8Array) =>
      api("/v1/replays", {
        method: "POST",
        body,
        headers: { "content-type": "application/x-tar", "idempotency-key": key },
      });
    const first = await send(bundle);
    expect(first.status).toBe(202);
    const again = await send(bundle);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    const id = (await parseBody(first, TaskResourceSchema)).id;
    expect((await parseBody(again, TaskResourceSchema)).id).toBe(id);
    const other = await bundleOf((await plannedTask("bundle-idempotent-2")).id);
    await expectError(await send(other), 422, "idempotency_key_reused", "idempotency-key");
    // The refused bundle did not replace the one the replay is compared with.
    await waitForTask(id);
    expect((await comparison(id)).identical).toBe(true);
  });
});

describe("POST /v1/replays refuses", () => {
  it("what is not a tar archive, or a corrupt one: 400 invalid_bundle naming the body", async () => {
    await expectError(await postBundle(encoder.encode('{"not": "a tar"}')), 400, "invalid_bundle", "body");
    await expectError(await postBundle(new Uint8Array(1024).fill(65)), 400, "invalid_bundle", "body");
    const bundle = await bundleOf((await plannedTask("bundle-corrupt")).id);
    // A download cut short ends inside a file.
    await expectError(await postBundle(bundle.subarray(0, 700)), 400, "invalid_bundle", "body");
    const flipped = bundle.slice();
    flipped[10] = (flipped[10] as number) ^ 0xff;
    await expectError(await postBundle(flipped), 400, "invalid_bundle", "body");
  });

  it("a bundle without its task, checkpoints or events, or of an unknown format: 422 bundle_not_replayable", async () => {
    const bundle = await bundleOf((await plannedTask("bundle-incomplete")).id);
    for (const file of ["task.json", "checkpoints.json", "events.jsonl"]) {
      await expectError(await postBundle(repack(bundle, { [file]: null })), 422, "bundle_not_replayable", file);
    }
    await expectError(
      await postBundle(repack(bundle, { "task.json": '{"id": "not-a-task"}' })),
      422,
      "bundle_not_replayable",
      "task.json",
    );
    const manifest = JSON.parse(unpack(bundle).get("bundle.json") as string) as Record<string, unknown>;
    expect(manifest).toMatchObject({ format: "outpost.run-bundle", version: 2 });
    await expectError(
      await postBundle(repack(bundle, { "bundle.json": JSON.stringify({ ...manifest, version: 9 }) })),
      422,
      "bundle_not_replayable",
      "bundle.json",
    );
  });

  it("a recording with no model call (409 replay_unavailable)", async () => {
    const bundle = await bundleOf((await plannedTask("bundle-no-call")).id);
    await expectError(await postBundle(repack(bundle, { "checkpoints.json": "[]" })), 409, "replay_unavailable");
  });

  it("a body over 32 MiB (413), another media type (415), and a key without the run scope (403)", async () => {
    await expectError(await postBundle(new Uint8Array(32 * 1024 * 1024 + 1)), 413, "payload_too_large");
    const bundle = await bundleOf((await plannedTask("bundle-refused")).id);
    await expectError(
      await postBundle(bundle, { type: "application/json" }),
      415,
      "unsupported_media_type",
      "content-type",
    );
    await expectError(await postBundle(bundle, { key: "test-read-key" }), 403, "insufficient_scope", "authorization");
  });
});
